#pragma once
// The device registry's table (src/core/devices.cpp): per device kind, its copy routine, its
// allocator and its backend (backend/backend.hpp).
#include <array>

#include "tenax/backend/backend.hpp"
#include "tenax/backend/device_copy.hpp"
#include "tenax/core/allocator.hpp"

namespace tenax::detail {

struct DeviceEntry {
  CopyFn copy = nullptr;
  Allocator& (*alloc)(int) = nullptr;
  const Backend* backend = nullptr;
};
using DeviceTable = std::array<DeviceEntry, kDeviceKinds>;

// The CPU's backend (src/cpu/backend.cpp).
const Backend& cpu_backend();
// Fills the entries of the device backends linked into this build, and their kernel slots: the
// CUDA backend's cuda/src/backend.cpp, or src/core/no_device_backends.cpp when none is built.
// Called once, when the registry is first used.
void add_linked_backends(DeviceTable& table);

}  // namespace tenax::detail
