#pragma once
// Filling memory on any device: a kernel slot per element size, one entry per device kind (as the
// map and reduce slots of kernels/). The CPU's entry is a constant; a device backend fills its own
// when the device registry starts (cuda/src/backend.cpp).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "tenax/core/device.hpp"
#include "tenax/core/error.hpp"
#include "tenax/core/shared_state.hpp"

namespace tenax::detail {

// An element of `Bytes` bytes, copied bit for bit.
template <std::size_t Bytes>
struct alignas(Bytes <= 16 ? Bytes : 16) Bits {
  unsigned char b[Bytes];
};

// p[0..n) = *value on the device with ordinal `index` of the slot's kind.
using FillFn = void (*)(int index, void* p, std::int64_t n, const void* value);

template <std::size_t Bytes>
void cpu_fill(int, void* p, std::int64_t n, const void* value) {
  Bits<Bytes> v;
  std::memcpy(&v, value, Bytes);
  std::fill_n(static_cast<Bits<Bytes>*>(p), n, v);
}

template <std::size_t Bytes>
struct TENAX_SHARED_STATE FillKernel {
  static inline FillFn on[kDeviceKinds] = {&cpu_fill<Bytes>};
};

// p[0..n) = value on device d; raises op's error when no kernel for d is built in.
template <class T>
void fill_elements(std::string_view op, Device d, T* p, std::int64_t n, const T& value) {
  const FillFn fn = FillKernel<sizeof(T)>::on[kind_index(d)];
  if (fn == nullptr) [[unlikely]]
    fail(op, "no kernel for device ", d.str());
  if (n > 0) fn(d.index, p, n, &value);
}

}  // namespace tenax::detail
