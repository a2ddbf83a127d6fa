// Subnormal pivots (tenax/backend/tiny_pivots.hpp). OpenBLAS's getrf and the BLAS triangular
// solves of OpenBLAS and Eigen multiply by the reciprocal of a pivot, which overflows for a
// subnormal one: before the fix a finite, nonsingular system such as diag(1e-310, 1) got NaN from
// solve, inv, det, lu_factor and solve_triangular with info 0.
//
// The oracle is scaling by powers of two, which is exact: with D = diag(1, .., 2^-s, .., 1) (a
// subnormal 2^-s), D M has subnormal rows and M D subnormal columns, and
//   solve(D M, D B) = solve(M, B),  solve((M D)^T, D B) = solve(M^T, B),
//   det(D M) = det(M D) = 2^-s det(M),  LU(M D) = P L (U D).
// The scaled systems lose only the bits a subnormal cannot hold, so the results agree with the
// unscaled ones to the tolerance below.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "linalg/linalg_check_support.hpp"
#include "tenax/backend/cpu_provider.hpp"
#include "tenax/backend/generic_linalg.hpp"
#include "tenax/backend/tiny_pivots.hpp"

namespace tx = tenax;
namespace la = tenax::linalg;
namespace cpu = tenax::cpu;
using tx::real_t;
using tx::Tensor;
using namespace tenax::lcheck;

namespace {

template <class T>
using R = real_t<T>;

// s with 2^-s times an entry of size about 1 subnormal, keeping ~18 bits (f32) or ~47 (f64).
template <class T>
int tiny_exponent() {
  return 6 - std::numeric_limits<R<T>>::min_exponent;
}

template <class T>
double tolerance() {
  return std::is_same_v<R<T>, float> ? 2e-3 : 1e-9;
}

// max |got - want| / max |want|, NaN or inf anywhere counting as a failure (returns inf).
template <class T>
double relative_error(const std::vector<T>& got, const std::vector<T>& want) {
  double err = 0, scale = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = static_cast<double>(std::abs(got[i]));
    if (!std::isfinite(g)) return INFINITY;
    err = std::max(err, static_cast<double>(std::abs(got[i] - want[i])));
    scale = std::max(scale, static_cast<double>(std::abs(want[i])));
  }
  return err / scale;
}
template <class T>
double relative_error(const Tensor<T>& got, const Tensor<T>& want) {
  EXPECT_EQ(got.shape(), want.shape());
  return relative_error(got.contiguous().to_vector(), want.contiguous().to_vector());
}

// Rows (or columns) idx of the m x n column-major matrix a times 2^-s.
template <class T>
std::vector<T> shrink(std::vector<T> a, std::int64_t m, std::int64_t n, const std::vector<std::int64_t>& idx,
                      bool rows) {
  const R<T> t = std::ldexp(R<T>(1), -tiny_exponent<T>());
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t k : idx)
        if ((rows ? i : j) == k) a[static_cast<std::size_t>(i + j * m)] *= t;
  return a;
}
template <class T>
Tensor<T> shrink(const Tensor<T>& a, const std::vector<std::int64_t>& idx, bool rows) {
  const std::int64_t m = a.shape()[0], n = a.shape()[1];
  return Tensor<T>::from_col_major(a.shape(), shrink(a.contiguous().to_vector(), m, n, idx, rows));
}

// A k x k matrix whose both triangles are well conditioned (diagonal 2..3, off-diagonal ~0.3).
template <class T>
std::vector<T> triangles(std::int64_t k, std::uint64_t seed) {
  std::vector<T> a = Tensor<T>::randn({k, k}, seed).to_vector();
  for (std::int64_t j = 0; j < k; ++j)
    for (std::int64_t i = 0; i < k; ++i) {
      T& x = a[static_cast<std::size_t>(i + j * k)];
      x = i == j ? T(R<T>(2) + R<T>(0.25) * static_cast<R<T>>(i)) : x * R<T>(0.3);
    }
  return a;
}

template <class T>
class Subnormal : public ::testing::Test {};
TYPED_TEST_SUITE(Subnormal, AllTypes);

}  // namespace

