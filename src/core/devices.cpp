// The device registry: which allocator, copy routine and backend serve each device kind. The CPU
// is always present; the backends linked into the build add their entries when the registry is
// first used (add_linked_backends).
#include <cstring>

#include "registry.hpp"
#include "tenax/core/deferred_checks.hpp"
#include "tenax/core/error.hpp"

namespace tenax::detail {
namespace {

DeviceTable& registry() {
  static DeviceTable r = [] {
    DeviceTable t;
    t[kind_index(Device::cpu())].backend = &cpu_backend();
    add_linked_backends(t);
    return t;
  }();
  return r;
}

}  // namespace

void register_device_copy(Device::Kind kind, CopyFn fn) { registry()[static_cast<int>(kind)].copy = fn; }
void register_allocator(Device::Kind kind, Allocator& (*fn)(int)) { registry()[static_cast<int>(kind)].alloc = fn; }

Allocator& allocator_for(Device d) {
  if (d.is_cpu()) return cpu_allocator();
  auto fn = registry()[kind_index(d)].alloc;
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
  auto fn = registry()[kind_index(other)].copy;
  TENAX_CHECK(fn != nullptr, "to", "no backend for device ", other.str(), " is built into this tenax");
  fn(dst, dst_dev, src, src_dev, bytes);
  // Results of the device are being read: its pending failure checks run now.
  if (dst_dev.is_cpu()) run_deferred_checks(src_dev);
}

bool device_backend_built(Device d) { return registry()[kind_index(d)].backend != nullptr; }

const Backend& backend_for(std::string_view op, Device d) {
  const Backend* b = registry()[kind_index(d)].backend;
  if (b == nullptr) [[unlikely]]
    fail(op, "no kernel for device ", d.str());
  return *b;
}

void fail_no_linalg(std::string_view op, Device d, const char* dtype) {
  fail(op, "no ", dtype, " kernel for device ", d.str());
}

}  // namespace tenax::detail
