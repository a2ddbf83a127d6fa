#pragma once
// to_device: copies a tensor to another device (identity when already there).
#include "tenax/ad/apply.hpp"
#include "tenax/backend/device_copy.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct ToDevice {
  static constexpr const char* name = "to";
  static constexpr bool saves_outputs = false;
  Device dst;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    Tensor<T> c = contiguous(x);
    Tensor<T> out = Tensor<T>::empty(x.shape(), dst);
    detail::copy_bytes(out.impl()->data(), dst, c.impl()->data(), x.device(),
                       static_cast<std::size_t>(x.numel()) * sizeof(T));
    return out;
  }
  // A copy: dy = to(dx); gx = gy copied back to x's device.
  template <class C>
  auto jvp(const C& c) const {
    return to_device(c.dx0(), dst);
  }
  template <class C>
  auto vjp(const C& c) const {
    return to_device(c.gy0(), c.x0().device());
  }
};

}  // namespace ops

template <Scalar T>
Tensor<T> to_device(const Tensor<T>& x, Device d) {
  detail::check_defined("to_device", x);
  if (x.device() == d) return x;
  if constexpr (dtype_traits<T>::is_floating)
    return detail::apply(ops::ToDevice{d}, x);
  else
    return detail::apply_nondiff(ops::ToDevice{d}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_TO_DEVICE(T) TENAX_INSTANCE Tensor<T> to_device(const Tensor<T>&, Device);
TENAX_DECLARE_INSTANCES(TENAX_FOR_SCALAR, TENAX_INSTANCES_TO_DEVICE)

}  // namespace tenax
