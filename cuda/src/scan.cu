// The kernels along one axis (kernels/lines.hpp: cumsum, cumprod, argmax, argmin) on the device:
// one thread per line runs the same functor as the CPU (ops/line_functors.hpp), sequentially in
// index order, so the device sums and multiplies in the CPU's order and ties resolve alike.
#include <cuda_runtime.h>

#include <complex>
#include <cstdint>

#include "device_types.cuh"
#include "runtime.hpp"
#include "tenax/backend/cuda.hpp"
#include "tenax/kernels/line_loop.hpp"
#include "tenax/ops/line_functors.hpp"

namespace tenax::detail::cuda {
namespace {

constexpr unsigned kBlock = 128;

template <class Out, class In, class F>
__global__ void lines_kernel(F f, LineLoop l) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long j = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; j < l.lines; j += stride)
    run_line<Out, In>(f, l, j);
}

}  // namespace

template <class Out, class In, class F>
void lines(int dev, F f, const LineLoop& l) {
  if (l.lines == 0 || l.len == 0) return;
  cudaStream_t s = stream_of(dev);
  DeviceGuard g(dev);
  lines_kernel<dev_t<Out>, dev_t<In>, F><<<grid_for(l.lines, kBlock), kBlock, 0, s>>>(f, l);
  check_launch("line kernel (cumsum/cumprod/argmax/argmin)");
}

#define TENAX_LINES(O, I, F) template void lines<O, I, F>(int, F, const LineLoop&);
#include "scan.inc"
#undef TENAX_LINES

}  // namespace tenax::detail::cuda
