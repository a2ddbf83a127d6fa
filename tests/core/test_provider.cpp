// The CPU provider interface (tenax/backend/cpu_provider.hpp), checked by residuals on random
// matrices. Uses nothing but the provider interface, so it passes with every provider (CBLAS /
// LAPACKE or Eigen): it is the contract the Eigen provider must keep to stand in for LAPACK.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tenax/backend/cpu_provider.hpp"
#include "tenax/core/error.hpp"

namespace cpu = tenax::cpu;
using I = std::int64_t;

namespace {

template <class T>
using R = tenax::real_t<T>;
template <class T>
constexpr bool kCplx = tenax::is_complex_v<T>;

template <class T>
T cj(const T& x) {
  if constexpr (kCplx<T>)
    return std::conj(x);
  else
    return x;
}
template <class T>
R<T> re(const T& x) {
  return std::real(x);
}
template <class T>
R<T> im(const T& x) {
  if constexpr (kCplx<T>)
    return std::imag(x);
  else
    return R<T>(0);
}
template <class T>
T nan_value() {
  return T(std::numeric_limits<R<T>>::quiet_NaN());
}
template <class T>
bool is_nan(const T& x) {
  return std::isnan(re(x)) || std::isnan(im(x));
}

// A column-major matrix with a leading dimension larger than its row count.
template <class T>
struct Mat {
  I rows = 0, cols = 0, ld = 1;
  std::vector<T> d;
  Mat() = default;
  Mat(I r, I c, I pad = 3) : rows(r), cols(c), ld(std::max<I>(1, r + pad)), d(static_cast<std::size_t>(ld * c + 1)) {}
  T& operator()(I i, I j) { return d[static_cast<std::size_t>(i + j * ld)]; }
  const T& operator()(I i, I j) const { return d[static_cast<std::size_t>(i + j * ld)]; }
  T* data() { return d.data(); }
  const T* data() const { return d.data(); }
};

std::mt19937& rng() {
  static std::mt19937 g(12345);
  return g;
}

template <class T>
T rnd() {
  std::normal_distribution<double> nd(0.0, 1.0);
  if constexpr (kCplx<T>)
    return T(static_cast<R<T>>(nd(rng())), static_cast<R<T>>(nd(rng())));
  else
    return static_cast<T>(nd(rng()));
}

template <class T>
Mat<T> random(I r, I c) {
  Mat<T> a(r, c);
  for (I j = 0; j < c; ++j)
    for (I i = 0; i < r; ++i) a(i, j) = rnd<T>();
  return a;
}

template <class T>
Mat<T> identity(I n) {
  Mat<T> a(n, n);
  for (I i = 0; i < n; ++i) a(i, i) = T(1);
  return a;
}

// op(A): N, T or C.
template <class T>
Mat<T> op(const Mat<T>& a, cpu::Trans t) {
  if (t == cpu::Trans::N) return a;
  Mat<T> b(a.cols, a.rows);
  for (I j = 0; j < a.cols; ++j)
    for (I i = 0; i < a.rows; ++i) b(j, i) = t == cpu::Trans::C ? cj(a(i, j)) : a(i, j);
  return b;
}

// Naive products in double-width accumulation for the reference side.
template <class T>
Mat<T> mul(const Mat<T>& a, const Mat<T>& b) {
  EXPECT_EQ(a.cols, b.rows);
  using W = std::conditional_t<kCplx<T>, std::complex<double>, double>;
  Mat<T> c(a.rows, b.cols);
  for (I j = 0; j < b.cols; ++j)
    for (I i = 0; i < a.rows; ++i) {
      W s = 0;
      for (I p = 0; p < a.cols; ++p) s += W(a(i, p)) * W(b(p, j));
      c(i, j) = static_cast<T>(s);
    }
  return c;
}

template <class T>
double fro(const Mat<T>& a) {
  double s = 0;
  for (I j = 0; j < a.cols; ++j)
    for (I i = 0; i < a.rows; ++i) s += std::norm(std::complex<double>(re(a(i, j)), im(a(i, j))));
  return std::sqrt(s);
}

template <class T>
double diff(const Mat<T>& a, const Mat<T>& b) {
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.cols, b.cols);
  double s = 0;
  for (I j = 0; j < a.cols; ++j)
    for (I i = 0; i < a.rows; ++i) {
      const std::complex<double> x(re(a(i, j)), im(a(i, j))), y(re(b(i, j)), im(b(i, j)));
      s += std::norm(x - y);
    }
  return std::sqrt(s);
}

// Leading r x c block of a.
template <class T>
Mat<T> block(const Mat<T>& a, I r, I c) {
  Mat<T> b(r, c);
  for (I j = 0; j < c; ++j)
    for (I i = 0; i < r; ++i) b(i, j) = a(i, j);
  return b;
}

// ||A^H A - I||_F for a matrix with orthonormal columns.
template <class T>
double orth_err(const Mat<T>& q) {
  return diff(mul(op(q, cpu::Trans::C), q), identity<T>(q.cols));
}

template <class T>
double eps() {
  return static_cast<double>(std::numeric_limits<R<T>>::epsilon());
}

// A residual budget: c * size * eps.
template <class T>
double tol(I size, double c = 20.0) {
  return c * static_cast<double>(std::max<I>(size, 1)) * eps<T>();
}

// A random Hermitian positive definite n x n matrix (full storage).
template <class T>
Mat<T> hpd(I n) {
  Mat<T> g = random<T>(n, n);
  Mat<T> a = mul(g, op(g, cpu::Trans::C));
  for (I i = 0; i < n; ++i) a(i, i) = T(re(a(i, i)) + static_cast<R<T>>(n));
  return a;
}

