// The CPU's backend (backend/backend.hpp): the provider's BLAS/LAPACK routines called once per
// matrix of a batch, and the element-size kernels as host loops.
#include "tenax/backend/backend.hpp"

#include <algorithm>
#include <cstring>

#include "../core/registry.hpp"
#include "axis_walk.hpp"
#include "cpu_linalg.hpp"
#include "tenax/backend/cpu_provider.hpp"
#include "tenax/backend/tiny_pivots.hpp"
#include "tenax/core/error.hpp"

namespace tenax::detail {
namespace {

// Elements are copied and zeroed as bytes (memcpy, memset), whatever their type.
class CpuKernels final : public DeviceKernels {
 public:
  void zero_triangle(int, bool lower, std::int64_t k, std::int64_t m, std::int64_t n, std::int64_t batch, void* p,
                     std::size_t bytes) const override {
    char* q = static_cast<char*>(p);
    for (std::int64_t b = 0; b < batch; ++b)
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < m; ++i)
          if (lower ? j - i > k : j - i < k) std::memset(q + (i + j * m + b * m * n) * bytes, 0, bytes);
  }
  void permute_rows(int, std::int64_t m, std::int64_t n, std::int64_t batch, const void* x, const std::int64_t* perm,
                    void* out, std::size_t bytes) const override {
    const char* s = static_cast<const char*>(x);
    char* o = static_cast<char*>(out);
    for (std::int64_t b = 0; b < batch; ++b)
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < m; ++i)
          std::memcpy(o + (i + j * m + b * m * n) * bytes, s + (perm[i + b * m] + j * m + b * m * n) * bytes, bytes);
  }
  void check_pivots(int, std::int64_t k, std::int64_t m, std::int64_t batch, const std::int32_t* piv,
                    std::int64_t* perm, std::int32_t* safe, std::int32_t* bad) const override {
    for (std::int64_t b = 0; b < batch; ++b) {
      std::int64_t* q = perm ? perm + b * m : nullptr;
      if (q)
        for (std::int64_t i = 0; i < m; ++i) q[i] = i;
      std::int32_t first = 0, value = 0;
      for (std::int64_t i = 0; i < k; ++i) {
        const std::int32_t v = piv[b * k + i];
        const bool ok = v >= 1 && v <= m;
        if (!ok && first == 0) {
          first = static_cast<std::int32_t>(i + 1);
          value = v;
        }
        if (safe) safe[b * k + i] = ok ? v : static_cast<std::int32_t>(i + 1);
        if (ok && q) std::swap(q[i], q[v - 1]);
      }
      bad[2 * b] = first;
      bad[2 * b + 1] = value;
    }
  }
  void inverse_permutation(int, std::int64_t m, std::int64_t batch, const std::int64_t* perm,
                           std::int64_t* inv) const override {
    for (std::int64_t b = 0; b < batch; ++b)
      for (std::int64_t i = 0; i < m; ++i) {
        const std::int64_t p = perm[i + b * m];
        if (p >= 0 && p < m) inv[p + b * m] = i;
      }
  }
  void gather_axis(int, const AxisGeometry& g, const std::int64_t* idx, const void* x, void* out, std::size_t bytes,
                   std::int64_t* bad) const override {
    const char* s = static_cast<const char*>(x);
    char* o = static_cast<char*>(out);
    walk_axis_indices(
        g, idx, bad,
        [&](const AxisOffsets& a, std::int64_t at) { std::memcpy(o + a.val * bytes, s + at * bytes, bytes); },
        [&](const AxisOffsets& a) { std::memset(o + a.val * bytes, 0, bytes); });
  }
  void put_axis(int, const AxisGeometry& g, const std::int64_t* idx, const void* src, void* out, std::size_t bytes,
                std::int64_t* bad) const override {
    const char* s = static_cast<const char*>(src);
    char* o = static_cast<char*>(out);
    // (in increasing position along the axis: the last put to a target wins)
    walk_axis_indices(
        g, idx, bad,
        [&](const AxisOffsets& a, std::int64_t at) { std::memcpy(o + at * bytes, s + a.val * bytes, bytes); },
        [](const AxisOffsets&) {});
  }
};

}  // namespace

const Backend& cpu_backend() {
  static const CpuKernels kernels;
  static const CpuLinalg<float> f32;
  static const CpuLinalg<double> f64;
  static const CpuLinalg<std::complex<float>> c64;
  static const CpuLinalg<std::complex<double>> c128;
  static const Backend b{"cpu", &kernels, &f32, &f64, &c64, &c128};
  return b;
}

}  // namespace tenax::detail
