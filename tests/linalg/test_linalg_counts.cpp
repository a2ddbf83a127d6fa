// Provider call counts for a forward and a backward pass ("never re-factorize in a backward pass
// what the forward computed"): the rules reuse the saved factors, so a forward+backward pass runs the
// factorization exactly once. Counts are per matrix. Each test asserts the exact number of every
// LAPACK routine (gemm and trsm are not counted here: they are the rules' arithmetic).
#include <gtest/gtest.h>

#include <complex>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "linalg/linalg_check_support.hpp"

namespace tx = tenax;
namespace la = tenax::linalg;
using tx::is_complex_v;
using tx::real_t;
using tx::Shape;
using tx::Tensor;
using tx::cpu::Routine;
using namespace tenax::lcheck;

namespace {

// Expected counts of the factorization and solve routines; unlisted ones must be zero.
using Counts = std::map<Routine, std::int64_t>;

void expect_counts(const Counts& want, const std::string& what) {
  for (Routine r : {Routine::getrf, Routine::getrs, Routine::potrf, Routine::geqrf, Routine::orgqr, Routine::syevd,
                    Routine::gesdd, Routine::geev}) {
    const auto it = want.find(r);
    EXPECT_EQ(tx::cpu::provider_calls(r), it == want.end() ? 0 : it->second)
        << what << ": calls of " << tx::cpu::routine_name(r);
  }
}

template <class T>
Tensor<T> weights(const Shape& s, std::uint64_t seed) {  // random cotangent weights, never all-ones
  return Tensor<T>::randn(s, seed);
}

template <class T>
class Counts_ : public ::testing::Test {};
using CountTypes = ::testing::Types<double, std::complex<double>, float>;
TYPED_TEST_SUITE(Counts_, CountTypes);

}  // namespace

TYPED_TEST(Counts_, Solve) {
  using T = TypeParam;
  const std::int64_t n = 5;
  const Tensor<T> A = general<T>(Kind::Cond2, n, n, 1).requires_grad();
  const Tensor<T> B = Tensor<T>::randn({n, 3}, 2).requires_grad();
  const Tensor<T> W = weights<T>({n, 3}, 3);
  tx::cpu::reset_provider_calls();
  const Tensor<T> X = la::solve(A, B);
  expect_counts({{Routine::getrf, 1}, {Routine::getrs, 1}}, "solve forward");
  // At n <= kSolveKernelMaxN the backward's solve is the small kernel (ops/linalg/solve_tangent.hpp),
  // no provider call; beyond it, one getrs on the saved factors.
  re_inner(W, X).backward();
  expect_counts({{Routine::getrf, 1}, {Routine::getrs, 1}}, "solve forward+backward");
  EXPECT_TRUE(A.grad().defined() && B.grad().defined());
  const std::int64_t big = tx::ops::kSolveKernelMaxN + 1;
  const Tensor<T> Ab = general<T>(Kind::Cond2, big, big, 9).requires_grad();
  tx::cpu::reset_provider_calls();
  re_inner(weights<T>({big, 3}, 10), la::solve(Ab, Tensor<T>::randn({big, 3}, 11))).backward();
  expect_counts({{Routine::getrf, 1}, {Routine::getrs, 2}}, "solve forward+backward, n = 17");

  // Only A recorded; a vector right-hand side; the right side X A = B.
  const Tensor<T> A2 = general<T>(Kind::Cond2, n, n, 4).requires_grad();
  tx::cpu::reset_provider_calls();
  re_inner(weights<T>({n}, 5), la::solve(A2, Tensor<T>::randn({n}, 6))).backward();
  expect_counts({{Routine::getrf, 1}, {Routine::getrs, 1}}, "solve(A, vector) forward+backward");
  tx::cpu::reset_provider_calls();
  re_inner(weights<T>({3, n}, 7), la::solve(A2, Tensor<T>::randn({3, n}, 8), false)).backward();
  expect_counts({{Routine::getrf, 1}, {Routine::getrs, 1}}, "solve(A, B, right) forward+backward");
}

TYPED_TEST(Counts_, SolveBatchedCountsPerMatrix) {
  using T = TypeParam;
  const std::int64_t n = 4;
  const Tensor<T> A =
      tx::stack<T>(
          {general<T>(Kind::Cond2, n, n, 1), general<T>(Kind::Cond2, n, n, 2), general<T>(Kind::Cond2, n, n, 3)}, 2)
          .requires_grad();
  const Tensor<T> B = Tensor<T>::randn({n, 2, 3}, 4).requires_grad();
  tx::cpu::reset_provider_calls();
  re_inner(weights<T>({n, 2, 3}, 5), la::solve(A, B)).backward();
  expect_counts({{Routine::getrf, 3}, {Routine::getrs, 3}}, "batched solve forward+backward (the backward's kernel)");
}

