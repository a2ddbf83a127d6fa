#pragma once
// Internal to the CUDA backend: error checks, the current-device guard and the per-device stream.
#include <cuda_runtime_api.h>

#include <string_view>

namespace tenax::detail::cuda {

// Throws tenax::Error("[cuda] <what>: <error name> (<description>)") unless err is cudaSuccess.
void check(cudaError_t err, std::string_view what);
// Checks the launch of the kernel named `what` (launch errors; execution errors surface at the
// next synchronising call).
void check_launch(std::string_view what);

// The stream every tenax operation on device `index` is queued on. Throws a tenax::Error naming the
// device when it does not exist or no device is visible.
cudaStream_t stream_of(int index);
// Waits for everything queued on device `index`.
void synchronize_device(int index);

// Makes device `index` current for the calling thread for the guard's lifetime.
class DeviceGuard {
 public:
  explicit DeviceGuard(int index);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

// The device arrays of matrix pointers that the batched cuBLAS/cuSOLVER entry points take: for
// each of `sets` sets, out[s * count + i] = base[s] + i * stride[s] (strides in bytes); one kernel
// on the device's stream (shape.cu), so building them waits for nothing.
struct PointerSets {
  static constexpr int kMax = 2;
  const char* base[kMax] = {};
  long long stride[kMax] = {};
  int sets = 0;
};
void fill_pointers(int dev, const PointerSets& sets, long long count, void** out);

// Grid size for a grid-stride loop over n items with `threads` threads per block.
inline unsigned grid_for(long long n, unsigned threads) {
  const long long blocks = (n + threads - 1) / threads;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 65535 ? 65535 : blocks));
}

}  // namespace tenax::detail::cuda
