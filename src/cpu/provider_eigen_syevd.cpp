// The Eigen provider: syevd (SelfAdjointEigenSolver).
#include "eigen/common.hpp"

namespace tenax::cpu {
namespace {

// ---- eigen / singular values -----------------------------------------------------------------

template <class T>
int eigen_syevd(bool vectors, Uplo uplo, std::int64_t n, T* A, std::int64_t lda, real_t<T>* w) {
  count_call(Routine::syevd);
  if (n == 0) return 0;
  check_arg(n >= 0, "syevd", 3);
  check_arg(ld_ok(lda, n), "syevd", 5);
  MMap<T> a = mmap(A, n, n, lda);
  // SelfAdjointEigenSolver reads the lower triangle: that of A, or of A^H for Upper. Like
  // LAPACK's hetrd, the imaginary parts of the diagonal are taken as zero.
  Mat<T> h(n, n);
  if (uplo == Uplo::Lower)
    h.template triangularView<Eigen::Lower>() = a;
  else
    h.template triangularView<Eigen::Lower>() = a.adjoint();
  if constexpr (is_complex_v<T>) h.diagonal() = h.diagonal().real().template cast<T>();
  Eigen::SelfAdjointEigenSolver<Mat<T>> es(h, vectors ? Eigen::ComputeEigenvectors : Eigen::EigenvaluesOnly);
  if (es.info() != Eigen::Success) return 1;
  VMap<real_t<T>>(w, n) = es.eigenvalues();
  if (vectors) a = es.eigenvectors();
  return 0;
}

}  // namespace

template <>
int syevd<float>(bool vectors, Uplo uplo, std::int64_t n, float* A, std::int64_t lda, real_t<float>* w) {
  return eigen_syevd<float>(vectors, uplo, n, A, lda, w);
}
template <>
int syevd<double>(bool vectors, Uplo uplo, std::int64_t n, double* A, std::int64_t lda, real_t<double>* w) {
  return eigen_syevd<double>(vectors, uplo, n, A, lda, w);
}
template <>
int syevd<std::complex<float>>(bool vectors, Uplo uplo, std::int64_t n, std::complex<float>* A, std::int64_t lda,
                               real_t<std::complex<float>>* w) {
  return eigen_syevd<std::complex<float>>(vectors, uplo, n, A, lda, w);
}
template <>
int syevd<std::complex<double>>(bool vectors, Uplo uplo, std::int64_t n, std::complex<double>* A, std::int64_t lda,
                                real_t<std::complex<double>>* w) {
  return eigen_syevd<std::complex<double>>(vectors, uplo, n, A, lda, w);
}

}  // namespace tenax::cpu