// trsm, every side, triangle and op: op(A) has subnormal diagonal entries 1 and k-1 (A's rows are
// scaled when (side Left) == (op N), its columns otherwise), B the matching rows or columns.
TYPED_TEST(Subnormal, ProviderTrsmEveryCase) {
  using T = TypeParam;
  const std::int64_t k = 5, other = 3;
  const std::vector<std::int64_t> idx{1, k - 1};
  for (cpu::Side side : {cpu::Side::Left, cpu::Side::Right})
    for (cpu::Uplo uplo : {cpu::Uplo::Upper, cpu::Uplo::Lower})
      for (cpu::Trans trans : {cpu::Trans::N, cpu::Trans::T, cpu::Trans::C}) {
        const bool left = side == cpu::Side::Left;
        const std::int64_t m = left ? k : other, n = left ? other : k;
        const std::vector<T> a0 = triangles<T>(k, 3), b0 = Tensor<T>::randn({m, n}, 4).to_vector();
        const std::vector<T> a = shrink(a0, k, k, idx, left == (trans == cpu::Trans::N));
        std::vector<T> b = shrink(b0, m, n, idx, left), want = b0;
        const T alpha(R<T>(1.5));
        cpu::trsm<T>(side, uplo, trans, cpu::Diag::NonUnit, m, n, alpha, a.data(), k, b.data(), m);
        cpu::trsm<T>(side, uplo, trans, cpu::Diag::NonUnit, m, n, alpha, a0.data(), k, want.data(), m);
        EXPECT_LE(relative_error(b, want), tolerance<T>())
            << "side " << static_cast<char>(side) << " uplo " << static_cast<char>(uplo) << " op "
            << static_cast<char>(trans);
      }
}

// getrf_exact and getrs: M D (columns 1 and 4 subnormal) makes pivots 1 and 4 subnormal with
// normal multipliers below them, where OpenBLAS's getrf gave NaN. Its factors are P L (U D).
TYPED_TEST(Subnormal, ProviderGetrfAndGetrs) {
  using T = TypeParam;
  const std::int64_t n = 6;
  const std::vector<std::int64_t> idx{1, 4};
  const std::vector<T> m0 = general<T>(Kind::Cond2, n, n, 5).to_vector();
  const std::vector<T> a = shrink(m0, n, n, idx, false);
  std::vector<T> lu = a, lu0 = m0;
  std::vector<std::int32_t> piv(n), piv0(n);
  int reloads = 0;
  const int info = cpu::getrf_exact<T>(n, n, lu.data(), n, piv.data(), [&](T* dst) {
    ++reloads;
    std::copy(a.begin(), a.end(), dst);
  });
  EXPECT_EQ(info, 0);
  EXPECT_EQ(cpu::getrf<T>(n, n, lu0.data(), n, piv0.data()), 0);
  EXPECT_EQ(piv, piv0);
  std::vector<T> want_lu = shrink(lu0, n, n, idx, false);  // U D above the diagonal, L below
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = j + 1; i < n; ++i) want_lu[static_cast<std::size_t>(i + j * n)] = lu0[i + j * n];
  EXPECT_LE(relative_error(lu, want_lu), tolerance<T>()) << "reloads " << reloads;
  // A^T X = B and A^H X = B with B = D B0: X = M^-T B0, M^-H B0.
  const std::int64_t k = 3;
  const std::vector<T> b0 = Tensor<T>::randn({n, k}, 6).to_vector();
  for (cpu::Trans trans : {cpu::Trans::T, cpu::Trans::C}) {
    std::vector<T> x = shrink(b0, n, k, idx, true), want = b0;
    EXPECT_EQ(cpu::getrs<T>(trans, n, k, lu.data(), n, piv.data(), x.data(), n), 0);
    EXPECT_EQ(cpu::getrs<T>(trans, n, k, lu0.data(), n, piv0.data(), want.data(), n), 0);
    EXPECT_LE(relative_error(x, want), tolerance<T>()) << "op " << static_cast<char>(trans);
  }
}

