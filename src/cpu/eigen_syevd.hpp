#pragma once
// syevd on Eigen's SelfAdjointEigenSolver (src/cpu/eigen_syevd.cpp): the whole of the Eigen
// provider's syevd, and the CBLAS provider's for small matrices with vectors, where it is 1.5-3x
// faster than LAPACK's syevd (see kSmallEigenSyevd in provider_cblas.cpp).
#include <cstdint>

#include "tenax/backend/cpu_provider.hpp"

namespace tenax::cpu {

// LAPACK's syevd/heevd contract: A (n x n, leading dimension lda) holds the Uplo triangle of a
// Hermitian matrix (the imaginary parts of its diagonal taken as zero); w gets the eigenvalues in
// ascending order and, with vectors, A the orthonormal eigenvectors. Returns 0, or 1 when the
// iteration did not converge. Not counted (the caller counts its syevd).
template <class T>
int eigen_syevd(bool vectors, Uplo uplo, std::int64_t n, T* A, std::int64_t lda, real_t<T>* w);

}  // namespace tenax::cpu
