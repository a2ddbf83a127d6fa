#pragma once
// Filling memory on any device: a kernel slot per element type, one entry per device kind (as the
// map and reduce slots of kernels/). The CPU's entry is a constant; a device backend fills its own
// when the device registry starts (cuda/src/backend.cpp).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tenax/core/device.hpp"
#include "tenax/core/error.hpp"
#include "tenax/core/shared_state.hpp"

namespace tenax::detail {

// p[0..n) = *value on the device with ordinal `index` of the slot's kind.
template <class T>
using FillFn = void (*)(int index, T* p, std::int64_t n, const T& value);

template <class T>
void cpu_fill(int, T* p, std::int64_t n, const T& value) {
  std::fill_n(p, n, value);
}

template <class T>
struct TENAX_SHARED_STATE FillKernel {
  static inline FillFn<T> on[kDeviceKinds] = {&cpu_fill<T>};
};

// p[0..n) = value on device d; raises op's error when no kernel for d is built in.
template <class T>
void fill_elements(std::string_view op, Device d, T* p, std::int64_t n, const T& value) {
  const FillFn<T> fn = FillKernel<T>::on[kind_index(d)];
  if (fn == nullptr) [[unlikely]]
    fail(op, "no kernel for device ", d.str());
  if (n > 0) fn(d.index, p, n, value);
}

}  // namespace tenax::detail