// The linalg ops on D M (rows 1 and 4 subnormal: the last two pivots are subnormal) next to a
// normal matrix in the same batch, against the same ops on M.
TYPED_TEST(Subnormal, SolveLuSolveInvSolveTriangular) {
  using T = TypeParam;
  const std::int64_t n = 6, k = 2;
  const std::vector<std::int64_t> idx{1, 4};
  const Tensor<T> M = general<T>(Kind::Cond2, n, n, 7), N = general<T>(Kind::Cond2, n, n, 8);
  const Tensor<T> B0 = Tensor<T>::randn({n, k}, 9);
  const Tensor<T> A = tx::stack<T>({shrink(M, idx, true), N}, 2);
  const Tensor<T> B = tx::stack<T>({shrink(B0, idx, true), B0}, 2);
  const Tensor<T> want = tx::stack<T>({la::solve(M, B0), la::solve(N, B0)}, 2);

  auto [X, info] = la::solve_ex(A, B);
  EXPECT_EQ(info.to_vector(), (std::vector<std::int32_t>{0, 0}));
  EXPECT_LE(relative_error(X, want), tolerance<T>()) << "solve";

  auto [LU, piv] = la::lu_factor(A);
  EXPECT_LE(relative_error(la::lu_solve(LU, piv, B), want), tolerance<T>()) << "lu_factor + lu_solve";

  // inv(D M) = M^-1 D^-1: the columns other than 1 and 4 are M^-1's (those two overflow).
  const Tensor<T> Ai = la::inv(A.slice(2, 0, 1).squeeze(2)), Mi = la::inv(M);
  for (std::int64_t j : {0, 2, 3, 5})
    EXPECT_LE(relative_error(Ai.slice(1, j, j + 1), Mi.slice(1, j, j + 1)), tolerance<T>()) << "inv column " << j;

  // A subnormal diagonal in a triangular solve, through the op: D U0 X = D B0.
  const Tensor<T> U0 = Tensor<T>::from_col_major({n, n}, triangles<T>(n, 10));
  EXPECT_LE(relative_error(la::solve_triangular(shrink(U0, idx, true), shrink(B0, idx, true), true),
                           la::solve_triangular(U0, B0, true)),
            tolerance<T>())
      << "solve_triangular";
}

// det and slogdet of M D (one subnormal column: pivot 2 subnormal with multipliers below it) and
// D M (one subnormal row), batched with a normal matrix: 2^-s det(M).
TYPED_TEST(Subnormal, DetSlogdetLuFactor) {
  using T = TypeParam;
  const std::int64_t n = 5;
  const Tensor<T> M = general<T>(Kind::Cond2, n, n, 11), N = general<T>(Kind::Cond2, n, n, 12);
  const int s = tiny_exponent<T>();
  const T dm = la::det(M).item(), dn = la::det(N).item();
  auto [sm, lm] = la::slogdet(M);
  for (bool rows : {false, true}) {
    const Tensor<T> Ms = shrink(M, {2}, rows);
    const Tensor<T> A = tx::stack<T>({N, Ms}, 2);
    const std::string what = rows ? "subnormal row" : "subnormal column";
    const auto d = la::det(A).to_vector();
    EXPECT_LE(relative_error(std::vector<T>{d[0]}, std::vector<T>{dn}), 10 * std::numeric_limits<R<T>>::epsilon())
        << what;
    EXPECT_LE(relative_error(std::vector<T>{d[1]}, std::vector<T>{dm * std::ldexp(R<T>(1), -s)}), tolerance<T>())
        << what;
    auto [sign, logabs] = la::slogdet(Ms);
    EXPECT_LE(relative_error(sign, sm), tolerance<T>()) << what;
    EXPECT_NEAR(static_cast<double>(logabs.item()), static_cast<double>(lm.item()) - s * std::log(2.0),
                100 * tolerance<T>())
        << what;
    // The packed factors are finite, and P L U is the matrix.
    auto [P, L, U] = la::lu(Ms);
    EXPECT_LE(relative_error(tx::matmul(P, tx::matmul(L, U)), Ms), tolerance<T>()) << what;
    auto [LU, piv, info] = la::lu_factor_ex(Ms);
    EXPECT_EQ(info.item(), 0) << what;
    EXPECT_LE(relative_error(LU, LU), 0.0) << what << ": non-finite factors";
  }
}

