// syevd on Eigen's SelfAdjointEigenSolver (declared in eigen_syevd.hpp).
#include "eigen_syevd.hpp"

#include "eigen/common.hpp"

namespace tenax::cpu {
namespace {

// Up to this order a thread keeps its solver and input copy between calls, so a loop over small
// matrices reuses their storage (Eigen still allocates a small workspace per call for the
// eigenvectors). The solver sets its status on every call, so a failure does not linger.
constexpr std::int64_t kKeptOrder = 64;

template <class T>
int solve_into(Eigen::SelfAdjointEigenSolver<Mat<T>>& es, Mat<T>& h, bool vectors, Uplo uplo, std::int64_t n, T* A,
               std::int64_t lda, real_t<T>* w) {
  MMap<T> a = mmap(A, n, n, lda);
  // SelfAdjointEigenSolver reads the lower triangle: that of A, or of A^H for Upper. Like
  // LAPACK's hetrd, the imaginary parts of the diagonal are taken as zero.
  h.resize(n, n);
  if (uplo == Uplo::Lower)
    h.template triangularView<Eigen::Lower>() = a;
  else
    h.template triangularView<Eigen::Lower>() = a.adjoint();
  if constexpr (is_complex_v<T>) h.diagonal() = h.diagonal().real().template cast<T>();
  es.compute(h, vectors ? Eigen::ComputeEigenvectors : Eigen::EigenvaluesOnly);
  if (es.info() != Eigen::Success) return 1;
  VMap<real_t<T>>(w, n) = es.eigenvalues();
  if (vectors) a = es.eigenvectors();
  return 0;
}

}  // namespace

template <class T>
int eigen_syevd(bool vectors, Uplo uplo, std::int64_t n, T* A, std::int64_t lda, real_t<T>* w) {
  if (n == 0) return 0;
  check_arg(n >= 0, "syevd", 3);
  check_arg(ld_ok(lda, n), "syevd", 5);
  if (n <= kKeptOrder) {
    thread_local Eigen::SelfAdjointEigenSolver<Mat<T>> es;
    thread_local Mat<T> h;
    return solve_into(es, h, vectors, uplo, n, A, lda, w);
  }
  Eigen::SelfAdjointEigenSolver<Mat<T>> es;
  Mat<T> h;
  return solve_into(es, h, vectors, uplo, n, A, lda, w);
}

template int eigen_syevd<float>(bool, Uplo, std::int64_t, float*, std::int64_t, float*);
template int eigen_syevd<double>(bool, Uplo, std::int64_t, double*, std::int64_t, double*);
template int eigen_syevd<std::complex<float>>(bool, Uplo, std::int64_t, std::complex<float>*, std::int64_t, float*);
template int eigen_syevd<std::complex<double>>(bool, Uplo, std::int64_t, std::complex<double>*, std::int64_t, double*);

}  // namespace tenax::cpu
