// The Eigen provider: gesdd (BDCSVD) for double (one file per dtype: BDCSVD is the slowest part
// of the library to compile, and separate files build in parallel).
#include "eigen/gesdd.hpp"

namespace tenax::cpu {

template <>
int gesdd<double>(char jobz, std::int64_t m, std::int64_t n, double* A, std::int64_t lda, real_t<double>* s, double* U,
                  std::int64_t ldu, double* VT, std::int64_t ldvt) {
  count_call(Routine::gesdd);
  Eigen::BDCSVD<Mat<double>> svd;
  return eigen_gesdd<double>(svd, jobz, m, n, A, lda, s, U, ldu, VT, ldvt);
}

}  // namespace tenax::cpu