// The generic factorization (backend/generic_linalg.hpp: what runs on the GPU, run here on the
// CPU) reloads and refactors the same way: bit-identical factors to the CPU's fused kernel.
TYPED_TEST(Subnormal, GenericForwardAgrees) {
  using T = TypeParam;
  const std::int64_t n = 5;
  const Tensor<T> A =
      tx::stack<T>({general<T>(Kind::Cond2, n, n, 13), shrink(general<T>(Kind::Cond2, n, n, 14), {0, 3}, false)}, 2);
  const auto g = tx::detail::generic::lu_factor(A), w = tx::ops::LuFactor{}.forward(A);
  EXPECT_EQ(std::get<0>(g).to_vector(), std::get<0>(w).to_vector());
  EXPECT_EQ(std::get<1>(g).to_vector(), std::get<1>(w).to_vector());
  EXPECT_EQ(std::get<2>(g).to_vector(), std::get<2>(w).to_vector());
  EXPECT_LE(relative_error(std::get<0>(w), std::get<0>(w)), 0.0) << "non-finite factors";
}

// Where part of the solution overflows (an exact 1 / subnormal), the other unknowns stay exact:
// no inf * 0 or inf - inf inside the solves (the unknowns are scaled, not the right-hand side).
TYPED_TEST(Subnormal, OverflowingUnknownsLeaveTheOthersExact) {
  using T = TypeParam;
  const std::int64_t n = 5;
  const std::vector<std::int64_t> idx{2};
  // inv(M D) = D^-1 M^-1: row 2 overflows, the other rows are M^-1's.
  const Tensor<T> M = general<T>(Kind::Cond2, n, n, 15);
  const Tensor<T> Ai = la::inv(shrink(M, idx, false)), Mi = la::inv(M);
  for (std::int64_t i : {0, 1, 3, 4})
    EXPECT_LE(relative_error(Ai.slice(0, i, i + 1), Mi.slice(0, i, i + 1)), tolerance<T>()) << "inv row " << i;
  for (const T& x : Ai.slice(0, 2, 3).contiguous().to_vector())
    EXPECT_FALSE(std::isnan(static_cast<double>(std::abs(x)))) << "inv row 2";
  // diag(t, 1) with op T and C: [[1/t, 0], [0, 1]], 1/t overflowing.
  const R<T> t = std::ldexp(R<T>(1), -tiny_exponent<T>());
  const auto D = Tensor<T>::from_col_major({2, 2}, {T(t), T(0), T(0), T(1)});
  const auto I = Tensor<T>::eye(2);
  const std::vector<T> want{T(INFINITY), T(0), T(0), T(1)};
  auto [LU, piv] = la::lu_factor(D);
  for (auto op : {la::Trans::N, la::Trans::T, la::Trans::C}) {
    EXPECT_EQ(la::lu_solve(LU, piv, I, op).to_vector(), want);
    EXPECT_EQ(la::solve_triangular(D, I, true, true, false, op).to_vector(), want);
    EXPECT_EQ(la::solve_triangular(D, I, false, false, false, op).to_vector(), want);
  }
}