TYPED_TEST(Counts_, SolveOneMatrixManyRhsFactorizesOnce) {
  using T = TypeParam;
  const std::int64_t n = 4;
  const Tensor<T> A = general<T>(Kind::Cond2, n, n, 1).requires_grad();
  const Tensor<T> B = Tensor<T>::randn({n, 2, 5}, 4).requires_grad();
  tx::cpu::reset_provider_calls();
  re_inner(weights<T>({n, 2, 5}, 5), la::solve(A, B)).backward();
  expect_counts({{Routine::getrf, 1}, {Routine::getrs, 1}},
                "solve(A, batched B) forward+backward (the backward's kernel)");
}

TYPED_TEST(Counts_, Inv) {
  using T = TypeParam;
  const std::int64_t n = 5;
  const Tensor<T> A = general<T>(Kind::Cond2, n, n, 1).requires_grad();
  tx::cpu::reset_provider_calls();
  const Tensor<T> Ai = la::inv(A);
  expect_counts({{Routine::getrf, 1}, {Routine::getrs, 1}}, "inv forward");
  re_inner(weights<T>({n, n}, 2), Ai).backward();
  expect_counts({{Routine::getrf, 1}, {Routine::getrs, 1}}, "inv forward+backward (the backward's kernel)");
}

TYPED_TEST(Counts_, DetAndSlogdet) {
  using T = TypeParam;
  const std::int64_t n = 5;
  const Tensor<T> A = general<T>(Kind::Cond2, n, n, 1).requires_grad();
  tx::cpu::reset_provider_calls();
  auto [s, l] = la::slogdet(A);
  expect_counts({{Routine::getrf, 1}}, "slogdet forward");
  l.backward();
  expect_counts({{Routine::getrf, 1}, {Routine::getrs, 1}}, "slogdet forward+backward (log|det|)");
  if constexpr (is_complex_v<T>) {  // through the sign too: still one getrs for A^-H
    const Tensor<T> A2 = general<T>(Kind::Cond2, n, n, 2).requires_grad();
    tx::cpu::reset_provider_calls();
    auto [s2, l2] = la::slogdet(A2);
    add(re_inner(Tensor<T>::scalar(T(0.3, -0.7)), s2), l2).backward();
    expect_counts({{Routine::getrf, 1}, {Routine::getrs, 1}}, "slogdet forward+backward (sign and log|det|)");
  }
  const Tensor<T> A3 = general<T>(Kind::Cond2, n, n, 3).requires_grad();
  tx::cpu::reset_provider_calls();
  const Tensor<T> d = la::det(A3);
  expect_counts({{Routine::getrf, 1}}, "det forward");
  re_inner(Tensor<T>::scalar(T(0.7)), d).backward();
  expect_counts({{Routine::getrf, 1}, {Routine::getrs, 1}}, "det forward+backward");
}

