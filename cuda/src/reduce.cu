// Reductions (ops/reduce/) on the device. Each output folds its inputs from init in a fixed order
// set by the shape alone: small folds run in one thread in index order; larger ones are strided over
// a block's threads and the partials combined pairwise in shared memory.
#include <cuda_runtime.h>

#include "device_types.cuh"
#include "runtime.hpp"
#include "tenax/backend/cuda.hpp"
#include "tenax/ops/functors.hpp"

namespace tenax::detail::cuda {
namespace {

constexpr unsigned kBlock = 256;
constexpr long long kThreadFold = 256;  // reduced elements up to which one thread folds an output

// Byte offsets of output j in the output and the input.
__device__ inline void output_offsets(const ReduceLoop& l, long long j, long long& out, long long& in) {
  out = 0;
  in = 0;
  for (int d = 0; d < l.kept_rank; ++d) {
    const long long c = j % l.kept_shape[d];
    j /= l.kept_shape[d];
    out += c * l.kept_out[d];
    in += c * l.kept_in[d];
  }
}
__device__ inline long long reduced_offset(const ReduceLoop& l, long long i) {
  long long off = 0;
  for (int d = 0; d < l.red_rank; ++d) {
    const long long c = i % l.red_shape[d];
    i /= l.red_shape[d];
    off += c * l.red_in[d];
  }
  return off;
}

template <class T, class C>
__global__ void reduce_per_thread(C combine, T init, ReduceLoop l) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long j = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; j < l.outputs; j += stride) {
    long long oo, io;
    output_offsets(l, j, oo, io);
    T acc = init;
    for (long long i = 0; i < l.inner; ++i)
      acc = combine(acc, *reinterpret_cast<const T*>(l.in + io + reduced_offset(l, i)));
    *reinterpret_cast<T*>(l.out + oo) = acc;
  }
}

template <class T, class C>
__global__ void reduce_per_block(C combine, T init, ReduceLoop l) {
  __shared__ alignas(16) unsigned char raw[kBlock * sizeof(T)];
  T* part = reinterpret_cast<T*>(raw);
  const unsigned t = threadIdx.x;
  for (long long j = blockIdx.x; j < l.outputs; j += gridDim.x) {
    long long oo, io;
    output_offsets(l, j, oo, io);
    T acc = init;
    for (long long i = t; i < l.inner; i += kBlock)
      acc = combine(acc, *reinterpret_cast<const T*>(l.in + io + reduced_offset(l, i)));
    part[t] = acc;
    __syncthreads();
    for (unsigned s = kBlock / 2; s > 0; s >>= 1) {
      if (t < s) part[t] = combine(part[t], part[t + s]);
      __syncthreads();
    }
    if (t == 0) *reinterpret_cast<T*>(l.out + oo) = part[0];
    __syncthreads();
  }
}

}  // namespace

template <class T, class Combine>
void reduce(int dev, Combine combine, T init, const ReduceLoop& l) {
  using D = dev_t<T>;
  cudaStream_t s = stream_of(dev);
  DeviceGuard g(dev);
  const D dinit = to_device_value(init);
  if (l.inner <= kThreadFold)
    reduce_per_thread<D, Combine><<<grid_for(l.outputs, kBlock), kBlock, 0, s>>>(combine, dinit, l);
  else
    reduce_per_block<D, Combine><<<grid_for(l.outputs, 1), kBlock, 0, s>>>(combine, dinit, l);
  check_launch("reduction kernel");
}

#define TENAX_REDUCE(T, C) template void reduce<T, C>(int, C, T, const ReduceLoop&);
#include "reduce.inc"
#undef TENAX_REDUCE

}  // namespace tenax::detail::cuda
