// The Eigen provider: syevd (SelfAdjointEigenSolver, src/cpu/eigen_syevd.cpp).
#include <complex>

#include "eigen_syevd.hpp"

namespace tenax::cpu {

template <>
int syevd<float>(bool vectors, Uplo uplo, std::int64_t n, float* A, std::int64_t lda, real_t<float>* w) {
  count_call(Routine::syevd);
  return eigen_syevd<float>(vectors, uplo, n, A, lda, w);
}
template <>
int syevd<double>(bool vectors, Uplo uplo, std::int64_t n, double* A, std::int64_t lda, real_t<double>* w) {
  count_call(Routine::syevd);
  return eigen_syevd<double>(vectors, uplo, n, A, lda, w);
}
template <>
int syevd<std::complex<float>>(bool vectors, Uplo uplo, std::int64_t n, std::complex<float>* A, std::int64_t lda,
                               real_t<std::complex<float>>* w) {
  count_call(Routine::syevd);
  return eigen_syevd<std::complex<float>>(vectors, uplo, n, A, lda, w);
}
template <>
int syevd<std::complex<double>>(bool vectors, Uplo uplo, std::int64_t n, std::complex<double>* A, std::int64_t lda,
                                real_t<std::complex<double>>* w) {
  count_call(Routine::syevd);
  return eigen_syevd<std::complex<double>>(vectors, uplo, n, A, lda, w);
}

}  // namespace tenax::cpu