// A random Hermitian n x n matrix (full storage).
template <class T>
Mat<T> hermitian(I n) {
  Mat<T> g = random<T>(n, n), a(n, n);
  for (I j = 0; j < n; ++j)
    for (I i = 0; i < n; ++i) a(i, j) = (g(i, j) + cj(g(j, i))) * T(0.5);
  for (I i = 0; i < n; ++i) a(i, i) = T(re(a(i, i)));
  return a;
}

// Fills the triangle opposite to uplo (diagonal excluded) with NaN.
template <class T>
void poison_other(Mat<T>& a, cpu::Uplo uplo) {
  for (I j = 0; j < a.cols; ++j)
    for (I i = 0; i < a.rows; ++i)
      if (uplo == cpu::Uplo::Lower ? i < j : i > j) a(i, j) = nan_value<T>();
}

const std::vector<std::pair<I, I>> kShapes = {{1, 1}, {7, 7}, {33, 33}, {20, 9}, {9, 20}, {150, 100}, {100, 150}};

}  // namespace

template <class T>
class Provider : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(Provider, Types);

// ---- trsm ------------------------------------------------------------------------------------

// The k x k operand of trsm/trmm: its uplo triangle from diagonal() and off_diagonal(), the other
// triangle (and a unit diagonal) NaN, so that reading it shows; tri gets the triangle as the
// routine sees it (ones on a unit diagonal, zeros elsewhere).
template <class T, class D, class O>
Mat<T> triangular_operand(I k, cpu::Uplo uplo, cpu::Diag diag, D diagonal, O off_diagonal, Mat<T>& tri) {
  Mat<T> a(k, k);
  for (I j = 0; j < k; ++j)
    for (I i = 0; i < k; ++i) {
      const bool in = uplo == cpu::Uplo::Lower ? i > j : i < j;
      if (i == j) {
        tri(i, i) = diag == cpu::Diag::Unit ? T(1) : diagonal();
        a(i, i) = diag == cpu::Diag::Unit ? nan_value<T>() : tri(i, i);
      } else if (in) {
        tri(i, j) = a(i, j) = off_diagonal();
      } else {
        a(i, j) = nan_value<T>();
      }
    }
  return a;
}

// Runs f(side, uplo, trans, diag) for every flag combination of trsm/trmm, each in a scoped trace.
template <class F>
void for_each_triangular_flags(F&& f) {
  for (auto side : {cpu::Side::Left, cpu::Side::Right})
    for (auto uplo : {cpu::Uplo::Lower, cpu::Uplo::Upper})
      for (auto trans : {cpu::Trans::N, cpu::Trans::T, cpu::Trans::C})
        for (auto diag : {cpu::Diag::NonUnit, cpu::Diag::Unit}) {
          SCOPED_TRACE(std::string("side ") + static_cast<char>(side) + " uplo " + static_cast<char>(uplo) + " trans " +
                       static_cast<char>(trans) + " diag " + static_cast<char>(diag));
          f(side, uplo, trans, diag);
        }
}

TYPED_TEST(Provider, TrsmAllCombinations) {
  using T = TypeParam;
  const I m = 13, n = 6;
  T alpha = T(-1.5);
  if constexpr (kCplx<T>) alpha = T(0.5, -1.5);
  for_each_triangular_flags([&](cpu::Side side, cpu::Uplo uplo, cpu::Trans trans, cpu::Diag diag) {
    const I k = side == cpu::Side::Left ? m : n;
    // A well-conditioned triangle; the other triangle (and a unit diagonal) is NaN: not read.
    Mat<T> tri(k, k);
    const Mat<T> a = triangular_operand<T>(
        k, uplo, diag, [] { return T(2.0 + std::abs(re(rnd<T>()))) + rnd<T>() * T(0.3); },
        [k] { return rnd<T>() * T(1.0 / static_cast<double>(k)); }, tri);
    const Mat<T> b0 = random<T>(m, n);
    Mat<T> x = b0;
    cpu::reset_provider_calls();
    cpu::trsm<T>(side, uplo, trans, diag, m, n, alpha, a.data(), a.ld, x.data(), x.ld);
    EXPECT_EQ(cpu::provider_calls(cpu::Routine::trsm), 1);
    const Mat<T> opa = op(tri, trans);
    const Mat<T> lhs = side == cpu::Side::Left ? mul(opa, x) : mul(x, opa);
    Mat<T> rhs = b0;
    for (auto& v : rhs.d) v *= alpha;
    EXPECT_LE(diff(lhs, rhs), tol<T>(k) * (fro(opa) * fro(x) + fro(rhs)));
    for (I j = 0; j < n; ++j)  // padding rows untouched
      for (I i = m; i < x.ld; ++i) EXPECT_EQ(x(i, j), T(0));
  });
}

