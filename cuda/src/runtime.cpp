// CUDA runtime services: device discovery, one stream per device, copies between devices and the
// host, and error reporting as tenax::Error.
#include "runtime.hpp"

#include <array>
#include <cstddef>
#include <mutex>
#include <string>

#include "tenax/backend/cuda.hpp"
#include "tenax/core/deferred_checks.hpp"
#include "tenax/core/error.hpp"

namespace tenax {
namespace detail::cuda {
namespace {

constexpr int kMaxDevices = 64;

struct Devices {
  int count = 0;
  std::string why;  // why none is visible, when count == 0
  std::array<cudaStream_t, kMaxDevices> stream{};
  std::array<std::once_flag, kMaxDevices> once;
};

Devices& devices() {
  static Devices* d = [] {
    auto* x = new Devices;  // never destroyed: streams outlive static destruction
    const cudaError_t e = cudaGetDeviceCount(&x->count);
    if (e != cudaSuccess) {
      x->count = 0;
      x->why = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
      (void)cudaGetLastError();
    } else if (x->count == 0) {
      x->why = "no CUDA device is visible";
    }
    if (x->count > kMaxDevices) x->count = kMaxDevices;
    return x;
  }();
  return *d;
}

}  // namespace

void check(cudaError_t err, std::string_view what) {
  if (err == cudaSuccess) return;
  (void)cudaGetLastError();
  fail("cuda", what, ": ", cudaGetErrorName(err), " (", cudaGetErrorString(err), ")");
}

void check_launch(std::string_view what) { check(cudaGetLastError(), what); }

cudaStream_t stream_of(int index) {
  Devices& d = devices();
  TENAX_CHECK(index >= 0 && index < d.count, "device", "cuda:", index,
              " is not available: ", d.count == 0 ? d.why : std::to_string(d.count) + " CUDA device(s) visible");
  const auto i = static_cast<std::size_t>(index);
  std::call_once(d.once[i], [&] {
    DeviceGuard g(index);
    check(cudaStreamCreateWithFlags(&d.stream[i], cudaStreamNonBlocking),
          "creating the stream of cuda:" + std::to_string(index));
  });
  return d.stream[i];
}

DeviceGuard::DeviceGuard(int index) {
  check(cudaGetDevice(&previous_), "cudaGetDevice");
  if (previous_ != index) check(cudaSetDevice(index), "cudaSetDevice(" + std::to_string(index) + ")");
}
DeviceGuard::~DeviceGuard() {
  int now = -1;
  if (cudaGetDevice(&now) == cudaSuccess && now != previous_) (void)cudaSetDevice(previous_);
}

void copy_bytes(void* dst, Device dst_dev, const void* src, Device src_dev, std::size_t bytes) {
  if (bytes == 0) return;
  if (dst_dev.is_cuda() && src_dev.is_cuda() && dst_dev.index != src_dev.index) {
    // Between two devices: the source's queue drained, the copy queued on the destination's stream
    // (ordered before the destination's later work) and waited for, so that the source block may be
    // reused as soon as this returns. Rare enough to pay the waits.
    synchronize_device(src_dev.index);
    cudaStream_t s = stream_of(dst_dev.index);
    DeviceGuard g(dst_dev.index);
    const std::string what = "copy " + src_dev.str() + " -> " + dst_dev.str();
    check(cudaMemcpyPeerAsync(dst, dst_dev.index, src, src_dev.index, bytes, s), what);
    check(cudaStreamSynchronize(s), what);
    return;
  }
  const int dev = dst_dev.is_cuda() ? dst_dev.index : src_dev.index;
  cudaStream_t s = stream_of(dev);
  DeviceGuard g(dev);
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s), "copy " + src_dev.str() + " -> " + dst_dev.str());
  // The host reads what arrives. A pageable host source may be reused once the call returns: the
  // runtime stages it before returning (CUDA Runtime API, "API synchronization behavior",
  // cudaMemcpyAsync from pageable host memory).
  if (dst_dev.is_cpu()) check(cudaStreamSynchronize(s), "copy " + src_dev.str() + " -> cpu");
}

void synchronize_device(int index) {
  cudaStream_t s = stream_of(index);
  DeviceGuard g(index);
  check(cudaStreamSynchronize(s), "synchronize cuda:" + std::to_string(index));
}

}  // namespace detail::cuda

namespace cuda {
int device_count() { return detail::cuda::devices().count; }
void synchronize(int index) {
  detail::cuda::synchronize_device(index);
  detail::run_deferred_checks(Device::cuda(index));  // (core/deferred_checks.hpp)
}
}  // namespace cuda

}  // namespace tenax
