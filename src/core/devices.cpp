// The device registry: which allocator and copy routine serve each device kind. The CPU is always
// present; other backends register themselves when they are linked in.
#include <array>
#include <cstring>

#include "tenax/backend/cuda.hpp"
#include "tenax/backend/device_copy.hpp"
#include "tenax/core/allocator.hpp"
#include "tenax/core/deferred_checks.hpp"
#include "tenax/core/error.hpp"

namespace tenax::detail {
namespace {

struct Registry {
  std::array<CopyFn, 2> copy{};
  std::array<Allocator& (*)(int), 2> alloc{};
};
Registry& registry() {
  static Registry r = [] {
    Registry x;
#if defined(TENAX_HAS_CUDA)
    x.copy[static_cast<int>(Device::Kind::CUDA)] = &cuda::copy_bytes;
    x.alloc[static_cast<int>(Device::Kind::CUDA)] = &cuda::allocator;
#endif
    return x;
  }();
  return r;
}

}  // namespace

void register_device_copy(Device::Kind kind, CopyFn fn) { registry().copy[static_cast<int>(kind)] = fn; }
void register_allocator(Device::Kind kind, Allocator& (*fn)(int)) { registry().alloc[static_cast<int>(kind)] = fn; }

Allocator& allocator_for(Device d) {
  if (d.is_cpu()) return cpu_allocator();
  auto fn = registry().alloc[static_cast<int>(d.kind)];
  TENAX_CHECK(fn != nullptr, "device", "no backend for device ", d.str(), " is built into this tenax");
  return fn(d.index);
}

void copy_bytes(void* dst, Device dst_dev, const void* src, Device src_dev, std::size_t bytes) {
  if (bytes == 0) return;
  if (dst_dev.is_cpu() && src_dev.is_cpu()) {
    std::memcpy(dst, src, bytes);
    return;
  }
  const Device other = dst_dev.is_cpu() ? src_dev : dst_dev;
  auto fn = registry().copy[static_cast<int>(other.kind)];
  TENAX_CHECK(fn != nullptr, "to", "no backend for device ", other.str(), " is built into this tenax");
  fn(dst, dst_dev, src, src_dev, bytes);
  // Results of the device are being read: its pending failure checks run now.
  if (dst_dev.is_cpu()) run_deferred_checks(src_dev);
}

}  // namespace tenax::detail

#if !defined(TENAX_HAS_CUDA)
// Without the backend no CUDA device is ever visible.
namespace tenax::cuda {
int device_count() { return 0; }
void synchronize(int) {}
}  // namespace tenax::cuda
#endif
