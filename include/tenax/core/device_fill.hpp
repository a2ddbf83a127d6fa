#pragma once
// Filling memory on any device, through the device registry's backend (src/core/devices.cpp).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tenax/core/device.hpp"

namespace tenax::detail {

// p[0..n) = *value on device d, elements of `bytes` bytes; raises op's error when no backend for
// d is built in.
void fill_bytes(std::string_view op, Device d, void* p, std::int64_t n, const void* value, std::size_t bytes);

}  // namespace tenax::detail
