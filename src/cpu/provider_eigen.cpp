// The Eigen provider: every CPU kernel on Eigen 3.4 alone (no BLAS/LAPACK).
#include <Eigen/Core>
#include <complex>

#include "tenax/backend/cpu_provider.hpp"

namespace tenax::cpu {
namespace {

template <class T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
template <class T>
using CMap = Eigen::Map<const Mat<T>, 0, Eigen::OuterStride<>>;
template <class T>
using MMap = Eigen::Map<Mat<T>, 0, Eigen::OuterStride<>>;

template <class T>
void eigen_gemm(Trans ta, Trans tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* A,
                std::int64_t lda, const T* B, std::int64_t ldb, T beta, T* C, std::int64_t ldc) {
  count_call(Routine::gemm);
  MMap<T> c(C, m, n, Eigen::OuterStride<>(ldc));
  if (beta == T(0))
    c.setZero();
  else if (beta != T(1))
    c *= beta;
  if (k == 0 || m == 0 || n == 0) return;
  CMap<T> a(A, ta == Trans::N ? m : k, ta == Trans::N ? k : m, Eigen::OuterStride<>(lda));
  CMap<T> b(B, tb == Trans::N ? k : n, tb == Trans::N ? n : k, Eigen::OuterStride<>(ldb));
  auto apply_b = [&](const auto& opa) {
    switch (tb) {
      case Trans::N:
        c.noalias() += alpha * opa * b;
        break;
      case Trans::T:
        c.noalias() += alpha * opa * b.transpose();
        break;
      case Trans::C:
        c.noalias() += alpha * opa * b.adjoint();
        break;
    }
  };
  switch (ta) {
    case Trans::N:
      apply_b(a);
      break;
    case Trans::T:
      apply_b(a.transpose());
      break;
    case Trans::C:
      apply_b(a.adjoint());
      break;
  }
}

}  // namespace

std::string provider_name() {
  return "eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
         std::to_string(EIGEN_MINOR_VERSION);
}

#define TENAX_EIGEN_GEMM(T)                                                                             \
  template <>                                                                                           \
  void gemm<T>(Trans ta, Trans tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* A, \
               std::int64_t lda, const T* B, std::int64_t ldb, T beta, T* C, std::int64_t ldc) {        \
    eigen_gemm<T>(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);                                \
  }
TENAX_EIGEN_GEMM(float)
TENAX_EIGEN_GEMM(double)
TENAX_EIGEN_GEMM(std::complex<float>)
TENAX_EIGEN_GEMM(std::complex<double>)
#undef TENAX_EIGEN_GEMM

}  // namespace tenax::cpu
