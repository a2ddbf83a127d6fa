#pragma once
// The elementwise kernel: one thread per output element (grid-stride), offsets from the merged
// loop nest; the functor is the host's own definition (ops/functors.hpp).
#include <cuda_runtime.h>

#include <utility>

#include "device_types.cuh"
#include "runtime.hpp"
#include "tenax/backend/cuda.hpp"
#include "tenax/ops/functors.hpp"

namespace tenax::detail::cuda {

template <class Out, class F, class... In, std::size_t... I>
__device__ inline void map_one(const F& f, const Loop<sizeof...(In) + 1>& l, const long long* off,
                               std::index_sequence<I...>) {
  *reinterpret_cast<Out*>(l.ptr[0] + off[0]) =
      store_value<Out>(f(*reinterpret_cast<const In*>(l.ptr[I + 1] + off[I + 1])...));
}

template <class Out, class F, class... In>
__global__ void map_kernel(F f, Loop<sizeof...(In) + 1> l) {
  constexpr std::size_t N = sizeof...(In) + 1;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < l.numel; i += stride) {
    long long off[N] = {};
    if (l.rank == 1) {
      for (std::size_t k = 0; k < N; ++k) off[k] = i * l.strides[k][0];
    } else {
      long long r = i;
      for (int d = 0; d < l.rank; ++d) {
        const long long c = r % l.shape[d];
        r /= l.shape[d];
        for (std::size_t k = 0; k < N; ++k) off[k] += c * l.strides[k][d];
      }
    }
    map_one<Out, F, In...>(f, l, off, std::index_sequence_for<In...>{});
  }
}

template <class Out, class F, class... In>
void map(int dev, F f, const Loop<sizeof...(In) + 1>& l) {
  using DF = typename device_functor<F>::type;
  cudaStream_t s = stream_of(dev);
  DeviceGuard g(dev);
  constexpr unsigned kThreads = 256;
  map_kernel<dev_t<Out>, DF, dev_t<In>...>
      <<<grid_for(l.numel, kThreads), kThreads, 0, s>>>(device_functor<F>::convert(f), l);
  check_launch("elementwise kernel");
}

// Explicit instantiations: TENAX_MAP1(Out, F, In) etc.
#define TENAX_MAP1(O, F, A) template void map<O, F, A>(int, F, const Loop<2>&);
#define TENAX_MAP2(O, F, A, B) template void map<O, F, A, B>(int, F, const Loop<3>&);
#define TENAX_MAP3(O, F, A, B, C) template void map<O, F, A, B, C>(int, F, const Loop<4>&);

}  // namespace tenax::detail::cuda
