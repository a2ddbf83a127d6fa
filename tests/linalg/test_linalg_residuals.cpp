// Backward-error residuals of the decompositions (TESTING.md "Decompositions: residual checks"),
// LAPACK's ratios and thresholds, for f32/f64/c64/c128 on LAPACK's matrix types: condition 2,
// sqrt(0.1/eps) and 0.1/eps, diagonal, triangular, scaled near underflow and near overflow, and
// rank-deficient (which must factor or report, never crash). Norms are 1-norms computed in wider
// precision; eps is numeric_limits<real>::epsilon().
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstdio>
#include <map>
#include <sstream>
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
using namespace tenax::lcheck;

namespace {

struct Dims {
  std::int64_t m, n;
  const char* name;
};
const std::vector<Dims>& shapes() {
  static const std::vector<Dims> v{{10, 10, "square"}, {14, 8, "tall"}, {8, 14, "wide"}};
  return v;
}

std::string trace(const char* what, Kind k, const Dims& d, const std::string& extra = "") {
  std::ostringstream o;
  o << what << " on " << kind_name(k) << ", " << d.name << " " << d.m << " x " << d.n << extra;
  return o.str();
}

// Entries of x strictly below (lower = true: above) diagonal offset 0 that are not exactly zero.
template <class W>
int off_triangle_nonzeros(const Mat<W>& x, bool below) {
  int bad = 0;
  for (std::int64_t j = 0; j < x.n; ++j)
    for (std::int64_t i = 0; i < x.m; ++i)
      if ((below ? i > j : i < j) && x(i, j) != W(0)) ++bad;
  return bad;
}

// B = A X for a random X, formed in the generation precision from the (rounded) A and rounded to T:
// solutions of size ~1 whatever the scale of A.
template <class T>
Tensor<T> rhs_for(const Tensor<T>& A, std::int64_t k, std::uint64_t seed) {
  using G = gen_t<T>;
  Tensor<G> Ag;
  if constexpr (std::is_same_v<T, G>)
    Ag = A;
  else
    Ag = cast<G>(A);
  return round_to<T>(matmul(Ag, Tensor<G>::randn({A.shape()[0], k}, seed)));
}

// LAPACK's xget02: max over columns j of ||b_j - A x_j||_1 / (||A||_1 ||x_j||_1 eps).
template <class T, class W>
double solve_ratio(const Mat<W>& a, const Mat<W>& x, const Mat<W>& b) {
  const Mat<W> r = b - a * x;
  const double an = norm1(a);
  double worst = 0;
  for (std::int64_t j = 0; j < x.n; ++j) {
    Mat<W> rj(r.m, 1), xj(x.m, 1);
    for (std::int64_t i = 0; i < r.m; ++i) rj(i, 0) = r(i, j);
    for (std::int64_t i = 0; i < x.m; ++i) xj(i, 0) = x(i, j);
    worst = std::max(worst, norm1(rj) / (an * norm1(xj) * eps<T>()));
  }
  return worst;
}

// Checks ratio < limit and keeps the largest ratio per check, printed when the test ends (the
// margins under LAPACK's thresholds).
class Worst {
 public:
  Worst() = default;
  Worst(const Worst&) = delete;
  Worst& operator=(const Worst&) = delete;
  ~Worst() {
    for (const auto& [what, e] : seen_)
      std::printf("[  ratio   ] %-58s max %8.3g (threshold %g)\n", what.c_str(), e.first, e.second);
  }
  void operator()(const std::string& what, double ratio, double limit) {
    auto& e = seen_[what];
    e.first = std::max(e.first, ratio);
    e.second = limit;
    EXPECT_LT(ratio, limit) << what;
  }

 private:
  std::map<std::string, std::pair<double, double>> seen_;
};

template <class T>
class Residuals : public ::testing::Test {};
TYPED_TEST_SUITE(Residuals, AllTypes);

}  // namespace

