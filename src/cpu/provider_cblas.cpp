// The CBLAS/LAPACKE provider (OpenBLAS by default; reference LAPACK or MKL by TENAX_PROVIDER).
#include <cblas.h>

#include <complex>

#include "tenax/backend/cpu_provider.hpp"

#if defined(TENAX_PROVIDER_OPENBLAS)
extern "C" char* openblas_get_config(void);
#endif

namespace tenax::cpu {
namespace {

CBLAS_TRANSPOSE cblas_trans(Trans t) {
  switch (t) {
    case Trans::N:
      return CblasNoTrans;
    case Trans::T:
      return CblasTrans;
    default:
      return CblasConjTrans;
  }
}

}  // namespace

std::string provider_name() {
#if defined(TENAX_PROVIDER_OPENBLAS)
  return std::string("openblas (") + openblas_get_config() + ")";
#elif defined(TENAX_PROVIDER_MKL)
  return "mkl";
#else
  return "cblas/lapacke";
#endif
}

template <>
void gemm<float>(Trans ta, Trans tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* A,
                 std::int64_t lda, const float* B, std::int64_t ldb, float beta, float* C, std::int64_t ldc) {
  count_call(Routine::gemm);
  cblas_sgemm(CblasColMajor, cblas_trans(ta), cblas_trans(tb), m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
template <>
void gemm<double>(Trans ta, Trans tb, std::int64_t m, std::int64_t n, std::int64_t k, double alpha, const double* A,
                  std::int64_t lda, const double* B, std::int64_t ldb, double beta, double* C, std::int64_t ldc) {
  count_call(Routine::gemm);
  cblas_dgemm(CblasColMajor, cblas_trans(ta), cblas_trans(tb), m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
template <>
void gemm<std::complex<float>>(Trans ta, Trans tb, std::int64_t m, std::int64_t n, std::int64_t k,
                               std::complex<float> alpha, const std::complex<float>* A, std::int64_t lda,
                               const std::complex<float>* B, std::int64_t ldb, std::complex<float> beta,
                               std::complex<float>* C, std::int64_t ldc) {
  count_call(Routine::gemm);
  cblas_cgemm(CblasColMajor, cblas_trans(ta), cblas_trans(tb), m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc);
}
template <>
void gemm<std::complex<double>>(Trans ta, Trans tb, std::int64_t m, std::int64_t n, std::int64_t k,
                                std::complex<double> alpha, const std::complex<double>* A, std::int64_t lda,
                                const std::complex<double>* B, std::int64_t ldb, std::complex<double> beta,
                                std::complex<double>* C, std::int64_t ldc) {
  count_call(Routine::gemm);
  cblas_zgemm(CblasColMajor, cblas_trans(ta), cblas_trans(tb), m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc);
}

}  // namespace tenax::cpu