// Second derivatives through solve, inv, det and slogdet reuse the forward's one factorization:
// the rules' solves on the saved LU are themselves differentiable in A (ops::SavedLuSolve), so an
// HVP (forward over reverse), a gradient of a gradient (reverse over reverse) and a gradient of a
// JVP (reverse over forward) each run getrf once per matrix, and no other factorization.
TYPED_TEST(Counts_, SecondOrderFactorizesOnce) {
  using T = TypeParam;
  using R = real_t<T>;
  const std::int64_t n = 5;
  const Tensor<T> A = general<T>(Kind::Cond2, n, n, 1), V = Tensor<T>::randn({n, n}, 2);
  const Tensor<T> B = Tensor<T>::randn({n, 2}, 3), W = weights<T>({n, n}, 4), Wb = weights<T>({n, 2}, 5);
  const std::vector<std::pair<std::string, std::function<Tensor<R>(const Tensor<T>&)>>> cases = {
      {"solve", [&](const Tensor<T>& a) { return re_inner(Wb, la::solve(a, B)); }},
      {"inv", [&](const Tensor<T>& a) { return re_inner(W, la::inv(a)); }},
      {"det", [&](const Tensor<T>& a) { return re_inner(Tensor<T>::scalar(T(0.7)), la::det(a)); }},
      {"slogdet", [&](const Tensor<T>& a) { return std::get<1>(la::slogdet(a)); }},
  };
  for (const auto& c : cases) {
    const auto& f = c.second;
    auto expect_one_getrf = [&](const std::string& how) {
      for (Routine r : {Routine::potrf, Routine::geqrf, Routine::orgqr, Routine::syevd, Routine::gesdd})
        EXPECT_EQ(tx::cpu::provider_calls(r), 0) << c.first << " " << how << ": " << tx::cpu::routine_name(r);
      EXPECT_EQ(tx::cpu::provider_calls(Routine::getrf), 1) << c.first << " " << how << ": calls of getrf";
    };
    tx::cpu::reset_provider_calls();
    const Tensor<T> hv = tx::hvp(f, A, V);
    expect_one_getrf("hvp (forward over reverse)");
    tx::cpu::reset_provider_calls();
    const Tensor<T> gg = tx::grad([&](const Tensor<T>& a) { return re_inner(V, tx::grad(f, a)); }, A);
    expect_one_getrf("grad of grad");
    tx::cpu::reset_provider_calls();
    const Tensor<T> gj = tx::grad([&](const Tensor<T>& a) { return tx::jvp(f, a, V).second; }, A);
    expect_one_getrf("grad of jvp");
    // The three are the same Hessian applied to V (H symmetric; for complex A in the real
    // Wirtinger sense of grad).
    ASSERT_TRUE(hv.defined() && gg.defined() && gj.defined());
    const double scale = 1 + normf(to_mat(hv)), tol = 1e3 * eps<T>();
    EXPECT_LT(normf(to_mat(gg) - to_mat(hv)) / scale, tol) << c.first << ": grad of grad vs hvp";
    EXPECT_LT(normf(to_mat(gj) - to_mat(hv)) / scale, tol) << c.first << ": grad of jvp vs hvp";
  }
}

TYPED_TEST(Counts_, LuFactorAndLu) {
  using T = TypeParam;
  for (const Shape& s : {Shape{5, 5}, Shape{7, 4}, Shape{4, 7}}) {
    SCOPED_TRACE(tx::to_string(s));
    const Tensor<T> A = general<T>(Kind::Cond2, s[0], s[1], 1).requires_grad();
    tx::cpu::reset_provider_calls();
    auto [P, L, U] = la::lu(A);
    expect_counts({{Routine::getrf, 1}}, "lu forward");
    add(re_inner(weights<T>(L.shape(), 2), L), re_inner(weights<T>(U.shape(), 3), U)).backward();
    expect_counts({{Routine::getrf, 1}}, "lu forward+backward");
  }
  // lu_factor + lu_solve: the factor once, one getrs forward and one backward.
  const Tensor<T> A = general<T>(Kind::Cond2, 5, 5, 4).requires_grad();
  const Tensor<T> B = Tensor<T>::randn({5, 2}, 5).requires_grad();
  tx::cpu::reset_provider_calls();
  auto [LU, piv] = la::lu_factor(A);
  re_inner(weights<T>({5, 2}, 6), la::lu_solve(LU, piv, B)).backward();
  expect_counts({{Routine::getrf, 1}, {Routine::getrs, 2}}, "lu_factor + lu_solve forward+backward");
}

TYPED_TEST(Counts_, Cholesky) {
  using T = TypeParam;
  const std::int64_t n = 5;
  for (bool upper : {false, true}) {
    const Tensor<T> A = hermitian_of<T>(Kind::Cond2, n, 1, true).requires_grad();
    tx::cpu::reset_provider_calls();
    const Tensor<T> L = la::cholesky(A, upper);
    expect_counts({{Routine::potrf, 1}}, "cholesky forward");
    re_inner(weights<T>({n, n}, 2), L).backward();
    expect_counts({{Routine::potrf, 1}}, upper ? "cholesky(upper) forward+backward" : "cholesky forward+backward");
  }
}

TYPED_TEST(Counts_, Qr) {
  using T = TypeParam;
  for (const Shape& s : {Shape{5, 5}, Shape{7, 4}, Shape{4, 7}}) {
    SCOPED_TRACE(tx::to_string(s));
    const Tensor<T> A = general<T>(Kind::Cond2, s[0], s[1], 1).requires_grad();
    tx::cpu::reset_provider_calls();
    auto [Q, R] = la::qr(A);
    expect_counts({{Routine::geqrf, 1}, {Routine::orgqr, 1}}, "qr forward");
    add(re_inner(weights<T>(Q.shape(), 2), Q), re_inner(weights<T>(R.shape(), 3), R)).backward();
    expect_counts({{Routine::geqrf, 1}, {Routine::orgqr, 1}}, "qr forward+backward");
    // R only: no orgqr without a gradient; with one, Q is formed once for the rule.
    tx::cpu::reset_provider_calls();
    la::qr(A.detach(), la::QrMode::R);
    expect_counts({{Routine::geqrf, 1}}, "qr(R) forward without grad");
    tx::cpu::reset_provider_calls();
    auto [Q2, R2] = la::qr(A, la::QrMode::R);
    re_inner(weights<T>(R2.shape(), 4), R2).backward();
    expect_counts({{Routine::geqrf, 1}, {Routine::orgqr, 1}}, "qr(R) forward+backward");
  }
}

