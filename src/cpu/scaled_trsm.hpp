#pragma once
// Triangular solves with a subnormal diagonal entry (see tenax/backend/tiny_pivots.hpp). With
// D = diag(d_i), d_i = 1 for a normal entry and 2^e (e <= 53 in f64, 24 in f32) raising a
// subnormal one to [2 min, 4 min), the system is scaled on both sides (exact):
//   left:   op(A) X = B  <=>  (D op(A) D) X' = D B,  X = D X'
//   right:  X op(A) = B  <=>  X' (D op(A) D) = B D,  X = X' D
// (D op(A) D = op(D A D): entry (i, j) of A times d_i d_j), the provider's own kernel solves, and
// X' is scaled back. Raising the pivot's row keeps an equation whose entries are all tiny at full
// precision; raising its column keeps the unknown X' = X / d finite where X overflows (an exact
// 1 / subnormal), so the other unknowns never meet inf * 0 or inf - inf, and only X's own
// overflowing entries become inf at the end. An unknown smaller than 2^e min loses bits in X'; a
// row or column of A holding values near the overflow threshold next to a subnormal pivot would
// overflow in the scaled copy.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "tenax/backend/tiny_pivots.hpp"

namespace tenax::cpu {

// The power of two that raises the tiny_pivot x to [2 min, 4 min); 1 otherwise.
template <class T>
real_t<T> pivot_scale(const T& x) {
  using R = real_t<T>;
  if (!tiny_pivot(x)) return R(1);
  int e = 0;
  std::frexp(max_component(x), &e);  // a = f 2^e, f in [0.5, 1)
  return std::ldexp(R(1), std::numeric_limits<R>::min_exponent + 1 - e);
}

// x d per component (a complex x times the complex d + 0i would make inf * 0 = NaN when x d
// overflows).
template <class T>
T times(const T& x, real_t<T> d) {
  if constexpr (is_complex_v<T>)
    return T(x.real() * d, x.imag() * d);
  else
    return x * d;
}

// op(A)^-1 B or B op(A)^-1 as trsm (non-unit diagonal), through a scaled copy of A's uplo
// triangle; solve(side, uplo, trans, m, n, alpha, a, lda, B, ldb) is the provider's kernel.
template <class T, class Solve>
void scaled_trsm(Side side, Uplo uplo, Trans trans, std::int64_t m, std::int64_t n, T alpha, const T* A,
                 std::int64_t lda, T* B, std::int64_t ldb, Solve&& solve) {
  using R = real_t<T>;
  const bool left = side == Side::Left;
  const std::int64_t k = left ? m : n;
  std::vector<R> d(static_cast<std::size_t>(k));
  for (std::int64_t i = 0; i < k; ++i) d[static_cast<std::size_t>(i)] = pivot_scale(A[i + i * lda]);
  std::vector<T> a(static_cast<std::size_t>(k * k), T(0));
  for (std::int64_t j = 0; j < k; ++j) {
    const std::int64_t i0 = uplo == Uplo::Upper ? 0 : j, i1 = uplo == Uplo::Upper ? j + 1 : k;
    for (std::int64_t i = i0; i < i1; ++i)
      a[static_cast<std::size_t>(i + j * k)] =
          A[i + j * lda] * (d[static_cast<std::size_t>(i)] * d[static_cast<std::size_t>(j)]);
  }
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i)
      B[i + j * ldb] = times(B[i + j * ldb], d[static_cast<std::size_t>(left ? i : j)]);
  solve(side, uplo, trans, m, n, alpha, a.data(), k, B, ldb);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i)
      B[i + j * ldb] = times(B[i + j * ldb], d[static_cast<std::size_t>(left ? i : j)]);
}

// trsm through the provider's kernel call(side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb),
// by scaled_trsm when the diagonal has a subnormal entry.
template <class T, class Call>
void trsm_with_tiny_pivots(Side side, Uplo uplo, Trans trans, Diag diag, std::int64_t m, std::int64_t n, T alpha,
                           const T* A, std::int64_t lda, T* B, std::int64_t ldb, Call&& call) {
  if (diag == Diag::NonUnit && has_tiny_diagonal(side == Side::Left ? m : n, A, lda)) {
    scaled_trsm(side, uplo, trans, m, n, alpha, A, lda, B, ldb,
                [&](Side s, Uplo u, Trans t, std::int64_t mm, std::int64_t nn, T al, const T* a, std::int64_t la, T* b,
                    std::int64_t lb) { call(s, u, t, Diag::NonUnit, mm, nn, al, a, la, b, lb); });
    return;
  }
  call(side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb);
}

// getrs's op T / C on factors whose U has a subnormal pivot: X = L^-op (U^-op B). The U solve's
// unknowns stay scaled through the L solve, so an overflowing entry of U^-op B (inf) never meets a
// zero of L (inf * 0): with D as above,
//   U^op X = B       <=>  (D U D)^op X' = D B,  X = D X'
//   L^op Y = X       <=>  (D L D^-1)^op Y' = X',  Y = D Y'
// (D L D^-1 has entries l_ij d_i / d_j; |l_ij| <= 1 with partial pivoting). solve(uplo, diag,
// trans, n, nrhs, a, lda, B, ldb) is the provider's left-side triangular solve.
template <class T, class Solve>
void scaled_getrs_transposed(Trans trans, std::int64_t n, std::int64_t nrhs, const T* LU, std::int64_t lda, T* B,
                             std::int64_t ldb, Solve&& solve) {
  using R = real_t<T>;
  std::vector<R> d(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) d[static_cast<std::size_t>(i)] = pivot_scale(LU[i + i * lda]);
  std::vector<T> u(static_cast<std::size_t>(n * n), T(0)), l(static_cast<std::size_t>(n * n), T(0));
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) {
      const T x = LU[i + j * lda];
      const R di = d[static_cast<std::size_t>(i)], dj = d[static_cast<std::size_t>(j)];
      if (i <= j)
        u[static_cast<std::size_t>(i + j * n)] = x * (di * dj);
      else
        l[static_cast<std::size_t>(i + j * n)] = x * di / dj;
    }
  for (std::int64_t j = 0; j < nrhs; ++j)
    for (std::int64_t i = 0; i < n; ++i) B[i + j * ldb] = times(B[i + j * ldb], d[static_cast<std::size_t>(i)]);
  solve(Uplo::Upper, Diag::NonUnit, trans, n, nrhs, u.data(), n, B, ldb);
  solve(Uplo::Lower, Diag::Unit, trans, n, nrhs, l.data(), n, B, ldb);
  for (std::int64_t j = 0; j < nrhs; ++j)
    for (std::int64_t i = 0; i < n; ++i) B[i + j * ldb] = times(B[i + j * ldb], d[static_cast<std::size_t>(i)]);
}

}  // namespace tenax::cpu
