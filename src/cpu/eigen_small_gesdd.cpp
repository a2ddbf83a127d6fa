// gesdd on Eigen's JacobiSVD (declared in eigen_small_gesdd.hpp).
#include "eigen_small_gesdd.hpp"

#include <memory>

#include "eigen/gesdd.hpp"

namespace tenax::cpu {

template <class T>
int eigen_small_gesdd(char jobz, std::int64_t m, std::int64_t n, T* A, std::int64_t lda, real_t<T>* s, T* U,
                      std::int64_t ldu, T* VT, std::int64_t ldvt) {
  // Each thread keeps its solver: it resizes its working storage only when the shape or the options
  // change. A failed solver is replaced: JacobiSVD resets its status only when it reallocates, so
  // it would report the failure again for every later matrix of the same shape. (Destroyed and
  // built again in place: a move assignment would copy a fresh solver's uninitialised members.)
  thread_local Eigen::JacobiSVD<Mat<T>> svd;
  const int info = eigen_gesdd<T>(svd, jobz, m, n, A, lda, s, U, ldu, VT, ldvt);
  if (info != 0) {
    std::destroy_at(&svd);
    std::construct_at(&svd);
  }
  return info;
}

#define TENAX_SMALL_GESDD(T)                                                                                          \
  template int eigen_small_gesdd<T>(char, std::int64_t, std::int64_t, T*, std::int64_t, real_t<T>*, T*, std::int64_t, \
                                    T*, std::int64_t);
TENAX_SMALL_GESDD(float)
TENAX_SMALL_GESDD(double)
TENAX_SMALL_GESDD(std::complex<float>)
TENAX_SMALL_GESDD(std::complex<double>)
#undef TENAX_SMALL_GESDD

}  // namespace tenax::cpu