TYPED_TEST(Counts_, EighAndEigvalsh) {
  using T = TypeParam;
  const std::int64_t n = 5;
  const Tensor<T> A = hermitian<T>({-1.0, 0.5, 1.0, 2.0, 3.5}, 1).requires_grad();
  tx::cpu::reset_provider_calls();
  const auto w = la::eigvalsh(A);
  expect_counts({{Routine::syevd, 1}}, "eigvalsh forward (recorded)");
  re_inner(weights<real_t<T>>({n}, 2), w).backward();
  expect_counts({{Routine::syevd, 1}}, "eigvalsh forward+backward");
  tx::cpu::reset_provider_calls();
  la::eigvalsh(A.detach());
  expect_counts({{Routine::syevd, 1}}, "eigvalsh without grad");
  // eigh through eigenvalues and a gauge-invariant function of the vectors (|V|^2).
  tx::cpu::reset_provider_calls();
  auto [w2, V] = la::eigh(A);
  const auto absV2 = real(mul(conj(V), V));
  add(re_inner(weights<real_t<T>>({n}, 3), w2), re_inner(weights<real_t<T>>({n, n}, 4), absV2)).backward();
  expect_counts({{Routine::syevd, 1}}, "eigh forward+backward");
}

TYPED_TEST(Counts_, SvdAndSvdvals) {
  using T = TypeParam;
  for (const Shape& s : {Shape{5, 5}, Shape{7, 4}, Shape{4, 7}}) {
    SCOPED_TRACE(tx::to_string(s));
    const std::int64_t k = std::min(s[0], s[1]);
    const Tensor<T> A = general<T>(Kind::Cond2, s[0], s[1], 1).requires_grad();
    tx::cpu::reset_provider_calls();
    const auto S = la::svdvals(A);
    expect_counts({{Routine::gesdd, 1}}, "svdvals forward (recorded)");
    re_inner(weights<real_t<T>>({k}, 2), S).backward();
    expect_counts({{Routine::gesdd, 1}}, "svdvals forward+backward");
    tx::cpu::reset_provider_calls();
    la::svdvals(A.detach());
    expect_counts({{Routine::gesdd, 1}}, "svdvals without grad");
    // svd through a gauge-invariant function of the vectors (U diag(c) V^H).
    tx::cpu::reset_provider_calls();
    auto [U, S2, Vh] = la::svd(A);
    const auto c = Tensor<T>::randn({1, k}, 3);
    re_inner(weights<T>({s[0], s[1]}, 4), matmul(mul(U, c), Vh)).backward();
    expect_counts({{Routine::gesdd, 1}}, "svd forward+backward");
  }
}

