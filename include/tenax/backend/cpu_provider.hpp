#pragma once
// The CPU BLAS/LAPACK provider interface. One implementation file per provider is compiled:
// src/cpu/provider_cblas.cpp (OpenBLAS, reference LAPACK, MKL through CBLAS/LAPACKE) or
// src/cpu/provider_eigen.cpp (Eigen 3.4 alone). Every routine is counted, so tests can assert
// how many factorizations a forward+backward pass performed.
#include <array>
#include <atomic>
#include <cstdint>
#include <string>

namespace tenax::cpu {

enum class Trans : char { N = 'N', T = 'T', C = 'C' };

enum class Routine : int { gemm, kCount };

inline const char* routine_name(Routine r) {
  switch (r) {
    case Routine::gemm:
      return "gemm";
    default:
      return "?";
  }
}

struct ProviderCounters {
  std::array<std::atomic<std::int64_t>, static_cast<int>(Routine::kCount)> calls{};
};

ProviderCounters& provider_counters();
inline std::int64_t provider_calls(Routine r) { return provider_counters().calls[static_cast<int>(r)].load(); }
inline void reset_provider_calls() {
  for (auto& c : provider_counters().calls) c = 0;
}
inline void count_call(Routine r) {
  provider_counters().calls[static_cast<int>(r)].fetch_add(1, std::memory_order_relaxed);
}

// Name and version of the provider compiled in ("openblas 0.3.21", "eigen 3.4.0", ...).
std::string provider_name();

// C = alpha op(A) op(B) + beta C, column-major, dimensions already checked to fit the provider's
// integer type. T is float, double, std::complex<float> or std::complex<double>.
template <class T>
void gemm(Trans ta, Trans tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* A, std::int64_t lda,
          const T* B, std::int64_t ldb, T beta, T* C, std::int64_t ldc);

}  // namespace tenax::cpu