// trmm: B = alpha op(A) B or alpha B op(A) against the explicit triangle; the other triangle (and
// a unit diagonal) is NaN, so reading it would show.
TYPED_TEST(Provider, TrmmAllCombinations) {
  using T = TypeParam;
  const I m = 13, n = 6;
  T alpha = T(-1.5);
  if constexpr (kCplx<T>) alpha = T(0.5, -1.5);
  for_each_triangular_flags([&](cpu::Side side, cpu::Uplo uplo, cpu::Trans trans, cpu::Diag diag) {
    const I k = side == cpu::Side::Left ? m : n;
    Mat<T> tri(k, k);
    const Mat<T> a = triangular_operand<T>(
        k, uplo, diag, [] { return rnd<T>(); }, [] { return rnd<T>(); }, tri);
    const Mat<T> b0 = random<T>(m, n);
    Mat<T> y = b0;
    cpu::reset_provider_calls();
    cpu::trmm<T>(side, uplo, trans, diag, m, n, alpha, a.data(), a.ld, y.data(), y.ld);
    EXPECT_EQ(cpu::provider_calls(cpu::Routine::trmm), 1);
    const Mat<T> opa = op(tri, trans);
    Mat<T> want = side == cpu::Side::Left ? mul(opa, b0) : mul(b0, opa);
    for (auto& v : want.d) v *= alpha;
    EXPECT_LE(diff(y, want), tol<T>(k) * std::abs(alpha) * fro(opa) * fro(b0));
    for (I j = 0; j < n; ++j)  // padding rows untouched
      for (I i = m; i < y.ld; ++i) EXPECT_EQ(y(i, j), T(0));
  });
}

TYPED_TEST(Provider, TrsmAlphaZeroGivesZero) {
  using T = TypeParam;
  Mat<T> a = random<T>(4, 4), b = random<T>(4, 3);
  cpu::trsm<T>(cpu::Side::Left, cpu::Uplo::Upper, cpu::Trans::N, cpu::Diag::NonUnit, 4, 3, T(0), a.data(), a.ld,
               b.data(), b.ld);
  for (I j = 0; j < 3; ++j)
    for (I i = 0; i < 4; ++i) EXPECT_EQ(b(i, j), T(0));
}

// ---- getrf / getrs ---------------------------------------------------------------------------

// P A = L U from getrf's packed output (applies the interchanges to a copy of A in order).
template <class T>
void check_lu(const Mat<T>& a0, const Mat<T>& lu, const std::vector<std::int32_t>& ipiv) {
  const I m = a0.rows, n = a0.cols, k = std::min(m, n);
  Mat<T> pa = a0;
  for (I i = 0; i < k; ++i) {
    ASSERT_GE(ipiv[i], i + 1);
    ASSERT_LE(ipiv[i], m);
    const I p = ipiv[i] - 1;
    for (I j = 0; j < n; ++j) std::swap(pa(i, j), pa(p, j));
  }
  Mat<T> l(m, k), u(k, n);
  const double lmax = kCplx<T> ? std::sqrt(2.0) : 1.0;
  for (I j = 0; j < k; ++j)
    for (I i = 0; i < m; ++i) {
      l(i, j) = i == j ? T(1) : i > j ? lu(i, j) : T(0);
      if (i > j) EXPECT_LE(std::abs(lu(i, j)), lmax * (1 + 4 * eps<T>()));  // partial pivoting
    }
  for (I j = 0; j < n; ++j)
    for (I i = 0; i < k; ++i) u(i, j) = i <= j ? lu(i, j) : T(0);
  EXPECT_LE(diff(mul(l, u), pa), tol<T>(std::max(m, n)) * fro(a0));
}

TYPED_TEST(Provider, GetrfReconstructs) {
  using T = TypeParam;
  for (auto [m, n] : kShapes) {
    SCOPED_TRACE("m " + std::to_string(m) + " n " + std::to_string(n));
    const Mat<T> a0 = random<T>(m, n);
    Mat<T> lu = a0;
    std::vector<std::int32_t> ipiv(static_cast<std::size_t>(std::min(m, n)));
    cpu::reset_provider_calls();
    EXPECT_EQ(cpu::getrf<T>(m, n, lu.data(), lu.ld, ipiv.data()), 0);
    EXPECT_EQ(cpu::provider_calls(cpu::Routine::getrf), 1);
    check_lu(a0, lu, ipiv);
  }
}

// LAPACK's pivot: the first index maximizing |x| (real) or |Re| + |Im| (complex, like i?amax).
TYPED_TEST(Provider, GetrfPivotRule) {
  using T = TypeParam;
  {  // ties: the first maximal entry wins
    Mat<T> a(4, 2);
    const double col[4] = {1, -3, 3, 2};
    for (I i = 0; i < 4; ++i) {
      a(i, 0) = T(col[i]);
      a(i, 1) = T(static_cast<double>(i + 1));
    }
    std::vector<std::int32_t> ipiv(2);
    EXPECT_EQ(cpu::getrf<T>(4, 2, a.data(), a.ld, ipiv.data()), 0);
    EXPECT_EQ(ipiv[0], 2);
  }
  if constexpr (kCplx<T>) {  // |3| > |2+2i| but |Re| + |Im| is 3 < 4
    Mat<T> a(2, 2);
    a(0, 0) = T(3);
    a(1, 0) = T(std::complex<double>(2, 2));
    a(0, 1) = T(1);
    a(1, 1) = T(5);
    std::vector<std::int32_t> ipiv(2);
    EXPECT_EQ(cpu::getrf<T>(2, 2, a.data(), a.ld, ipiv.data()), 0);
    EXPECT_EQ(ipiv[0], 2);
  }
}

