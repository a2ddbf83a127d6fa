// The Eigen provider: gesdd (BDCSVD) for std::complex<double> (one file per dtype: BDCSVD is the slowest part
// of the library to compile, and separate files build in parallel).
#include "eigen/gesdd.hpp"

namespace tenax::cpu {

template <>
int gesdd<std::complex<double>>(char jobz, std::int64_t m, std::int64_t n, std::complex<double>* A, std::int64_t lda,
                                real_t<std::complex<double>>* s, std::complex<double>* U, std::int64_t ldu,
                                std::complex<double>* VT, std::int64_t ldvt) {
  count_call(Routine::gesdd);
  Eigen::BDCSVD<Mat<std::complex<double>>> svd;
  return eigen_gesdd<std::complex<double>>(svd, jobz, m, n, A, lda, s, U, ldu, VT, ldvt);
}

}  // namespace tenax::cpu