// Forward mode reuses the saved factors too.
// The second wave: pinv and lstsq factorize once (one SVD; hermitian: one eigendecomposition) in a
// forward and backward pass; matrix_exp and matrix_power solve once per exponential or inverse.
TYPED_TEST(Counts_, PinvLstsqMatrixExp) {
  using T = TypeParam;
  for (const Shape& s : {Shape{5, 5}, Shape{7, 4}, Shape{4, 7}}) {
    SCOPED_TRACE(tx::to_string(s));
    const Tensor<T> A = general<T>(Kind::Cond2, s[0], s[1], 1).requires_grad();
    tx::cpu::reset_provider_calls();
    re_inner(weights<T>({s[1], s[0]}, 2), la::pinv(A)).backward();
    expect_counts({{Routine::gesdd, 1}}, "pinv forward+backward");
    const Tensor<T> B = Tensor<T>::randn({s[0], 2}, 3).requires_grad();
    tx::cpu::reset_provider_calls();
    const auto r = la::lstsq(A, B);
    re_inner(weights<T>({s[1], 2}, 4), r.solution).backward();
    expect_counts({{Routine::gesdd, 1}}, "lstsq forward+backward");
    tx::cpu::reset_provider_calls();
    (void)la::matrix_rank(A);
    expect_counts({{Routine::gesdd, 1}}, "matrix_rank");
  }
  const std::int64_t n = 4;
  const Tensor<T> H = hermitian<T>({2.0, -1.0, 0.5, 3.0}, 5).requires_grad();
  tx::cpu::reset_provider_calls();
  re_inner(weights<T>({n, n}, 6), la::pinv(H, std::nullopt, std::nullopt, true)).backward();
  expect_counts({{Routine::syevd, 1}}, "hermitian pinv forward+backward");
  const Tensor<T> E = mul(Tensor<T>::randn({n, n}, 7), T(0.1)).requires_grad();
  tx::cpu::reset_provider_calls();
  (void)la::matrix_exp(E);
  expect_counts({{Routine::getrf, 1}, {Routine::getrs, 1}}, "matrix_exp forward: one solve");
  tx::cpu::reset_provider_calls();
  re_inner(weights<T>({n, n}, 11), la::matrix_exp(E)).backward();
  // The Frechet derivative's algorithm: one LU for its two solves (getrs for R and for L).
  expect_counts({{Routine::getrf, 2}, {Routine::getrs, 3}}, "matrix_exp forward+backward");
  const Tensor<T> G = general<T>(Kind::Cond2, n, n, 8);
  tx::cpu::reset_provider_calls();
  (void)la::matrix_power(G, -3);
  expect_counts({{Routine::getrf, 1}, {Routine::getrs, 1}}, "matrix_power(-3): one inverse");
}

// eig: one geev in the forward; its backward solves with V^H (one LU of V: not computed by the
// forward, so nothing is factorized twice).
TYPED_TEST(Counts_, Eig) {
  using T = TypeParam;
  const std::int64_t n = 4;
  const Tensor<T> A = general<T>(Kind::Cond2, n, n, 9).requires_grad();
  tx::cpu::reset_provider_calls();
  const auto w = la::eigvals(A);
  expect_counts({{Routine::geev, 1}}, "eigvals forward (recorded)");
  tx::real(tx::sum(tx::mul(w, Tensor<std::complex<real_t<T>>>::randn({n}, 10)))).backward();
  expect_counts({{Routine::geev, 1}, {Routine::getrf, 1}, {Routine::getrs, 1}}, "eigvals forward+backward");
  tx::cpu::reset_provider_calls();
  (void)la::eigvals(A.detach());
  expect_counts({{Routine::geev, 1}}, "eigvals without grad");
}

TYPED_TEST(Counts_, JvpReusesFactors) {
  using T = TypeParam;
  const std::int64_t n = 5;
  const Tensor<T> A = general<T>(Kind::Cond2, n, n, 1), dA = Tensor<T>::randn({n, n}, 2);
  const Tensor<T> B = Tensor<T>::randn({n, 2}, 3);
  tx::cpu::reset_provider_calls();
  tx::jvp([&](const Tensor<T>& a) { return la::solve(a, B); }, A, dA);
  expect_counts({{Routine::getrf, 1}, {Routine::getrs, 1}}, "solve jvp (the tangent's small kernel)");
  tx::cpu::reset_provider_calls();
  tx::jvp([&](const Tensor<T>& a) { return la::slogdet(a).second; }, A, dA);
  expect_counts({{Routine::getrf, 1}, {Routine::getrs, 1}}, "slogdet jvp");
  tx::cpu::reset_provider_calls();
  tx::jvp([&](const Tensor<T>& a) { return la::qr(a).second; }, A, dA);
  expect_counts({{Routine::geqrf, 1}, {Routine::orgqr, 1}}, "qr jvp");
  const Tensor<T> H = hermitian_of<T>(Kind::Cond2, n, 4, true), dH = hermitize(Tensor<T>::randn({n, n}, 5));
  tx::cpu::reset_provider_calls();
  tx::jvp([&](const Tensor<T>& a) { return la::cholesky(a); }, H, dH);
  expect_counts({{Routine::potrf, 1}}, "cholesky jvp");
  tx::cpu::reset_provider_calls();
  tx::jvp([&](const Tensor<T>& a) { return la::eigvalsh(a); }, H, dH);
  expect_counts({{Routine::syevd, 1}}, "eigvalsh jvp");
  tx::cpu::reset_provider_calls();
  tx::jvp([&](const Tensor<T>& a) { return la::svdvals(a); }, A, dA);
  expect_counts({{Routine::gesdd, 1}}, "svdvals jvp");
}