// ---- QR ------------------------------------------------------------------------------------------
TYPED_TEST(Residuals, Qr) {
  using T = TypeParam;
  Worst worst;
  using W = wide_t<T>;
  std::uint64_t seed = 100;
  for (const Dims& d : shapes())
    for (Kind kind : all_kinds())
      for (bool complete : {false, true})
        for (bool pos : {false, true}) {
          SCOPED_TRACE(trace("qr", kind, d,
                             std::string(complete ? ", complete" : ", reduced") + (pos ? ", positive_diag" : "")));
          const Tensor<T> A = general<T>(kind, d.m, d.n, seed++);
          const std::int64_t m = d.m, n = d.n, k = std::min(m, n), qc = complete ? m : k;
          auto [Q, R] = la::qr(A, complete ? la::QrMode::Complete : la::QrMode::Reduced, pos);
          ASSERT_EQ(Q.shape(), Shape({m, qc}));
          ASSERT_EQ(R.shape(), Shape({qc, n}));
          const Mat<W> a = to_mat(A), q = to_mat(Q), r = to_mat(R);
          EXPECT_EQ(off_triangle_nonzeros(r, true), 0) << "R is not upper triangular";
          const double res = norm1(a - q * r) / (static_cast<double>(std::max(m, n)) * norm1(a) * eps<T>());
          worst("qr: ||A - QR|| / (max(m,n) ||A|| eps)", res, 30);
          worst("qr: ||I - Q^H Q|| / (m eps)", orth_ratio<T>(q, m), 30);
          if (pos)
            for (std::int64_t i = 0; i < k; ++i) {
              EXPECT_GE(std::real(r(i, i)), 0) << "R(" << i << ", " << i << ")";
              EXPECT_EQ(std::imag(std::complex<double>(r(i, i))), 0) << "R(" << i << ", " << i << ") is not real";
            }
        }
}

TYPED_TEST(Residuals, QrRModeEqualsReducedR) {
  using T = TypeParam;
  for (const Dims& d : shapes()) {
    SCOPED_TRACE(d.name);
    const Tensor<T> A = general<T>(Kind::Cond2, d.m, d.n, 7);
    auto [Q, R] = la::qr(A, la::QrMode::R);
    EXPECT_FALSE(Q.defined());
    auto [Q2, R2] = la::qr(A);
    EXPECT_EQ(R.shape(), R2.shape());
    EXPECT_EQ(R.to_vector(), R2.to_vector());
  }
}

// ---- LU ------------------------------------------------------------------------------------------
TYPED_TEST(Residuals, Lu) {
  using T = TypeParam;
  Worst worst;
  using W = wide_t<T>;
  std::uint64_t seed = 200;
  for (const Dims& d : shapes())
    for (Kind kind : all_kinds()) {
      SCOPED_TRACE(trace("lu", kind, d));
      const Tensor<T> A = general<T>(kind, d.m, d.n, seed++);
      const std::int64_t m = d.m, n = d.n, k = std::min(m, n);
      auto [LU, piv, info] = la::lu_factor_ex(A);
      if (kind == Kind::RankDeficient)
        EXPECT_GE(info.item(), 0);  // a zero pivot may be reported; the factorization completes
      else
        EXPECT_EQ(info.item(), 0);
      auto [P, L, U] = la::lu(A);
      ASSERT_EQ(P.shape(), Shape({m, m}));
      ASSERT_EQ(L.shape(), Shape({m, k}));
      ASSERT_EQ(U.shape(), Shape({k, n}));
      const Mat<W> a = to_mat(A), p = to_mat(P), l = to_mat(L), u = to_mat(U);
      // P is a permutation matrix.
      for (std::int64_t i = 0; i < m; ++i) {
        int row = 0, col = 0;
        for (std::int64_t j = 0; j < m; ++j) {
          EXPECT_TRUE(p(i, j) == W(0) || p(i, j) == W(1));
          row += p(i, j) == W(1);
          col += p(j, i) == W(1);
        }
        EXPECT_EQ(row, 1);
        EXPECT_EQ(col, 1);
      }
      EXPECT_EQ(off_triangle_nonzeros(l, false), 0) << "L is not lower triangular";
      EXPECT_EQ(off_triangle_nonzeros(u, true), 0) << "U is not upper triangular";
      for (std::int64_t j = 0; j < k; ++j) {
        EXPECT_EQ(l(j, j), W(1)) << "L(" << j << ", " << j << ")";
        // Partial pivoting bounds the multipliers: |L(i, j)| <= 1 (complex: <= sqrt(2), since
        // i?amax picks the pivot by |Re| + |Im|).
        for (std::int64_t i = j + 1; i < m; ++i)
          EXPECT_LE(absval(l(i, j)), is_complex_v<T> ? std::sqrt(2.0) : 1.0) << "partial pivoting: |L(i, j)|";
      }
      const double res = norm1(a - p * l * u) / (static_cast<double>(n) * norm1(a) * eps<T>());
      worst("lu: ||PA - LU|| / (n ||A|| eps)", res, 30);
    }
}