// det's derivatives at a subnormal pivot, where A^-1 overflows but det A^-1 does not.
TEST(SubnormalExact, DetDerivatives) {
  using TD = Tensor<double>;
  const auto f = [](const TD& a) { return la::det(a); };
  const auto A = TD::from_col_major({2, 2}, {1e-310, 0, 0, 1});
  EXPECT_EQ(tx::grad(f, A).to_vector(), (std::vector<double>{1, 0, 0, 1e-310}));
  EXPECT_EQ(tx::jvp(f, A, TD::from_col_major({2, 2}, {1, 0, 0, 0})).second.item(), 1.0);
  EXPECT_EQ(tx::jvp(f, A, TD::from_col_major({2, 2}, {0, 0, 0, 1})).second.item(), 1e-310);
  // [[1e-310, 1], [0, 1]]: gradient [[1, 0], [-1, 1e-310]].
  const auto B = TD::from_col_major({2, 2}, {1e-310, 0, 1, 1});
  EXPECT_EQ(tx::grad(f, B).to_vector(), (std::vector<double>{1, -1, 0, 1e-310}));
  // Second order: d^2 det / da00 da11 = 1.
  EXPECT_EQ(tx::hvp(f, A, TD::from_col_major({2, 2}, {0, 0, 0, 1})).to_vector(), (std::vector<double>{1, 0, 0, 0}));
  // slogdet's gradient A^-H = diag(1e310, 1): inf where the exact value overflows, exact elsewhere.
  const auto logabs = [](const TD& a) { return std::get<1>(la::slogdet(a)); };
  EXPECT_EQ(tx::grad(logabs, A).to_vector(), (std::vector<double>{INFINITY, 0, 0, 1}));
}

// An equation whose entries are all tiny keeps its precision (the pivot's row is raised too, not
// only its column): [[3s, 5s], [0, 3]] x = [4s, 1], s = 2^-1062, is x = (7/9, 1/3).
TEST(SubnormalExact, TinyEquationKeepsItsPrecision) {
  const double s = std::ldexp(1.0, -1062);
  const auto A = Tensor<double>::from_col_major({2, 2}, {3 * s, 0, 5 * s, 3});
  const auto b = Tensor<double>::from_col_major({2, 1}, {4 * s, 1});
  for (const auto& x : {la::solve_triangular(A, b, true), la::solve(A, b)}) {
    EXPECT_NEAR(x.to_vector()[0], 7.0 / 9.0, 1e-15);
    EXPECT_NEAR(x.to_vector()[1], 1.0 / 3.0, 1e-15);
  }
}

// det's jvp and gradient at matrices of extreme (normal) scale, where det dA or gdet det would
// overflow or underflow: det tr(A^-1 dA) with A = k [[1.5, .25], [-.5, 1.25]] is linear in dA.
TEST(SubnormalExact, DetDerivativesAtExtremeScales) {
  using TD = Tensor<double>;
  const auto f = [](const TD& a) { return la::det(a); };
  for (auto [k, t] : {std::pair{1e150, 1e10}, std::pair{1e100, 1e120}, std::pair{1e-150, 1e-30}}) {
    const auto A = TD::from_col_major({2, 2}, {1.5 * k, -.5 * k, .25 * k, 1.25 * k});
    const auto dA = TD::from_col_major({2, 2}, {.3 * t, -.7 * t, .2 * t, .9 * t});
    // d det = a11 da00 - a01 da10 - a10 da01 + a00 da11
    const double want = 1.25 * k * .3 * t - .25 * k * -.7 * t - -.5 * k * .2 * t + 1.5 * k * .9 * t;
    EXPECT_NEAR(tx::jvp(f, A, dA).second.item() / want, 1.0, 1e-14) << "k " << k << " t " << t;
  }
  const double k = 1e-150;
  const auto A = TD::from_col_major({2, 2}, {1.5 * k, -.5 * k, .25 * k, 1.25 * k});
  const auto g = tx::grad(f, A).to_vector();  // the cofactors: (a11, -a01, -a10, a00)
  const std::vector<double> want{1.25 * k, -.25 * k, .5 * k, 1.5 * k};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(g[i] / want[i], 1.0, 1e-14) << i;
}

