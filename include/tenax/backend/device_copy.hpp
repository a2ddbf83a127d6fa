#pragma once
// Byte copies between devices. CPU<->CPU is memcpy; any copy touching a device whose backend is
// not built throws tenax::Error.
#include <cstddef>

#include "tenax/core/device.hpp"

namespace tenax::detail {

void copy_bytes(void* dst, Device dst_dev, const void* src, Device src_dev, std::size_t bytes);

// Backends register their copy routine here (the CUDA backend at load time).
using CopyFn = void (*)(void* dst, Device dst_dev, const void* src, Device src_dev, std::size_t bytes);
void register_device_copy(Device::Kind kind, CopyFn fn);

}  // namespace tenax::detail
