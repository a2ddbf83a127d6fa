#pragma once
// gesdd on Eigen's JacobiSVD (src/cpu/eigen_small_gesdd.cpp), for the CBLAS provider's smallest
// matrices: at min(m, n) <= 4 it is 2-10x faster than LAPACK's gesdd (see kSmallJacobiSvd in
// provider_cblas.cpp), and Jacobi is at least as accurate as divide and conquer.
#include <cstdint>

#include "tenax/backend/cpu_provider.hpp"

namespace tenax::cpu {

// LAPACK's gesdd contract (jobz N, S, O or A); returns 0, or 1 for an infinite entry. Not counted
// (the caller counts its gesdd).
template <class T>
int eigen_small_gesdd(char jobz, std::int64_t m, std::int64_t n, T* A, std::int64_t lda, real_t<T>* s, T* U,
                      std::int64_t ldu, T* VT, std::int64_t ldvt);

}  // namespace tenax::cpu