TYPED_TEST(Provider, GetrfSingularInfoAndContinues) {
  using T = TypeParam;
  for (auto [m, n, zc] : std::vector<std::tuple<I, I, I>>{{6, 6, 0}, {6, 6, 3}, {40, 40, 25}, {9, 5, 4}, {5, 9, 2}}) {
    SCOPED_TRACE("m " + std::to_string(m) + " n " + std::to_string(n) + " zero column " + std::to_string(zc));
    Mat<T> a0 = random<T>(m, n);
    for (I i = 0; i < m; ++i) a0(i, zc) = T(0);
    Mat<T> lu = a0;
    std::vector<std::int32_t> ipiv(static_cast<std::size_t>(std::min(m, n)));
    EXPECT_EQ(cpu::getrf<T>(m, n, lu.data(), lu.ld, ipiv.data()), zc + 1);
    check_lu(a0, lu, ipiv);  // the factorization is completed anyway
  }
}

// Several right-hand sides on small systems take the OpenBLAS provider's by-steps path
// (interchanges and two trsm); the others, and other providers, call getrs itself.
TYPED_TEST(Provider, GetrsSolvesAllTransposes) {
  using T = TypeParam;
  for (auto [n, nrhs] : std::vector<std::pair<I, I>>{{1, 3}, {5, 1}, {5, 3}, {5, 20}, {40, 3}, {40, 12}, {130, 3}}) {
    const Mat<T> a0 = random<T>(n, n);
    Mat<T> lu = a0;
    std::vector<std::int32_t> ipiv(static_cast<std::size_t>(n));
    ASSERT_EQ(cpu::getrf<T>(n, n, lu.data(), lu.ld, ipiv.data()), 0);
    for (auto trans : {cpu::Trans::N, cpu::Trans::T, cpu::Trans::C}) {
      SCOPED_TRACE("n " + std::to_string(n) + " nrhs " + std::to_string(nrhs) + " trans " + static_cast<char>(trans));
      const Mat<T> b0 = random<T>(n, nrhs);
      Mat<T> x(n, nrhs, 5);
      for (I j = 0; j < nrhs; ++j)
        for (I i = 0; i < n; ++i) x(i, j) = b0(i, j);
      cpu::reset_provider_calls();
      EXPECT_EQ(cpu::getrs<T>(trans, n, nrhs, lu.data(), lu.ld, ipiv.data(), x.data(), x.ld), 0);
      EXPECT_EQ(cpu::provider_calls(cpu::Routine::getrs), 1);
      const Mat<T> opa = op(a0, trans);
      EXPECT_LE(diff(mul(opa, x), b0), tol<T>(n) * fro(opa) * fro(x));
    }
  }
}

// ---- potrf -----------------------------------------------------------------------------------

TYPED_TEST(Provider, PotrfBothTriangles) {
  using T = TypeParam;
  for (I n : {1, 6, 50, 150}) {
    for (auto uplo : {cpu::Uplo::Lower, cpu::Uplo::Upper}) {
      SCOPED_TRACE("n " + std::to_string(n) + " uplo " + static_cast<char>(uplo));
      const Mat<T> a0 = hpd<T>(n);
      Mat<T> f = a0;
      poison_other(f, uplo);
      cpu::reset_provider_calls();
      EXPECT_EQ(cpu::potrf<T>(uplo, n, f.data(), f.ld), 0);
      EXPECT_EQ(cpu::provider_calls(cpu::Routine::potrf), 1);
      Mat<T> l(n, n);  // L, or U^H
      for (I j = 0; j < n; ++j)
        for (I i = 0; i < n; ++i) {
          const bool in = uplo == cpu::Uplo::Lower ? i >= j : i <= j;
          if (!in) {
            EXPECT_TRUE(is_nan(f(i, j))) << "other triangle written at " << i << ", " << j;
            continue;
          }
          if (uplo == cpu::Uplo::Lower)
            l(i, j) = f(i, j);
          else
            l(j, i) = cj(f(i, j));
        }
      for (I i = 0; i < n; ++i) {
        EXPECT_GT(re(f(i, i)), R<T>(0));
        EXPECT_EQ(im(f(i, i)), R<T>(0));
      }
      EXPECT_LE(diff(mul(l, op(l, cpu::Trans::C)), a0), tol<T>(n) * fro(a0));
    }
  }
}

TYPED_TEST(Provider, PotrfNotPositiveDefiniteInfo) {
  using T = TypeParam;
  for (auto [n, bad] : std::vector<std::pair<I, I>>{{1, 0}, {5, 0}, {5, 3}, {100, 77}, {150, 149}}) {
    for (auto uplo : {cpu::Uplo::Lower, cpu::Uplo::Upper}) {
      SCOPED_TRACE("n " + std::to_string(n) + " bad " + std::to_string(bad) + " uplo " + static_cast<char>(uplo));
      Mat<T> a = hpd<T>(n);
      a(bad, bad) = T(-1000.0 * static_cast<double>(n));
      EXPECT_EQ(cpu::potrf<T>(uplo, n, a.data(), a.ld), bad + 1);
    }
  }
  Mat<T> z(3, 3);  // a zero matrix: the first minor is zero, not positive
  EXPECT_EQ(cpu::potrf<T>(cpu::Uplo::Lower, 3, z.data(), z.ld), 1);
}

// ---- geqrf / orgqr ---------------------------------------------------------------------------

