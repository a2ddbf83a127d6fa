// The random draws (kernels/generate.hpp, ops/random/philox.hpp) on the device: one thread per
// element runs the same functor as the CPU, so element i is the same Philox block's numbers.
#include <cuda_runtime.h>

#include <cstdint>

#include "runtime.hpp"
#include "tenax/backend/cuda.hpp"
#include "tenax/ops/random/philox.hpp"

namespace tenax::detail::cuda {
namespace {

constexpr unsigned kBlock = 256;

template <class P, class F>
__global__ void generate_kernel(F f, P* p, long long n) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    f(i, p + i * F::parts);
}

}  // namespace

template <class P, class F>
void generate(int dev, F f, P* p, std::int64_t n) {
  if (n == 0) return;
  cudaStream_t s = stream_of(dev);
  DeviceGuard g(dev);
  generate_kernel<P, F><<<grid_for(n, kBlock), kBlock, 0, s>>>(f, p, n);
  check_launch("random kernel");
}

#define TENAX_UNPAREN(...) __VA_ARGS__
#define TENAX_GENERATE(P, F) template void generate<P, TENAX_UNPAREN F>(int, TENAX_UNPAREN F, P*, std::int64_t);
#include "random.inc"
#undef TENAX_GENERATE
#undef TENAX_UNPAREN

}  // namespace tenax::detail::cuda