// ---- solve / inv ---------------------------------------------------------------------------------
TYPED_TEST(Residuals, Solve) {
  using T = TypeParam;
  Worst worst;
  using W = wide_t<T>;
  const std::int64_t n = 10;
  const Dims d{n, n, "square"};
  std::uint64_t seed = 300;
  for (Kind kind : all_kinds()) {
    if (kind == Kind::RankDeficient) continue;  // SolveRankDeficient
    SCOPED_TRACE(trace("solve", kind, d));
    const Tensor<T> A = general<T>(kind, n, n, seed++);
    const Tensor<T> B = rhs_for(A, 3, seed++);
    const Mat<W> a = to_mat(A);
    // left: A X = B
    const Tensor<T> X = la::solve(A, B);
    ASSERT_EQ(X.shape(), Shape({n, 3}));
    worst("solve: ||B - AX|| / (||A|| ||X|| eps)", solve_ratio<T>(a, to_mat(X), to_mat(B)), 30);
    // a vector right-hand side
    const Tensor<T> b = contiguous(slice(B, 1, 0, 1).squeeze(1));
    const Tensor<T> x = la::solve(A, b);
    ASSERT_EQ(x.shape(), Shape({n}));
    worst("solve: vector rhs", solve_ratio<T>(a, to_mat(x.unsqueeze(1)), to_mat(b.unsqueeze(1))), 30);
    // right: X A = B  <=>  A^H X^H = B^H
    const Tensor<T> Bt = contiguous(B.mH());
    const Tensor<T> Xr = la::solve(A, Bt, false);
    ASSERT_EQ(Xr.shape(), Shape({3, n}));
    worst("solve: right side X A = B", solve_ratio<T>(adjoint(a), adjoint(to_mat(Xr)), adjoint(to_mat(Bt))), 30);
    // inv: LAPACK's xget03, ||I - A A^-1|| / (n ||A|| ||A^-1|| eps)
    const Tensor<T> Ai = la::inv(A);
    const Mat<W> ai = to_mat(Ai);
    const double r = norm1(eye_mat<W>(n) - a * ai) / (static_cast<double>(n) * norm1(a) * norm1(ai) * eps<T>());
    worst("inv: ||I - A inv(A)|| / (n ||A|| ||inv(A)|| eps)", r, 30);
  }
}

TYPED_TEST(Residuals, SolveBatched) {
  using T = TypeParam;
  const std::int64_t n = 9;
  // A batch of three matrices of different kinds, with a batched and a broadcast right-hand side.
  const std::vector<Kind> kinds{Kind::Cond2, Kind::CondSqrt, Kind::CondBad};
  std::vector<Tensor<T>> as, bs;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    as.push_back(general<T>(kinds[i], n, n, 40 + i));
    bs.push_back(rhs_for(as.back(), 2, 50 + i));
  }
  const Tensor<T> A = tx::stack(as, 2), B = tx::stack(bs, 2);
  const Tensor<T> X = la::solve(A, B);
  ASSERT_EQ(X.shape(), Shape({n, 2, 3}));
  const Tensor<T> Xb = la::solve(A, bs[0]);  // one rhs broadcast over the batch
  ASSERT_EQ(Xb.shape(), Shape({n, 2, 3}));
  for (std::int64_t b = 0; b < 3; ++b) {
    SCOPED_TRACE(kind_name(kinds[static_cast<std::size_t>(b)]));
    EXPECT_LT((solve_ratio<T>(to_mat(A, b), to_mat(X, b), to_mat(B, b))), 30);
    EXPECT_LT((solve_ratio<T>(to_mat(A, b), to_mat(Xb, b), to_mat(bs[0]))), 30);
  }
}