TYPED_TEST(Provider, GeqrfOrgqrReconstructs) {
  using T = TypeParam;
  for (auto [m, n] : kShapes) {
    SCOPED_TRACE("m " + std::to_string(m) + " n " + std::to_string(n));
    const I k = std::min(m, n);
    const Mat<T> a0 = random<T>(m, n);
    Mat<T> qr = a0;
    std::vector<T> tau(static_cast<std::size_t>(k));
    cpu::reset_provider_calls();
    EXPECT_EQ(cpu::geqrf<T>(m, n, qr.data(), qr.ld, tau.data()), 0);
    EXPECT_EQ(cpu::provider_calls(cpu::Routine::geqrf), 1);
    Mat<T> r(k, n);
    for (I j = 0; j < n; ++j)
      for (I i = 0; i <= std::min(j, k - 1); ++i) r(i, j) = qr(i, j);
    for (I i = 0; i < k; ++i) EXPECT_EQ(im(r(i, i)), R<T>(0)) << "R diagonal not real at " << i;
    Mat<T> q = block(qr, m, k);
    EXPECT_EQ(cpu::orgqr<T>(m, k, k, q.data(), q.ld, tau.data()), 0);
    EXPECT_EQ(cpu::provider_calls(cpu::Routine::orgqr), 1);
    EXPECT_LE(orth_err(q), tol<T>(m));
    EXPECT_LE(diff(mul(q, r), a0), tol<T>(std::max(m, n)) * fro(a0));
    // LAPACK's sign: R(0, 0) = -sign(Re A(0, 0)) ||A(:, 0)||.
    double c0 = 0;
    for (I i = 0; i < m; ++i) c0 += std::norm(std::complex<double>(re(a0(i, 0)), im(a0(i, 0))));
    c0 = std::sqrt(c0);
    const double expect_r00 = re(a0(0, 0)) >= 0 ? -c0 : c0;
    if (m > 1 || im(a0(0, 0)) != R<T>(0)) EXPECT_NEAR(re(r(0, 0)), expect_r00, tol<T>(m) * c0);
  }
}

// R(i, i) = -sign(Re alpha_i) * |.|, alpha_i = (H_{i-1}^H ... H_0^H A)(i, i) = q_i^H A(:, i), with
// q_i column i of the first i + 1 columns of H_0 ... H_{i-1} (orgqr with k = i < n = i + 1).
TYPED_TEST(Provider, GeqrfSignConventionEveryColumn) {
  using T = TypeParam;
  for (auto [m, n] : std::vector<std::pair<I, I>>{{12, 8}, {8, 12}, {90, 80}}) {
    SCOPED_TRACE("m " + std::to_string(m) + " n " + std::to_string(n));
    const I k = std::min(m, n);
    const Mat<T> a0 = random<T>(m, n);
    Mat<T> qr = a0;
    std::vector<T> tau(static_cast<std::size_t>(k));
    ASSERT_EQ(cpu::geqrf<T>(m, n, qr.data(), qr.ld, tau.data()), 0);
    for (I i = 0; i < k; ++i) {
      if (i == m - 1 && !kCplx<T>) continue;  // a 1-row real reflector is H = I
      Mat<T> q = block(qr, m, i + 1);
      ASSERT_EQ(cpu::orgqr<T>(m, i + 1, i, q.data(), q.ld, tau.data()), 0);
      std::complex<double> alpha = 0;
      for (I p = 0; p < m; ++p)
        alpha += std::conj(std::complex<double>(re(q(p, i)), im(q(p, i)))) *
                 std::complex<double>(re(a0(p, i)), im(a0(p, i)));
      if (std::abs(alpha.real()) < 1e-2) continue;
      EXPECT_EQ(re(qr(i, i)) > 0, alpha.real() < 0) << "column " << i;
    }
  }
}

TYPED_TEST(Provider, OrgqrFewerReflectorsThanColumns) {
  using T = TypeParam;
  for (auto [m, n, k] : std::vector<std::tuple<I, I, I>>{{20, 12, 7}, {20, 20, 0}, {160, 140, 100}}) {
    SCOPED_TRACE("m " + std::to_string(m) + " n " + std::to_string(n) + " k " + std::to_string(k));
    Mat<T> qr = random<T>(m, k);
    std::vector<T> tau(static_cast<std::size_t>(std::max<I>(k, 1)));
    ASSERT_EQ(cpu::geqrf<T>(m, k, qr.data(), qr.ld, tau.data()), 0);
    Mat<T> qk = block(qr, m, k), qn(m, n);
    for (I j = 0; j < n; ++j)
      for (I i = 0; i < m; ++i) qn(i, j) = j < k ? qr(i, j) : rnd<T>();  // columns k.. are garbage
    ASSERT_EQ(cpu::orgqr<T>(m, k, k, qk.data(), qk.ld, tau.data()), 0);
    ASSERT_EQ(cpu::orgqr<T>(m, n, k, qn.data(), qn.ld, tau.data()), 0);
    EXPECT_LE(orth_err(qn), tol<T>(m));
    EXPECT_LE(diff(block(qn, m, k), qk), tol<T>(m));
  }
}

// ---- syevd -----------------------------------------------------------------------------------

