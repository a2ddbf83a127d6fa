// cuBLAS for the CUDA backend: one handle per thread and device, bound to the device's stream,
// with reduced-precision math (TF32, reduced-precision reductions) switched off.
#include <cublas_v2.h>

#include <algorithm>
#include <array>
#include <complex>
#include <string>
#include <type_traits>

#include "runtime.hpp"
#include "tenax/backend/cuda.hpp"
#include "tenax/core/dtype.hpp"
#include "tenax/core/error.hpp"

namespace tenax::detail::cuda {
namespace {

const char* status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
    default:
      return "cuBLAS error";
  }
}

struct Handles {
  std::array<cublasHandle_t, 64> h{};
  ~Handles() {
    for (cublasHandle_t x : h)
      if (x) (void)cublasDestroy(x);
  }
};

}  // namespace

// Throws tenax::Error("[cuda] <what>: <status name> (<code>)") unless s is success (also used by
// solver.cpp).
void check_blas(cublasStatus_t s, std::string_view what) {
  if (s != CUBLAS_STATUS_SUCCESS) fail("cuda", what, ": ", status_name(s), " (", static_cast<int>(s), ")");
}

// The calling thread's cuBLAS handle for device `dev` (also used by solver.cpp).
cublasHandle_t blas_handle(int dev) {
  stream_of(dev);  // validates the ordinal before it indexes the handles
  thread_local Handles hs;
  cublasHandle_t& h = hs.h[static_cast<std::size_t>(dev)];
  if (!h) {
    cudaStream_t s = stream_of(dev);
    DeviceGuard g(dev);
    check_blas(cublasCreate(&h), "cublasCreate on cuda:" + std::to_string(dev));
    check_blas(cublasSetStream(h, s), "cublasSetStream");
    check_blas(cublasSetMathMode(h, static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH |
                                                              CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)),
               "cublasSetMathMode");
  }
  return h;
}

namespace {

// 'C' of a real type is 'T' (cuBLAS documents CUBLAS_OP_C for real types; cuSOLVER's getrs does not).
template <class T>
cublasOperation_t op_of(char t) {
  if (t == 'N') return CUBLAS_OP_N;
  return t == 'T' || !tenax::is_complex_v<T> ? CUBLAS_OP_T : CUBLAS_OP_C;
}

template <class T>
cublasStatus_t gemm_batched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            const T* alpha, const T* a, int lda, long long sa, const T* b, int ldb, long long sb,
                            const T* beta, T* c, int ldc, long long sc, int batch) {
  if constexpr (std::is_same_v<T, float>)
    return cublasSgemmStridedBatched(h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch);
  else if constexpr (std::is_same_v<T, double>)
    return cublasDgemmStridedBatched(h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch);
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    return cublasCgemmStridedBatched(
        h, ta, tb, m, n, k, reinterpret_cast<const cuComplex*>(alpha), reinterpret_cast<const cuComplex*>(a), lda, sa,
        reinterpret_cast<const cuComplex*>(b), ldb, sb, reinterpret_cast<const cuComplex*>(beta),
        reinterpret_cast<cuComplex*>(c), ldc, sc, batch);
  else
    return cublasZgemmStridedBatched(
        h, ta, tb, m, n, k, reinterpret_cast<const cuDoubleComplex*>(alpha),
        reinterpret_cast<const cuDoubleComplex*>(a), lda, sa, reinterpret_cast<const cuDoubleComplex*>(b), ldb, sb,
        reinterpret_cast<const cuDoubleComplex*>(beta), reinterpret_cast<cuDoubleComplex*>(c), ldc, sc, batch);
}

}  // namespace

template <class T>
void gemm(int dev, char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k, const T* a,
          std::int64_t lda, std::int64_t stride_a, const T* b, std::int64_t ldb, std::int64_t stride_b, T* c,
          std::int64_t ldc, std::int64_t stride_c, std::int64_t batch) {
  constexpr std::int64_t kIntMax = 2147483647;
  TENAX_CHECK(m <= kIntMax && n <= kIntMax && k <= kIntMax && lda <= kIntMax && ldb <= kIntMax && ldc <= kIntMax,
              "matmul", "dimension exceeds cuBLAS's 32-bit index (", m, " x ", k, " x ", n, ")");
  cublasHandle_t h = blas_handle(dev);
  DeviceGuard g(dev);
  const T one(1), zero(0);
  // cuBLAS takes at most 65535 batches per grid dimension on some versions: go in chunks.
  for (std::int64_t done = 0; done < batch;) {
    const std::int64_t nb = std::min<std::int64_t>(batch - done, 65535);
    check_blas(gemm_batched<T>(h, op_of<T>(transa), op_of<T>(transb), static_cast<int>(m), static_cast<int>(n),
                               static_cast<int>(k), &one, a + done * stride_a, static_cast<int>(lda), stride_a,
                               b + done * stride_b, static_cast<int>(ldb), stride_b, &zero, c + done * stride_c,
                               static_cast<int>(ldc), stride_c, static_cast<int>(nb)),
               "matmul (cublas gemm)");
    done += nb;
  }
}

#define TENAX_GEMM(T)                                                                                       \
  template void gemm<T>(int, char, char, std::int64_t, std::int64_t, std::int64_t, const T*, std::int64_t,  \
                        std::int64_t, const T*, std::int64_t, std::int64_t, T*, std::int64_t, std::int64_t, \
                        std::int64_t);
TENAX_GEMM(float)
TENAX_GEMM(double)
TENAX_GEMM(std::complex<float>)
TENAX_GEMM(std::complex<double>)
#undef TENAX_GEMM

}  // namespace tenax::detail::cuda