TYPED_TEST(Residuals, SolveRankDeficient) {
  using T = TypeParam;
  const std::int64_t n = 10;
  // Numerically rank-deficient (no exact zero pivot): either reported or solved with a small
  // backward error; never a crash.
  const Tensor<T> A = general<T>(Kind::RankDeficient, n, n, 61);
  const Tensor<T> B = rhs_for(A, 2, 62);
  auto [X, info] = la::solve_ex(A, B);
  ASSERT_EQ(X.shape(), Shape({n, 2}));
  EXPECT_GE(info.item(), 0);
  if (info.item() == 0 && all_finite(X))
    EXPECT_LT((solve_ratio<T>(to_mat(A), to_mat(X), to_mat(B))), 30);
  else if (info.item() > 0)
    EXPECT_THROW(la::solve(A, B), la::LinAlgError);
  // Exactly singular (a zero column): reported as info = the zero pivot's index, NaN solution.
  Tensor<T> S = clone(A);
  for (std::int64_t i = 0; i < n; ++i) S.mutable_data()[i + 3 * n] = T(0);
  auto [Xs, infos] = la::solve_ex(S, B);
  EXPECT_GT(infos.item(), 0);
  EXPECT_LE(infos.item(), n);
  EXPECT_TRUE(all_nan(Xs));
}

// ---- Cholesky ------------------------------------------------------------------------------------
TYPED_TEST(Residuals, Cholesky) {
  using T = TypeParam;
  Worst worst;
  using W = wide_t<T>;
  const std::int64_t n = 10;
  const Dims d{n, n, "square"};
  std::uint64_t seed = 400;
  for (Kind kind : all_kinds()) {
    if (kind == Kind::Triangular) continue;  // not Hermitian
    for (bool upper : {false, true}) {
      SCOPED_TRACE(trace("cholesky", kind, d, upper ? ", upper" : ", lower"));
      const Tensor<T> A = hermitian_of<T>(kind, n, seed++, true);
      // The other triangle is not read: fill it with garbage.
      Tensor<T> Ag = clone(A);
      const Tensor<T> junk = Tensor<T>::randn({n, n}, seed++);
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < n; ++i)
          if (upper ? i > j : i < j) Ag.mutable_data()[i + j * n] = junk.data()[i + j * n];
      auto [F, info] = la::cholesky_ex(Ag, upper);
      ASSERT_EQ(F.shape(), Shape({n, n}));
      if (kind == Kind::RankDeficient && info.item() != 0) {  // reported: the order of the failing minor
        EXPECT_GE(info.item(), 1);
        EXPECT_LE(info.item(), n);
        EXPECT_TRUE(all_nan(F));
        EXPECT_THROW(la::cholesky(Ag, upper), la::LinAlgError);
        continue;
      }
      ASSERT_EQ(info.item(), 0);
      const Tensor<T> F2 = la::cholesky(A, upper);
      EXPECT_EQ(F.to_vector(), F2.to_vector()) << "the unreferenced triangle changed the factor";
      const Mat<W> a = to_mat(A), f = to_mat(F);
      EXPECT_EQ(off_triangle_nonzeros(f, upper), 0) << "the factor is not triangular";
      for (std::int64_t i = 0; i < n; ++i) {
        EXPECT_GT(std::real(f(i, i)), 0);
        EXPECT_EQ(std::imag(std::complex<double>(f(i, i))), 0);
      }
      const Mat<W> prod = upper ? adjoint(f) * f : f * adjoint(f);
      const double res = norm1(prod - a) / (static_cast<double>(n) * norm1(a) * eps<T>());
      worst(upper ? "cholesky: ||U^H U - A|| / (n ||A|| eps)" : "cholesky: ||L L^H - A|| / (n ||A|| eps)", res, 30);
    }
  }
}

// ---- eigh ----------------------------------------------------------------------------------------
template <class T, class W>
void expect_eigh_residuals(Worst& worst, const Tensor<T>& A, const Tensor<real_t<T>>& w, const Tensor<T>& V) {
  const std::int64_t n = A.shape()[0];
  const Mat<W> a = to_mat(A), v = to_mat(V);
  const std::vector<real_t<T>> wv = w.to_vector();
  for (std::int64_t i = 0; i + 1 < n; ++i) EXPECT_LE(wv[i], wv[i + 1]) << "eigenvalues not ascending at " << i;
  const double res = norm1(a - scale_cols(v, wv) * adjoint(v)) / (static_cast<double>(n) * norm1(a) * eps<T>());
  worst("eigh: ||A - V L V^H|| / (n ||A|| eps)", res, 30);
  worst("eigh: ||I - V^H V|| / (n eps)", orth_ratio<T>(v, n), 60);
}