TYPED_TEST(Provider, SyevdBothTriangles) {
  using T = TypeParam;
  // 24/25 and 32/33 straddle the CBLAS provider's switch to LAPACK (complex / real).
  for (I n : {1, 2, 9, 24, 25, 32, 33, 40, 120}) {
    const Mat<T> a0 = hermitian<T>(n);
    for (auto uplo : {cpu::Uplo::Lower, cpu::Uplo::Upper}) {
      SCOPED_TRACE("n " + std::to_string(n) + " uplo " + static_cast<char>(uplo));
      Mat<T> v = a0, a = a0;
      poison_other(v, uplo);
      poison_other(a, uplo);
      if constexpr (kCplx<T>)  // the imaginary parts of the diagonal are not referenced
        for (I i = 0; i < n; ++i) v(i, i) = a(i, i) = T(std::complex<double>(re(a0(i, i)), 7.0));
      std::vector<R<T>> w(static_cast<std::size_t>(n)), w2(static_cast<std::size_t>(n));
      cpu::reset_provider_calls();
      EXPECT_EQ(cpu::syevd<T>(true, uplo, n, v.data(), v.ld, w.data()), 0);
      EXPECT_EQ(cpu::syevd<T>(false, uplo, n, a.data(), a.ld, w2.data()), 0);
      EXPECT_EQ(cpu::provider_calls(cpu::Routine::syevd), 2);
      const double scale = fro(a0);
      for (I i = 0; i + 1 < n; ++i) EXPECT_LE(w[i], w[i + 1]);
      for (I i = 0; i < n; ++i) EXPECT_NEAR(w[i], w2[i], tol<T>(n) * scale);
      const Mat<T> vv = block(v, n, n);
      Mat<T> vw = vv;
      for (I j = 0; j < n; ++j)
        for (I i = 0; i < n; ++i) vw(i, j) *= T(w[j]);
      EXPECT_LE(diff(mul(a0, vv), vw), tol<T>(n) * scale);
      EXPECT_LE(orth_err(vv), tol<T>(n));
    }
  }
}

// ---- gesdd -----------------------------------------------------------------------------------

template <class T>
void check_svd(const Mat<T>& a0, char jobz) {
  const I m = a0.rows, n = a0.cols, k = std::min(m, n);
  const I ucols = jobz == 'A' ? m : k, vrows = jobz == 'A' ? n : k;
  Mat<T> a = a0, u(m, ucols, 2), vt(vrows, n, 4);
  std::vector<R<T>> s(static_cast<std::size_t>(k)), s_only(static_cast<std::size_t>(k));
  cpu::reset_provider_calls();
  if (jobz == 'N')
    ASSERT_EQ(cpu::gesdd<T>('N', m, n, a.data(), a.ld, s.data(), nullptr, 1, nullptr, 1), 0);
  else
    ASSERT_EQ(cpu::gesdd<T>(jobz, m, n, a.data(), a.ld, s.data(), u.data(), u.ld, vt.data(), vt.ld), 0);
  EXPECT_EQ(cpu::provider_calls(cpu::Routine::gesdd), 1);
  for (I i = 0; i < k; ++i) EXPECT_GE(s[i], R<T>(0));
  for (I i = 0; i + 1 < k; ++i) EXPECT_GE(s[i], s[i + 1]);
  double sn = 0;
  for (auto x : s) sn += double(x) * double(x);
  EXPECT_NEAR(std::sqrt(sn), fro(a0), tol<T>(std::max(m, n)) * fro(a0));
  if (jobz == 'N') return;
  EXPECT_LE(orth_err(u), tol<T>(m));
  EXPECT_LE(orth_err(op(vt, cpu::Trans::C)), tol<T>(n));
  Mat<T> us(m, k);
  for (I j = 0; j < k; ++j)
    for (I i = 0; i < m; ++i) us(i, j) = u(i, j) * T(s[j]);
  Mat<T> vk(k, n);
  for (I j = 0; j < n; ++j)
    for (I i = 0; i < k; ++i) vk(i, j) = vt(i, j);
  EXPECT_LE(diff(mul(us, vk), a0), tol<T>(std::max(m, n)) * fro(a0));
  // The same singular values as jobz 'N'.
  Mat<T> b = a0;
  ASSERT_EQ(cpu::gesdd<T>('N', m, n, b.data(), b.ld, s_only.data(), nullptr, 1, nullptr, 1), 0);
  for (I i = 0; i < k; ++i) EXPECT_NEAR(s[i], s_only[i], tol<T>(std::max(m, n)) * fro(a0));
}

TYPED_TEST(Provider, GesddAllJobs) {
  using T = TypeParam;
  std::vector<std::pair<I, I>> shapes = kShapes;
  shapes.push_back({40, 25});  // past Eigen's Jacobi / divide-and-conquer switch
  shapes.push_back({30, 60});
  for (auto [m, n] : shapes) {
    const Mat<T> a0 = random<T>(m, n);
    for (char jobz : {'N', 'S', 'A'}) {
      SCOPED_TRACE("m " + std::to_string(m) + " n " + std::to_string(n) + " jobz " + jobz);
      check_svd(a0, jobz);
    }
  }
}

TYPED_TEST(Provider, GesddRankDeficient) {
  using T = TypeParam;
  const I m = 50, n = 36, r = 7;
  const Mat<T> a0 = mul(random<T>(m, r), random<T>(r, n));
  for (char jobz : {'N', 'S', 'A'}) {
    SCOPED_TRACE(std::string("jobz ") + jobz);
    check_svd(a0, jobz);
    Mat<T> a = a0;
    std::vector<R<T>> s(static_cast<std::size_t>(n));
    ASSERT_EQ(cpu::gesdd<T>('N', m, n, a.data(), a.ld, s.data(), nullptr, 1, nullptr, 1), 0);
    for (I i = r; i < n; ++i) EXPECT_LE(s[i], tol<T>(m) * s[0]);
  }
}

