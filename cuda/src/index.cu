// The indexing and sorting kernels (kernels/index.hpp, DeviceKernels::gather_axis/put_axis):
// gather one thread per position; put and scatter_add one thread per output element, which loops
// over the positions that may name it in increasing coordinate along axis (so the last put wins and
// sums run in a fixed order: no atomics on values, the CPU's order and bits); the index check one
// thread per position with an atomic minimum on the position (an integer), then one thread writing
// the report; the sort one thread per line, a stable bottom-up merge sort of positions in scratch.
#include <cuda_runtime.h>

#include "device_types.cuh"
#include "runtime.hpp"
#include "tenax/backend/cuda.hpp"
#include "tenax/kernels/index.hpp"

namespace tenax::detail::cuda {
namespace {

constexpr unsigned kThreads = 256;

__device__ inline long long first_thread() { return static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ inline long long thread_stride() { return static_cast<long long>(gridDim.x) * blockDim.x; }

__global__ void find_bad_kernel(AxisGeometry g, const std::int64_t* idx, unsigned long long* first) {
  for (long long q = first_thread(); q < g.numel; q += thread_stride())
    if (wrap_index(idx[axis_offsets(g, q).idx], g.len) < 0) atomicMin(first, static_cast<unsigned long long>(q));
}

// bad[0] holds the first bad position or all ones: rewritten as DeviceKernels::gather_axis says.
__global__ void report_bad_kernel(AxisGeometry g, const std::int64_t* idx, std::int64_t* bad) {
  const unsigned long long q = reinterpret_cast<const unsigned long long*>(bad)[0];
  if (q == ~0ull) {
    bad[0] = bad[1] = 0;
  } else {
    bad[1] = idx[axis_offsets(g, static_cast<long long>(q)).idx];
    bad[0] = static_cast<std::int64_t>(q) + 1;
  }
}

template <class U>
__global__ void gather_kernel(AxisGeometry g, const std::int64_t* idx, const U* x, U* out) {
  for (long long q = first_thread(); q < g.numel; q += thread_stride()) {
    const AxisOffsets o = axis_offsets(g, q);
    const long long v = wrap_index(idx[o.idx], g.len);
    out[o.val] = v < 0 ? U{} : x[o.x + v * g.x[g.axis]];
  }
}

// One thread per element of out (x's shape, strides g.x): the positions with its coordinates
// outside axis, k = 0, 1, ... along axis, whose index names it. put keeps the last one's value;
// scatter_add adds them all in that order.
template <bool Add, class U>
__global__ void scatter_kernel(AxisGeometry g, long long total, const std::int64_t* idx, const U* src, U* out) {
  for (long long e = first_thread(); e < total; e += thread_stride()) {
    long long r = e, oo = 0, io = 0, so = 0, target = 0;
    bool inside = true;
    for (int d = 0; d < g.rank; ++d) {
      const long long c = r % g.xshape[d];
      r /= g.xshape[d];
      oo += c * g.x[d];
      if (d == g.axis) {
        target = c;
      } else {
        inside = inside && c < g.shape[d];
        io += c * g.idx[d];
        so += c * g.val[d];
      }
    }
    if (!inside) continue;
    U acc = out[oo];
    bool hit = false;
    for (long long k = 0; k < g.shape[g.axis]; ++k) {
      if (wrap_index(idx[io + k * g.idx[g.axis]], g.len) != target) continue;
      if constexpr (Add)
        acc = acc + src[so + k * g.val[g.axis]];
      else
        acc = src[so + k * g.val[g.axis]];
      hit = true;
    }
    if (hit) out[oo] = acc;
  }
}

template <class T>
__global__ void sort_kernel(LineGeometry g, const T* x, T* values, std::int64_t* indices, std::int64_t* scratch,
                            bool descending) {
  const long long n = g.n, xs = g.x[g.axis], os = g.out[g.axis];
  for (long long l = first_thread(); l < g.lines; l += thread_stride()) {
    std::int64_t xo = 0, oo = 0;
    line_offsets(g, l, xo, oo);
    const T* line = x + xo;
    std::int64_t* a = scratch + 2 * l * n;
    std::int64_t* b = a + n;
    for (long long i = 0; i < n; ++i) a[i] = i;
    for (long long w = 1; w < n; w *= 2) {
      for (long long lo = 0; lo < n; lo += 2 * w) {
        const long long mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
        long long i = lo, j = mid, t = lo;
        // Stable: the right run's element goes first only when it sorts strictly before.
        while (i < mid && j < hi) b[t++] = sorts_before(line[a[j] * xs], line[a[i] * xs], descending) ? a[j++] : a[i++];
        while (i < mid) b[t++] = a[i++];
        while (j < hi) b[t++] = a[j++];
      }
      std::int64_t* tmp = a;
      a = b;
      b = tmp;
    }
    for (long long i = 0; i < n; ++i) {
      indices[oo + i * os] = a[i];
      values[oo + i * os] = line[a[i] * xs];
    }
  }
}

// The report of g's out-of-range indices into bad (two int64 on the device).
void report_indices(cudaStream_t s, const AxisGeometry& g, const std::int64_t* idx, std::int64_t* bad) {
  check(cudaMemsetAsync(bad, 0xFF, sizeof(std::int64_t), s), "index check");
  if (g.numel > 0) {
    find_bad_kernel<<<grid_for(g.numel, kThreads), kThreads, 0, s>>>(g, idx,
                                                                     reinterpret_cast<unsigned long long*>(bad));
    check_launch("index check kernel");
  }
  report_bad_kernel<<<1, 1, 0, s>>>(g, idx, bad);
  check_launch("index report kernel");
}

long long numel_of_x(const AxisGeometry& g) {
  long long n = 1;
  for (int d = 0; d < g.rank; ++d) n *= g.xshape[d];
  return n;
}

template <bool Add, class T>
void scatter(int dev, const AxisGeometry& g, const std::int64_t* idx, const T* src, T* out, std::int64_t* bad) {
  cudaStream_t s = stream_of(dev);
  DeviceGuard guard(dev);
  const long long total = numel_of_x(g);
  if (total > 0 && g.numel > 0) {
    scatter_kernel<Add, dev_t<T>><<<grid_for(total, kThreads), kThreads, 0, s>>>(
        g, total, idx, reinterpret_cast<const dev_t<T>*>(src), reinterpret_cast<dev_t<T>*>(out));
    check_launch(Add ? "scatter_add kernel" : "put_along_axis kernel");
  }
  report_indices(s, g, idx, bad);
}

}  // namespace

template <class T>
void gather_axis(int dev, const AxisGeometry& g, const std::int64_t* idx, const T* x, T* out, std::int64_t* bad) {
  cudaStream_t s = stream_of(dev);
  DeviceGuard guard(dev);
  if (g.numel > 0) {
    gather_kernel<dev_t<T>><<<grid_for(g.numel, kThreads), kThreads, 0, s>>>(
        g, idx, reinterpret_cast<const dev_t<T>*>(x), reinterpret_cast<dev_t<T>*>(out));
    check_launch("gather kernel");
  }
  report_indices(s, g, idx, bad);
}

template <class T>
void put_axis(int dev, const AxisGeometry& g, const std::int64_t* idx, const T* src, T* out, std::int64_t* bad) {
  scatter<false>(dev, g, idx, src, out, bad);
}

template <class T>
void scatter_add(int dev, const AxisGeometry& g, const std::int64_t* idx, const T* src, T* out, std::int64_t* bad) {
  scatter<true>(dev, g, idx, src, out, bad);
}

template <class T>
void sort(int dev, const LineGeometry& g, const T* x, T* values, std::int64_t* indices, std::int64_t* scratch,
          bool descending) {
  cudaStream_t s = stream_of(dev);
  DeviceGuard guard(dev);
  constexpr unsigned kLineThreads = 64;
  sort_kernel<T><<<grid_for(g.lines, kLineThreads), kLineThreads, 0, s>>>(g, x, values, indices, scratch, descending);
  check_launch("sort kernel");
}

#define TENAX_BIT_COPY(T)                                                                                   \
  template void gather_axis<T>(int, const AxisGeometry&, const std::int64_t*, const T*, T*, std::int64_t*); \
  template void put_axis<T>(int, const AxisGeometry&, const std::int64_t*, const T*, T*, std::int64_t*);
TENAX_BIT_COPY(bool)
TENAX_BIT_COPY(std::int32_t)
TENAX_BIT_COPY(std::int64_t)
TENAX_BIT_COPY(std::complex<double>)
#define TENAX_SCATTER_ADD(T) \
  template void scatter_add<T>(int, const AxisGeometry&, const std::int64_t*, const T*, T*, std::int64_t*);
TENAX_SCATTER_ADD(std::int32_t)
TENAX_SCATTER_ADD(std::int64_t)
TENAX_SCATTER_ADD(float)
TENAX_SCATTER_ADD(double)
TENAX_SCATTER_ADD(std::complex<float>)
TENAX_SCATTER_ADD(std::complex<double>)
#define TENAX_SORT(T) template void sort<T>(int, const LineGeometry&, const T*, T*, std::int64_t*, std::int64_t*, bool);
TENAX_SORT(bool)
TENAX_SORT(std::int32_t)
TENAX_SORT(std::int64_t)
TENAX_SORT(float)
TENAX_SORT(double)

}  // namespace tenax::detail::cuda