TYPED_TEST(Residuals, Eigh) {
  using T = TypeParam;
  Worst worst;
  using W = wide_t<T>;
  using R = real_t<T>;
  const std::int64_t n = 10;
  const Dims d{n, n, "square"};
  std::uint64_t seed = 500;
  for (Kind kind : all_kinds()) {
    if (kind == Kind::Triangular) continue;  // not Hermitian
    for (bool upper : {false, true}) {
      SCOPED_TRACE(trace("eigh", kind, d, upper ? ", upper" : ", lower"));
      std::vector<double> lambda;
      const Tensor<T> A = hermitian_of<T>(kind, n, seed++, false, &lambda);
      Tensor<T> Ag = clone(A);  // garbage in the triangle that is not read
      const Tensor<T> junk = Tensor<T>::randn({n, n}, seed++);
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < n; ++i)
          if (upper ? i > j : i < j) Ag.mutable_data()[i + j * n] = junk.data()[i + j * n];
      auto [w, V] = la::eigh(Ag, upper);
      ASSERT_EQ(w.shape(), Shape({n}));
      ASSERT_EQ(V.shape(), Shape({n, n}));
      expect_eigh_residuals<T, W>(worst, A, w, V);
      const double an = norm1(to_mat(A));
      const std::vector<R> wv = w.to_vector(), wv2 = la::eigvalsh(Ag, upper).to_vector();
      double err = 0, err2 = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        err = std::max(err, std::abs(static_cast<double>(wv[i]) - lambda[i]));
        err2 = std::max(err2, std::abs(static_cast<double>(wv[i]) - static_cast<double>(wv2[i])));
      }
      const double unit = static_cast<double>(n) * an * eps<T>();
      worst("eigh: max |w - lambda| / (n ||A|| eps)", err / unit, 30);
      worst("eigvalsh vs eigh: max |dw| / (n ||A|| eps)", err2 / unit, 30);
      if (kind == Kind::Diagonal)
        for (std::int64_t i = 0; i < n; ++i) EXPECT_EQ(wv[i], static_cast<R>(lambda[i])) << "diagonal: exact";
    }
  }
}

TYPED_TEST(Residuals, EighIdentityAndRepeated) {
  using T = TypeParam;
  Worst worst;
  using W = wide_t<T>;
  using R = real_t<T>;
  {
    SCOPED_TRACE("identity");
    const std::int64_t n = 7;
    const Tensor<T> I = Tensor<T>::eye(n);
    auto [w, V] = la::eigh(I);
    for (R v : w.to_vector()) EXPECT_EQ(v, R(1));
    for (R v : la::eigvalsh(I).to_vector()) EXPECT_EQ(v, R(1));
    expect_eigh_residuals<T, W>(worst, I, w, V);
  }
  {
    SCOPED_TRACE("diag(1, 2, 2, 3) with a repeated eigenvalue");
    const Tensor<T> D = diag_embed(Tensor<T>::from_col_major({4}, {T(2), T(1), T(3), T(2)}));
    auto [w, V] = la::eigh(D);
    EXPECT_EQ(w.to_vector(), (std::vector<R>{1, 2, 2, 3}));
    EXPECT_EQ(la::eigvalsh(D).to_vector(), (std::vector<R>{1, 2, 2, 3}));
    expect_eigh_residuals<T, W>(worst, D, w, V);
  }
  {
    SCOPED_TRACE("U diag(-1, 2, 2, 2, 5) U^H: a triple eigenvalue");
    const std::vector<double> l{-1, 2, 2, 2, 5};
    const Tensor<T> A = hermitian<T>(l, 17);
    auto [w, V] = la::eigh(A);
    expect_eigh_residuals<T, W>(worst, A, w, V);
    const std::vector<R> wv = w.to_vector();
    const double unit = 5.0 * norm1(to_mat(A)) * eps<T>();
    for (int i = 0; i < 5; ++i) EXPECT_LT(std::abs(wv[i] - l[i]) / unit, 30) << "eigenvalue " << i;
    EXPECT_LT((std::max({wv[1], wv[2], wv[3]}) - std::min({wv[1], wv[2], wv[3]})) / unit, 30)
        << "the repeated eigenvalue splits";
  }
}

