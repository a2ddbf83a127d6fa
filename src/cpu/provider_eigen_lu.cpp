// The Eigen provider: getrf and getrs.
#include "eigen/common.hpp"
#include "scaled_trsm.hpp"

namespace tenax::cpu {
namespace {

// ---- LU --------------------------------------------------------------------------------------

// i?amax's measure: |x| for real, |Re x| + |Im x| for complex.
template <class T>
real_t<T> abs1(const T& x) {
  if constexpr (is_complex_v<T>)
    return std::abs(x.real()) + std::abs(x.imag());
  else
    return std::abs(x);
}

// i?amax: the first index maximizing abs1 (n >= 1).
template <class T>
Index iamax(const T* x, Index n) {
  Index best = 0;
  real_t<T> big = abs1(x[0]);
  for (Index i = 1; i < n; ++i) {
    const real_t<T> v = abs1(x[i]);
    if (v > big) {
      big = v;
      best = i;
    }
  }
  return best;
}

// laswp on ncols columns: the interchanges ipiv[k1..k2) (1-based, relative to A's first row),
// forward or in reverse; columns in chunks of 32 like LAPACK, for the cache.
template <class T>
void laswp(T* A, Index lda, Index ncols, Index k1, Index k2, const std::int32_t* ipiv, bool forward) {
  constexpr Index kChunk = 32;
  for (Index j0 = 0; j0 < ncols; j0 += kChunk) {
    const Index j1 = std::min(ncols, j0 + kChunk);
    auto swap_row = [&](Index i) {
      const Index p = ipiv[i] - 1;
      if (p == i) return;
      for (Index j = j0; j < j1; ++j) std::swap(A[i + j * lda], A[p + j * lda]);
    };
    if (forward)
      for (Index i = k1; i < k2; ++i) swap_row(i);
    else
      for (Index i = k2 - 1; i >= k1; --i) swap_row(i);
  }
}

// Unblocked right-looking LU (getf2).
template <class T>
int getf2(Index m, Index n, T* A, Index lda, std::int32_t* ipiv) {
  using R = real_t<T>;
  const R sfmin = std::numeric_limits<R>::min();
  MMap<T> a = mmap(A, m, n, lda);
  const Index mn = std::min(m, n);
  int info = 0;
  for (Index j = 0; j < mn; ++j) {
    const Index p = j + iamax(A + j + j * lda, m - j);
    ipiv[j] = static_cast<std::int32_t>(p + 1);
    if (a(p, j) != T(0)) {
      if (p != j) a.row(j).swap(a.row(p));
      if (j + 1 < m) {
        if (std::abs(a(j, j)) >= sfmin) {
          a.col(j).tail(m - j - 1) *= T(1) / a(j, j);
        } else {
          // A pivot below the safe minimum: divide instead, with both sides scaled by the power of
          // two that brings the pivot to [0.5, 1) (Eigen's vectorized complex division forms
          // |pivot|^2, which underflows; |entries| <= 2 |pivot| here, so nothing overflows).
          const int e = -std::ilogb(max_component(a(j, j))) - 1;
          const T pivot = ldexp_each(a(j, j), e);
          for (Index i = j + 1; i < m; ++i) a(i, j) = ldexp_each(a(i, j), e) / pivot;
        }
      }
    } else if (info == 0) {
      info = static_cast<int>(j + 1);
    }
    if (j + 1 < mn)
      a.bottomRightCorner(m - j - 1, n - j - 1).noalias() -= a.col(j).tail(m - j - 1) * a.row(j).tail(n - j - 1);
  }
  return info;
}

// LAPACK's recursive getrf2, with getf2 below kLuLeaf columns.
template <class T>
int getrf_rec(Index m, Index n, T* A, Index lda, std::int32_t* ipiv) {
  constexpr Index kLuLeaf = 16;
  const Index mn = std::min(m, n);
  if (mn <= 1 || n <= kLuLeaf) return getf2(m, n, A, lda, ipiv);
  const Index n1 = mn / 2, n2 = n - n1;
  int info = getrf_rec(m, n1, A, lda, ipiv);
  T* A12 = A + n1 * lda;
  T* A21 = A + n1;
  T* A22 = A + n1 + n1 * lda;
  laswp(A12, lda, n2, 0, n1, ipiv, true);
  MMap<T> a12 = mmap(A12, n1, n2, lda);
  cmap(A, n1, n1, lda).template triangularView<Eigen::UnitLower>().solveInPlace(a12);
  MMap<T> a22 = mmap(A22, m - n1, n2, lda);
  a22.noalias() -= cmap(A21, m - n1, n1, lda) * a12;
  const int info2 = getrf_rec(m - n1, n2, A22, lda, ipiv + n1);
  if (info == 0 && info2 > 0) info = info2 + static_cast<int>(n1);
  for (Index i = n1; i < mn; ++i) ipiv[i] += static_cast<std::int32_t>(n1);
  laswp(A, lda, n1, n1, mn, ipiv, true);
  return info;
}

template <class T>
int eigen_getrf(std::int64_t m, std::int64_t n, T* A, std::int64_t lda, std::int32_t* ipiv) {
  count_call(Routine::getrf);
  if (m == 0 || n == 0) return 0;
  check_arg(m >= 0, "getrf", 1);
  check_arg(n >= 0, "getrf", 2);
  check_arg(ld_ok(lda, m), "getrf", 4);
  return getrf_rec<T>(m, n, A, lda, ipiv);
}

// Eigen's triangular solves multiply by the reciprocal of the diagonal, so getrs on a U with a
// subnormal pivot goes through scaled_trsm (op N) or scaled_getrs_transposed (ops T, C), with
// this left-side solve: op(tri)^-1 B for the upper (non-unit) or lower (unit) triangle of a.
template <class T>
void left_solve(Uplo uplo, Diag diag, Trans t, std::int64_t m, std::int64_t k, const T* a, std::int64_t la, T* x,
                std::int64_t lx) {
  const CMap<T> tri = cmap(a, m, m, la);
  MMap<T> b = mmap(x, m, k, lx);
  // op(tri) of an upper triangle is lower for T and C: the view's own triangle.
  const bool upper = (uplo == Uplo::Upper) == (t == Trans::N), unit = diag == Diag::Unit;
  const auto run = [&](const auto& view) {
    if (upper && !unit)
      view.template triangularView<Eigen::Upper>().solveInPlace(b);
    else if (upper)
      view.template triangularView<Eigen::UnitUpper>().solveInPlace(b);
    else if (!unit)
      view.template triangularView<Eigen::Lower>().solveInPlace(b);
    else
      view.template triangularView<Eigen::UnitLower>().solveInPlace(b);
  };
  if (t == Trans::N)
    run(tri);
  else if (t == Trans::T)
    run(tri.transpose());
  else
    run(tri.adjoint());
}

template <class T>
int eigen_getrs(Trans trans, std::int64_t n, std::int64_t nrhs, const T* LU, std::int64_t lda, const std::int32_t* ipiv,
                T* B, std::int64_t ldb) {
  count_call(Routine::getrs);
  if (n == 0 || nrhs == 0) return 0;
  check_arg(n >= 0, "getrs", 2);
  check_arg(nrhs >= 0, "getrs", 3);
  check_arg(ld_ok(lda, n), "getrs", 5);
  check_arg(ld_ok(ldb, n), "getrs", 8);
  const CMap<T> lu = cmap(LU, n, n, lda);
  MMap<T> b = mmap(B, n, nrhs, ldb);
  const bool tiny = has_tiny_diagonal(n, LU, lda);
  switch (trans) {
    case Trans::N:  // A = P L U: X = U^-1 L^-1 P^T B
      laswp(B, ldb, nrhs, 0, n, ipiv, true);
      lu.template triangularView<Eigen::UnitLower>().solveInPlace(b);
      if (tiny)
        scaled_trsm(Side::Left, Uplo::Upper, trans, n, nrhs, T(1), LU, lda, B, ldb,
                    [](Side, Uplo u, Trans t, std::int64_t m, std::int64_t k, T, const T* a, std::int64_t la, T* x,
                       std::int64_t lx) { left_solve(u, Diag::NonUnit, t, m, k, a, la, x, lx); });
      else
        lu.template triangularView<Eigen::Upper>().solveInPlace(b);
      break;
    case Trans::T:  // A^T = U^T L^T P^T: X = P L^-T U^-T B
    case Trans::C:
      if (tiny) {
        scaled_getrs_transposed(trans, n, nrhs, LU, lda, B, ldb, left_solve<T>);
      } else if (trans == Trans::T) {
        lu.transpose().template triangularView<Eigen::Lower>().solveInPlace(b);
        lu.transpose().template triangularView<Eigen::UnitUpper>().solveInPlace(b);
      } else {
        lu.adjoint().template triangularView<Eigen::Lower>().solveInPlace(b);
        lu.adjoint().template triangularView<Eigen::UnitUpper>().solveInPlace(b);
      }
      laswp(B, ldb, nrhs, 0, n, ipiv, false);
      break;
  }
  return 0;
}

}  // namespace

template <>
int getrf<float>(std::int64_t m, std::int64_t n, float* A, std::int64_t lda, std::int32_t* ipiv) {
  return eigen_getrf<float>(m, n, A, lda, ipiv);
}
template <>
int getrs<float>(Trans trans, std::int64_t n, std::int64_t nrhs, const float* LU, std::int64_t lda,
                 const std::int32_t* ipiv, float* B, std::int64_t ldb) {
  return eigen_getrs<float>(trans, n, nrhs, LU, lda, ipiv, B, ldb);
}
template <>
int getrf<double>(std::int64_t m, std::int64_t n, double* A, std::int64_t lda, std::int32_t* ipiv) {
  return eigen_getrf<double>(m, n, A, lda, ipiv);
}
template <>
int getrs<double>(Trans trans, std::int64_t n, std::int64_t nrhs, const double* LU, std::int64_t lda,
                  const std::int32_t* ipiv, double* B, std::int64_t ldb) {
  return eigen_getrs<double>(trans, n, nrhs, LU, lda, ipiv, B, ldb);
}
template <>
int getrf<std::complex<float>>(std::int64_t m, std::int64_t n, std::complex<float>* A, std::int64_t lda,
                               std::int32_t* ipiv) {
  return eigen_getrf<std::complex<float>>(m, n, A, lda, ipiv);
}
template <>
int getrs<std::complex<float>>(Trans trans, std::int64_t n, std::int64_t nrhs, const std::complex<float>* LU,
                               std::int64_t lda, const std::int32_t* ipiv, std::complex<float>* B, std::int64_t ldb) {
  return eigen_getrs<std::complex<float>>(trans, n, nrhs, LU, lda, ipiv, B, ldb);
}
template <>
int getrf<std::complex<double>>(std::int64_t m, std::int64_t n, std::complex<double>* A, std::int64_t lda,
                                std::int32_t* ipiv) {
  return eigen_getrf<std::complex<double>>(m, n, A, lda, ipiv);
}
template <>
int getrs<std::complex<double>>(Trans trans, std::int64_t n, std::int64_t nrhs, const std::complex<double>* LU,
                                std::int64_t lda, const std::int32_t* ipiv, std::complex<double>* B, std::int64_t ldb) {
  return eigen_getrs<std::complex<double>>(trans, n, nrhs, LU, lda, ipiv, B, ldb);
}

// getf2 already divides by a pivot below the safe minimum: getrf2 is getrf.
template <>
int getrf2<float>(std::int64_t m, std::int64_t n, float* A, std::int64_t lda, std::int32_t* ipiv) {
  return eigen_getrf<float>(m, n, A, lda, ipiv);
}
template <>
int getrf2<double>(std::int64_t m, std::int64_t n, double* A, std::int64_t lda, std::int32_t* ipiv) {
  return eigen_getrf<double>(m, n, A, lda, ipiv);
}
template <>
int getrf2<std::complex<float>>(std::int64_t m, std::int64_t n, std::complex<float>* A, std::int64_t lda,
                                std::int32_t* ipiv) {
  return eigen_getrf<std::complex<float>>(m, n, A, lda, ipiv);
}
template <>
int getrf2<std::complex<double>>(std::int64_t m, std::int64_t n, std::complex<double>* A, std::int64_t lda,
                                 std::int32_t* ipiv) {
  return eigen_getrf<std::complex<double>>(m, n, A, lda, ipiv);
}

}  // namespace tenax::cpu
