// The Eigen provider: gesdd (BDCSVD) for float (one file per dtype: BDCSVD is the slowest part
// of the library to compile, and separate files build in parallel).
#include "eigen/gesdd.hpp"

namespace tenax::cpu {

template <>
int gesdd<float>(char jobz, std::int64_t m, std::int64_t n, float* A, std::int64_t lda, real_t<float>* s, float* U,
                 std::int64_t ldu, float* VT, std::int64_t ldvt) {
  count_call(Routine::gesdd);
  Eigen::BDCSVD<Mat<float>> svd;
  return eigen_gesdd<float>(svd, jobz, m, n, A, lda, s, U, ldu, VT, ldvt);
}

}  // namespace tenax::cpu