// ---- SVD -----------------------------------------------------------------------------------------
TYPED_TEST(Residuals, Svd) {
  using T = TypeParam;
  Worst worst;
  using W = wide_t<T>;
  using R = real_t<T>;
  std::uint64_t seed = 600;
  for (const Dims& d : shapes())
    for (Kind kind : all_kinds())
      for (bool full : {false, true}) {
        SCOPED_TRACE(trace("svd", kind, d, full ? ", full_matrices" : ", thin"));
        std::vector<double> sigma;
        const Tensor<T> A = general<T>(kind, d.m, d.n, seed++, &sigma);
        const std::int64_t m = d.m, n = d.n, k = std::min(m, n), mx = std::max(m, n);
        auto [U, S, Vh] = la::svd(A, full);
        ASSERT_EQ(U.shape(), Shape({m, full ? m : k}));
        ASSERT_EQ(S.shape(), Shape({k}));
        ASSERT_EQ(Vh.shape(), Shape({full ? n : k, n}));
        const Mat<W> a = to_mat(A), u = to_mat(U), vh = to_mat(Vh);
        const std::vector<R> s = S.to_vector();
        for (std::int64_t i = 0; i < k; ++i) {
          EXPECT_GE(s[i], 0);
          if (i + 1 < k) EXPECT_GE(s[i], s[i + 1]) << "singular values not descending at " << i;
        }
        const double an = norm1(a);
        const double res = norm1(a - scale_cols(cols(u, k), s) * rows(vh, k)) / (an * eps<T>());
        worst("svd: ||A - U S V^H|| / (max(m,n) ||A|| eps)", res / static_cast<double>(mx), 35);
        worst("svd: ||I - U^H U|| / (m eps)", orth_ratio<T>(u, m), 30);
        worst("svd: ||I - V^H V|| / (n eps)", orth_ratio<T>(adjoint(vh), n), 30);
        const std::vector<R> s2 = la::svdvals(A).to_vector();
        double err = 0, err2 = 0;
        for (std::int64_t i = 0; i < k; ++i) {
          if (!sigma.empty()) err = std::max(err, std::abs(static_cast<double>(s[i]) - sigma[i]));
          err2 = std::max(err2, std::abs(static_cast<double>(s[i]) - static_cast<double>(s2[i])));
        }
        const double unit = static_cast<double>(mx) * an * eps<T>();
        worst("svd: max |s - sigma| / (max(m,n) ||A|| eps)", err / unit, 30);
        worst("svdvals vs svd: max |ds| / (max(m,n) ||A|| eps)", err2 / unit, 30);
      }
}

TYPED_TEST(Residuals, SvdIdentityAndRepeated) {
  using T = TypeParam;
  using W = wide_t<T>;
  using R = real_t<T>;
  const std::int64_t n = 6;
  const Tensor<T> I = Tensor<T>::eye(n);
  auto [U, S, Vh] = la::svd(I);
  for (R v : S.to_vector()) EXPECT_EQ(v, R(1));
  for (R v : la::svdvals(I).to_vector()) EXPECT_EQ(v, R(1));
  const Mat<W> a = to_mat(I), u = to_mat(U), vh = to_mat(Vh);
  EXPECT_LT(norm1(a - scale_cols(u, S.to_vector()) * vh) / (norm1(a) * eps<T>()), 35.0 * n);
  EXPECT_LT(orth_ratio<T>(u, n), 30);
  EXPECT_LT(orth_ratio<T>(adjoint(vh), n), 30);
  // A repeated singular value in a general matrix.
  using G = gen_t<T>;
  const std::vector<double> sg{3, 2, 2, 1};
  const Tensor<T> A = round_to<T>(usv<G>(5, 4, sg, 23));
  const std::vector<R> s = la::svdvals(A).to_vector();
  const double unit = 5.0 * norm1(to_mat(A)) * eps<T>();
  for (int i = 0; i < 4; ++i) EXPECT_LT(std::abs(s[i] - sg[i]) / unit, 30);
}