// The solve rules where the solution overflows (tenax/ops/linalg/overflow.hpp): at A = diag(t, 1),
// t subnormal, X = A^-1 B holds inf where the exact entry is 1/t, and the plain products
// gB X^H and dA X met inf * 0 = NaN in entries whose exact value is 0. For f = inv(A)[1, 1] the
// exact gradient is -e1 e1^T, the JVP in the direction e1 e1^T -e1 e1^T, the Hessian-vector
// product 2 e1 e1^T; the same through solve(A, I) and solve_triangular (left and right, either
// triangle), for every dtype, and for a batch holding a regular matrix too.
TYPED_TEST(Subnormal, SolveRulesPastOverflow) {
  using T = TypeParam;
  using TT = Tensor<T>;
  const T t = T(std::numeric_limits<R<T>>::min() / R<T>(64));  // 1 / t overflows
  const TT A = TT::from_col_major({2, 2}, {t, T(0), T(0), T(1)});
  const TT E = TT::from_col_major({2, 2}, {T(0), T(0), T(0), T(1)});
  const std::vector<T> minus_e{T(0), T(0), T(0), T(-1)}, two_e{T(0), T(0), T(0), T(2)};
  using F = std::function<TT(const TT&)>;
  const TT I = TT::eye(2, 2);
  const std::vector<std::pair<std::string, F>> fs{
      {"inv", [](const TT& a) { return la::inv(a); }},
      {"solve", [&](const TT& a) { return la::solve(a, I); }},
      {"solve right", [&](const TT& a) { return la::solve(a, I, false); }},
      {"solve_triangular upper", [&](const TT& a) { return la::solve_triangular(a, I, true); }},
      {"solve_triangular lower", [&](const TT& a) { return la::solve_triangular(a, I, false); }},
      {"solve_triangular right", [&](const TT& a) { return la::solve_triangular(a, I, true, false); }},
  };
  for (const auto& case_ : fs) {
    const std::string& name = case_.first;
    const F fn = case_.second;  // (a copy: clang 14 lambdas cannot capture structured bindings)
    const auto f = [&](const TT& a) { return tx::real(tx::sum(tx::mul(fn(a), E))); };
    EXPECT_EQ(tx::grad(f, A).to_vector(), minus_e) << name;
    EXPECT_EQ(tx::jvp(fn, A, E).second.to_vector(), minus_e) << name;
    EXPECT_EQ(tx::hvp(f, A, E).to_vector(), two_e) << name;
  }
  // Reverse over forward: the tangent direction depends on the variable (d/ds of -s is -1).
  const auto ds = [&](const TT& s) {
    return tx::real(tx::sum(tx::mul(tx::jvp([](const TT& a) { return la::inv(a); }, A, tx::mul(E, s)).second, E)));
  };
  EXPECT_EQ(tx::grad(ds, TT::scalar(T(1))).item(), T(-1));
  // A batch: the regular matrix's gradient is the plain rule's to rounding.
  const TT M = TT::from_col_major({2, 2}, {T(2), T(1), T(.5), T(3)});
  const TT batch = tx::stack(std::vector<TT>{M, A}, 2);
  const auto f = [&](const TT& a) { return tx::real(tx::sum(tx::mul(la::inv(a), E))); };
  const TT g = tx::grad(f, batch);
  EXPECT_EQ(g.slice(2, 1, 2).to_vector(), minus_e);
  EXPECT_LE(relative_error(g.slice(2, 0, 1).squeeze(2), tx::grad(f, M)), tolerance<T>());
}

// The case from the report, exactly: diag(1e-310, 1).
TEST(SubnormalExact, DiagonalF64) {
  const auto A = Tensor<double>::from_col_major({2, 2}, {1e-310, 0, 0, 1});
  EXPECT_EQ(la::det(A).item(), 1e-310);
  EXPECT_EQ(la::solve(A, Tensor<double>::from_col_major({2, 1}, {1e-310, 2})).to_vector(), (std::vector<double>{1, 2}));
  EXPECT_EQ(la::solve_triangular(A, Tensor<double>::from_col_major({2, 1}, {3e-310, 2}), true).to_vector(),
            (std::vector<double>{3, 2}));
  const auto Ai = la::inv(A).to_vector();  // 1e310 overflows: inf, not NaN
  EXPECT_EQ(Ai, (std::vector<double>{INFINITY, 0, 0, 1}));
  auto [LU, piv] = la::lu_factor(A);
  EXPECT_EQ(LU.to_vector(), (std::vector<double>{1e-310, 0, 0, 1}));
}
