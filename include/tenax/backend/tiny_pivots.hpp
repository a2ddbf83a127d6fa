#pragma once
// Subnormal pivots. BLAS triangular solves (OpenBLAS's and Eigen's trsm kernels) and OpenBLAS's
// getrf multiply by the reciprocal of a diagonal entry or pivot; for a subnormal one (nonzero and
// below 2.2e-308 in f64, 1.2e-38 in f32) the reciprocal overflows to inf, and a finite,
// nonsingular system gets inf or NaN with info 0. The providers' trsm and getrs scale such a
// system by powers of two first (src/cpu/scaled_trsm.hpp); getrf_exact refactors with getrf2,
// which divides by a pivot below the safe minimum instead.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "tenax/backend/cpu_provider.hpp"
#include "tenax/core/scalar_parts.hpp"

namespace tenax::cpu {

// Whether x is nonzero and its largest component is subnormal.
template <class T>
bool tiny_pivot(const T& x) {
  using R = real_t<T>;
  const R a = max_component(x);
  return a > R(0) && a < std::numeric_limits<R>::min();
}

// Whether any of the first k diagonal entries of A (leading dimension lda) is tiny_pivot.
template <class T>
bool has_tiny_diagonal(std::int64_t k, const T* A, std::int64_t lda) {
  for (std::int64_t i = 0; i < k; ++i)
    if (tiny_pivot(A[i + i * lda])) return true;
  return false;
}

// getrf of the m x n matrix in A; when a pivot is subnormal, reload(A) writes the matrix into A
// again and getrf2 factors it. The result is getrf's otherwise (the check reads min(m, n) pivots).
template <class T, class Reload>
int getrf_exact(std::int64_t m, std::int64_t n, T* A, std::int64_t lda, std::int32_t* ipiv, Reload&& reload) {
  const int info = getrf<T>(m, n, A, lda, ipiv);
  if (!has_tiny_diagonal(std::min(m, n), A, lda)) return info;
  reload(A);
  return getrf2<T>(m, n, A, lda, ipiv);
}

}  // namespace tenax::cpu