// jobz 'O': the thin factor of the long side (U if m >= n, else V^H) overwrites A.
TYPED_TEST(Provider, GesddOverwrite) {
  using T = TypeParam;
  // The small shapes take the CBLAS provider's JacobiSVD path (min(m, n) <= 4, max <= 16).
  for (auto [m, n] :
       std::vector<std::pair<I, I>>{{2, 2}, {4, 3}, {3, 4}, {12, 4}, {12, 7}, {7, 12}, {40, 25}, {25, 40}}) {
    SCOPED_TRACE("m " + std::to_string(m) + " n " + std::to_string(n));
    const I k = std::min(m, n);
    const Mat<T> a0 = random<T>(m, n);
    Mat<T> a = a0, u(m, m), vt(n, n);
    std::vector<R<T>> s(static_cast<std::size_t>(k));
    ASSERT_EQ(cpu::gesdd<T>('O', m, n, a.data(), a.ld, s.data(), u.data(), u.ld, vt.data(), vt.ld), 0);
    const Mat<T> uk = m >= n ? block(a, m, k) : block(u, m, k);
    const Mat<T> vk = m >= n ? block(vt, k, n) : block(a, k, n);
    EXPECT_LE(orth_err(uk), tol<T>(m));
    EXPECT_LE(orth_err(op(vk, cpu::Trans::C)), tol<T>(n));
    Mat<T> us = uk;
    for (I j = 0; j < k; ++j)
      for (I i = 0; i < m; ++i) us(i, j) *= T(s[j]);
    EXPECT_LE(diff(mul(us, vk), a0), tol<T>(std::max(m, n)) * fro(a0));
  }
}

// An infinite entry is info 1, and a failure leaves nothing behind: the next matrix of the same
// shape (a reused solver on the small-SVD path) succeeds.
TYPED_TEST(Provider, GesddRecoversAfterAnInfiniteEntry) {
  using T = TypeParam;
  for (auto [m, n] : std::vector<std::pair<I, I>>{{2, 2}, {3, 2}, {2, 4}}) {
    SCOPED_TRACE("m " + std::to_string(m) + " n " + std::to_string(n));
    const I k = std::min(m, n);
    for (char jobz : {'N', 'S'}) {
      Mat<T> bad = random<T>(m, n), u(m, k), vt(k, n);
      bad(0, 0) = T(std::numeric_limits<R<T>>::infinity());
      std::vector<R<T>> s(static_cast<std::size_t>(k));
      EXPECT_EQ(cpu::gesdd<T>(jobz, m, n, bad.data(), bad.ld, s.data(), u.data(), u.ld, vt.data(), vt.ld), 1);
      check_svd(random<T>(m, n), jobz);
    }
  }
}

// ---- calls, empty sizes, argument errors -----------------------------------------------------

TYPED_TEST(Provider, EmptySizesCountOneCallAndTouchNothing) {
  using T = TypeParam;
  cpu::reset_provider_calls();
  T* none = nullptr;
  R<T>* rnone = nullptr;
  std::int32_t* pnone = nullptr;
  cpu::gemm<T>(cpu::Trans::N, cpu::Trans::N, 0, 3, 2, T(1), none, 1, none, 2, T(0), none, 1);
  cpu::trsm<T>(cpu::Side::Left, cpu::Uplo::Lower, cpu::Trans::N, cpu::Diag::NonUnit, 0, 4, T(1), none, 1, none, 1);
  cpu::trsm<T>(cpu::Side::Right, cpu::Uplo::Upper, cpu::Trans::C, cpu::Diag::Unit, 4, 0, T(1), none, 1, none, 4);
  cpu::trmm<T>(cpu::Side::Left, cpu::Uplo::Upper, cpu::Trans::T, cpu::Diag::Unit, 0, 4, T(1), none, 1, none, 1);
  EXPECT_EQ(cpu::getrf<T>(0, 5, none, 1, pnone), 0);
  EXPECT_EQ(cpu::getrf<T>(5, 0, none, 5, pnone), 0);
  EXPECT_EQ(cpu::getrs<T>(cpu::Trans::N, 0, 2, none, 1, pnone, none, 1), 0);
  EXPECT_EQ(cpu::getrs<T>(cpu::Trans::T, 3, 0, none, 3, pnone, none, 3), 0);
  EXPECT_EQ(cpu::potrf<T>(cpu::Uplo::Upper, 0, none, 1), 0);
  EXPECT_EQ(cpu::geqrf<T>(0, 4, none, 1, none), 0);
  EXPECT_EQ(cpu::orgqr<T>(4, 0, 0, none, 4, none), 0);
  EXPECT_EQ(cpu::syevd<T>(true, cpu::Uplo::Lower, 0, none, 1, rnone), 0);
  EXPECT_EQ(cpu::gesdd<T>('S', 0, 3, none, 1, rnone, none, 1, none, 1), 0);
  EXPECT_EQ(cpu::provider_calls(cpu::Routine::gemm), 1);
  EXPECT_EQ(cpu::provider_calls(cpu::Routine::trsm), 2);
  EXPECT_EQ(cpu::provider_calls(cpu::Routine::trmm), 1);
  EXPECT_EQ(cpu::provider_calls(cpu::Routine::getrf), 2);
  EXPECT_EQ(cpu::provider_calls(cpu::Routine::getrs), 2);
  EXPECT_EQ(cpu::provider_calls(cpu::Routine::potrf), 1);
  EXPECT_EQ(cpu::provider_calls(cpu::Routine::geqrf), 1);
  EXPECT_EQ(cpu::provider_calls(cpu::Routine::orgqr), 1);
  EXPECT_EQ(cpu::provider_calls(cpu::Routine::syevd), 1);
  EXPECT_EQ(cpu::provider_calls(cpu::Routine::gesdd), 1);
}

