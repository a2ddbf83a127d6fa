// Kernels that are not elementwise maps: tril/triu's zeroing of a triangle, fill, the row gather
// of permute_rows, pivot checks and permutations, and the matrix pointer arrays of the batched
// solver calls.
#include <cuda_runtime.h>

#include "device_types.cuh"
#include "runtime.hpp"
#include "tenax/backend/cuda.hpp"

namespace tenax::detail::cuda {
namespace {

template <class T>
__global__ void zero_triangle_kernel(bool lower, long long k, long long m, long long n, long long total, T* p) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long e = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride) {
    const long long i = e % m, j = (e / m) % n;
    if (lower ? (j - i > k) : (j - i < k)) p[e] = T(0);
  }
}

template <class T>
__global__ void fill_kernel(T value, long long n, T* p) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) p[i] = value;
}

template <class T>
__global__ void permute_rows_kernel(long long m, long long n, long long total, const T* x, const long long* perm,
                                    T* out) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long e = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride) {
    const long long i = e % m, b = e / (m * n);
    out[e] = x[e - i + perm[i + b * m]];
  }
}

__global__ void fill_pointers_kernel(PointerSets p, long long count, void** out) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long e = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; e < count * p.sets; e += stride) {
    const long long s = e / count, i = e % count;
    out[e] = const_cast<char*>(p.base[s] + i * p.stride[s]);
  }
}

// One thread per matrix: LAPACK's sequential interchanges, each checked.
__global__ void check_pivots_kernel(long long k, long long m, long long batch, const int* piv, long long* perm,
                                    int* safe, int* bad) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long b = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; b < batch; b += stride) {
    long long* q = perm ? perm + b * m : nullptr;
    if (q)
      for (long long i = 0; i < m; ++i) q[i] = i;
    int first = 0, value = 0;
    for (long long i = 0; i < k; ++i) {
      const int v = piv[b * k + i];
      const bool ok = v >= 1 && v <= m;
      if (!ok && first == 0) {
        first = static_cast<int>(i + 1);
        value = v;
      }
      if (safe) safe[b * k + i] = ok ? v : static_cast<int>(i + 1);
      if (ok && q) {
        const long long t = q[i];
        q[i] = q[v - 1];
        q[v - 1] = t;
      }
    }
    bad[2 * b] = first;
    bad[2 * b + 1] = value;
  }
}

__global__ void inverse_permutation_kernel(long long m, long long total, const long long* perm, long long* inv) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long e = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += stride) {
    const long long i = e % m, b = e / m, p = perm[e];
    if (p >= 0 && p < m) inv[b * m + p] = i;
  }
}

}  // namespace

void check_pivots(int dev, std::int64_t k, std::int64_t m, std::int64_t batch, const std::int32_t* piv,
                  std::int64_t* perm, std::int32_t* safe, std::int32_t* bad) {
  cudaStream_t s = stream_of(dev);
  DeviceGuard g(dev);
  constexpr unsigned kThreads = 128;
  check_pivots_kernel<<<grid_for(batch, kThreads), kThreads, 0, s>>>(k, m, batch, piv,
                                                                     reinterpret_cast<long long*>(perm), safe, bad);
  check_launch("pivot check kernel");
}

void inverse_permutation(int dev, std::int64_t m, std::int64_t batch, const std::int64_t* perm, std::int64_t* inv) {
  cudaStream_t s = stream_of(dev);
  DeviceGuard g(dev);
  constexpr unsigned kThreads = 256;
  const long long total = m * batch;
  inverse_permutation_kernel<<<grid_for(total, kThreads), kThreads, 0, s>>>(
      m, total, reinterpret_cast<const long long*>(perm), reinterpret_cast<long long*>(inv));
  check_launch("inverse permutation kernel");
}

void fill_pointers(int dev, const PointerSets& sets, long long count, void** out) {
  cudaStream_t s = stream_of(dev);
  DeviceGuard g(dev);
  constexpr unsigned kThreads = 256;
  fill_pointers_kernel<<<grid_for(count * sets.sets, kThreads), kThreads, 0, s>>>(sets, count, out);
  check_launch("matrix pointer array kernel");
}

template <class T>
void permute_rows(int dev, std::int64_t m, std::int64_t n, std::int64_t batch, const T* x, const std::int64_t* perm,
                  T* out) {
  cudaStream_t s = stream_of(dev);
  DeviceGuard g(dev);
  const long long total = m * n * batch;
  constexpr unsigned kThreads = 256;
  permute_rows_kernel<dev_t<T>><<<grid_for(total, kThreads), kThreads, 0, s>>>(
      m, n, total, reinterpret_cast<const dev_t<T>*>(x), reinterpret_cast<const long long*>(perm),
      reinterpret_cast<dev_t<T>*>(out));
  check_launch("permute_rows kernel");
}

template <class T>
void fill(int dev, T value, T* p, std::int64_t n) {
  cudaStream_t s = stream_of(dev);
  DeviceGuard g(dev);
  constexpr unsigned kThreads = 256;
  fill_kernel<dev_t<T>>
      <<<grid_for(n, kThreads), kThreads, 0, s>>>(to_device_value(value), n, reinterpret_cast<dev_t<T>*>(p));
  check_launch("fill kernel");
}

template <class T>
void zero_triangle(int dev, bool lower, std::int64_t k, std::int64_t m, std::int64_t n, std::int64_t batch, T* p) {
  cudaStream_t s = stream_of(dev);
  DeviceGuard g(dev);
  const long long total = m * n * batch;
  constexpr unsigned kThreads = 256;
  zero_triangle_kernel<dev_t<T>>
      <<<grid_for(total, kThreads), kThreads, 0, s>>>(lower, k, m, n, total, reinterpret_cast<dev_t<T>*>(p));
  check_launch("tril/triu kernel");
}

#define TENAX_TRIANGLE(T)                                                                                \
  template void zero_triangle<T>(int, bool, std::int64_t, std::int64_t, std::int64_t, std::int64_t, T*); \
  template void fill<T>(int, T, T*, std::int64_t);                                                       \
  template void permute_rows<T>(int, std::int64_t, std::int64_t, std::int64_t, const T*, const std::int64_t*, T*);
TENAX_TRIANGLE(bool)
TENAX_TRIANGLE(std::int32_t)
TENAX_TRIANGLE(std::int64_t)
TENAX_TRIANGLE(float)
TENAX_TRIANGLE(double)
TENAX_TRIANGLE(std::complex<float>)
TENAX_TRIANGLE(std::complex<double>)

}  // namespace tenax::detail::cuda
