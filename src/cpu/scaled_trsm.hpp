#pragma once
// Triangular solves with a subnormal diagonal entry (see tenax/backend/tiny_pivots.hpp): the
// system is scaled by powers of two (exact) so that every diagonal entry is normal, then solved
// by the provider's own kernel. With D = diag(d_i), d_i = 1 for a normal entry and 2^e (e <= 56
// in f64, 27 in f32) raising a subnormal one to [2 min, 4 min):
//   left,  op N:    A X = B    <=>  (D A) X = D B
//   left,  op T/C:  A^T X = B  <=>  (A D)^T X = D B
//   right, op N:    X A = B    <=>  X (A D) = B D
//   right, op T/C:  X A^T = B  <=>  X (D A)^T = B D
// so A's rows are scaled when (side Left) == (op N), its columns otherwise, and B's rows (left)
// or columns (right). X is unchanged. A row of A or B holding values near the overflow threshold
// next to a subnormal pivot would overflow here; such a system's solution overflows anyway
// unless it cancels exactly.
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
  R a;
  if constexpr (is_complex_v<T>)
    a = std::max(std::abs(x.real()), std::abs(x.imag()));
  else
    a = std::abs(x);
  int e = 0;
  std::frexp(a, &e);  // a = f 2^e, f in [0.5, 1)
  return std::ldexp(R(1), std::numeric_limits<R>::min_exponent + 1 - e);
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
  const bool rows = left == (trans == Trans::N);
  std::vector<T> a(static_cast<std::size_t>(k * k), T(0));
  for (std::int64_t j = 0; j < k; ++j) {
    const std::int64_t i0 = uplo == Uplo::Upper ? 0 : j, i1 = uplo == Uplo::Upper ? j + 1 : k;
    for (std::int64_t i = i0; i < i1; ++i)
      a[static_cast<std::size_t>(i + j * k)] = A[i + j * lda] * d[static_cast<std::size_t>(rows ? i : j)];
  }
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) B[i + j * ldb] *= d[static_cast<std::size_t>(left ? i : j)];
  solve(side, uplo, trans, m, n, alpha, a.data(), k, B, ldb);
}

}  // namespace tenax::cpu