TYPED_TEST(Provider, EveryRoutineCountsOnePerCall) {
  using T = TypeParam;
  const I n = 4;
  Mat<T> a = hpd<T>(n), b = random<T>(n, 2), c(n, 2);
  std::vector<std::int32_t> ipiv(n);
  std::vector<T> tau(n);
  std::vector<R<T>> w(n);
  cpu::reset_provider_calls();
  cpu::gemm<T>(cpu::Trans::N, cpu::Trans::N, n, 2, n, T(1), a.data(), a.ld, b.data(), b.ld, T(0), c.data(), c.ld);
  cpu::trsm<T>(cpu::Side::Left, cpu::Uplo::Lower, cpu::Trans::N, cpu::Diag::NonUnit, n, 2, T(1), a.data(), a.ld,
               b.data(), b.ld);
  cpu::trmm<T>(cpu::Side::Left, cpu::Uplo::Lower, cpu::Trans::N, cpu::Diag::NonUnit, n, 2, T(1), a.data(), a.ld,
               b.data(), b.ld);
  Mat<T> f = a;
  EXPECT_EQ(cpu::potrf<T>(cpu::Uplo::Lower, n, f.data(), f.ld), 0);
  f = a;
  EXPECT_EQ(cpu::getrf<T>(n, n, f.data(), f.ld, ipiv.data()), 0);
  EXPECT_EQ(cpu::getrs<T>(cpu::Trans::N, n, 2, f.data(), f.ld, ipiv.data(), b.data(), b.ld), 0);
  f = a;
  EXPECT_EQ(cpu::geqrf<T>(n, n, f.data(), f.ld, tau.data()), 0);
  EXPECT_EQ(cpu::orgqr<T>(n, n, n, f.data(), f.ld, tau.data()), 0);
  f = a;
  EXPECT_EQ(cpu::syevd<T>(false, cpu::Uplo::Upper, n, f.data(), f.ld, w.data()), 0);
  f = a;
  EXPECT_EQ(cpu::gesdd<T>('N', n, n, f.data(), f.ld, w.data(), nullptr, 1, nullptr, 1), 0);
  f = a;
  std::vector<std::complex<R<T>>> ew(n);
  EXPECT_EQ(cpu::geev<T>(false, n, f.data(), f.ld, ew.data(), nullptr, 1), 0);
  for (int r = 0; r < static_cast<int>(cpu::Routine::kCount); ++r)
    EXPECT_EQ(cpu::provider_calls(static_cast<cpu::Routine>(r)), 1) << cpu::routine_name(static_cast<cpu::Routine>(r));
}

// geev: A v_j = w_j v_j with unit 2-norm columns, for a matrix with real and complex eigenvalues
// (real types: the conjugate pairs unpacked into complex vectors); leading dimensions above n.
TYPED_TEST(Provider, GeevEigenpairs) {
  using T = TypeParam;
  using C = std::complex<R<T>>;
  for (I n : {1, 2, 5, 12}) {
    const Mat<T> a = random<T>(n, n);
    Mat<T> f = a;
    std::vector<C> w(static_cast<std::size_t>(n));
    const I ldv = n + 2;
    std::vector<C> v(static_cast<std::size_t>(ldv * n));
    ASSERT_EQ(cpu::geev<T>(true, n, f.data(), f.ld, w.data(), v.data(), ldv), 0);
    double scale = 0;
    for (I j = 0; j < n; ++j)
      for (I i = 0; i < n; ++i) scale = std::max(scale, static_cast<double>(std::abs(a(i, j))));
    const double tol = (std::is_same_v<R<T>, float> ? 1e-4 : 1e-12) * static_cast<double>(n) * scale;
    for (I j = 0; j < n; ++j) {
      double norm = 0;
      for (I i = 0; i < n; ++i) {
        C av = 0;
        for (I k = 0; k < n; ++k) av += C(a(i, k)) * v[static_cast<std::size_t>(k + j * ldv)];
        EXPECT_LE(std::abs(av - w[static_cast<std::size_t>(j)] * v[static_cast<std::size_t>(i + j * ldv)]), tol)
            << "n " << n << ", eigenpair " << j;
        norm += std::norm(v[static_cast<std::size_t>(i + j * ldv)]);
      }
      EXPECT_NEAR(std::sqrt(norm), 1.0, 1e-5) << "n " << n << ", eigenpair " << j;
    }
    // Values only (another path of the QR iteration): they sum to the trace.
    f = a;
    std::vector<C> w2(static_cast<std::size_t>(n));
    ASSERT_EQ(cpu::geev<T>(false, n, f.data(), f.ld, w2.data(), nullptr, 1), 0);
    C sum = 0, trace = 0;
    for (I j = 0; j < n; ++j) sum += w2[static_cast<std::size_t>(j)], trace += C(a(j, j));
    EXPECT_LE(std::abs(sum - trace), tol) << "n " << n;
  }
}

// A negative LAPACK info is a tenax bug: raised as an internal tenax::Error by every provider.
TYPED_TEST(Provider, ArgumentErrorThrows) {
  using T = TypeParam;
  Mat<T> a = random<T>(3, 3);
  std::vector<std::int32_t> ipiv(3);
  EXPECT_THROW(cpu::getrf<T>(3, 3, a.data(), 2, ipiv.data()), tenax::Error);
  EXPECT_THROW(cpu::potrf<T>(cpu::Uplo::Lower, 3, a.data(), 1), tenax::Error);
}

TEST(ProviderName, IsNotEmpty) { EXPECT_FALSE(cpu::provider_name().empty()); }
