#pragma once
// The driver of kernels that fill a fresh tensor element by element from the element's index
// alone (the random draws of ops/random/philox.hpp): a kernel slot per part type and functor, one
// entry per device kind (as MapKernel). f(i, out + i * F::parts) writes element i's parts (the
// real and imaginary parts of a complex element). The CPU's entry splits [0, n) over the pool; the
// CUDA backend's runs one thread per element (cuda/src/random.cu). Since an element depends only
// on its index, any thread count and either device give the same numbers.
#include <algorithm>
#include <cstdint>
#include <string_view>

#include "tenax/core/shared_state.hpp"
#include "tenax/core/tensor.hpp"
#include "tenax/kernels/parallel_loop.hpp"

namespace tenax::detail {

// A device kind's kernel: elements [0, n) at p on the device with ordinal `device`.
template <class P, class F>
using GenerateFn = void (*)(int device, const F& f, P* p, std::int64_t n);

template <class P, class F>
void cpu_generate(int, const F& f, P* p, std::int64_t n) {
  const std::int64_t parts = std::min(n, cpu::useful_parts(n, cpu::parallel_threads()));
  if (parts <= 1) {
    for (std::int64_t i = 0; i < n; ++i) f(i, p + i * F::parts);
    return;
  }
  cpu::parallel_for(parts, [&](std::int64_t c) {
    for (std::int64_t i = c * n / parts; i < (c + 1) * n / parts; ++i) f(i, p + i * F::parts);
  });
}

template <class P, class F>
struct TENAX_SHARED_STATE GenerateKernel {
  static inline GenerateFn<P, F> on[kDeviceKinds] = {&cpu_generate<P, F>};
};

// A fresh contiguous tensor of `shape` on dev, element i written by f (P: T's part type).
template <class T, class P, class F>
Tensor<T> generate(std::string_view op, const Shape& shape, Device dev, const F& f) {
  static_assert(sizeof(T) == sizeof(P) * F::parts);
  const GenerateFn<P, F> fn = GenerateKernel<P, F>::on[kind_index(dev)];
  if (fn == nullptr) [[unlikely]]
    fail(op, "no kernel for device ", dev.str(), " (", dtype_traits<T>::name, " output)");
  Tensor<T> out = Tensor<T>::empty(shape, dev);
  if (out.numel() > 0) fn(dev.index, f, static_cast<P*>(out.impl()->data()), out.numel());
  return out;
}

}  // namespace tenax::detail
