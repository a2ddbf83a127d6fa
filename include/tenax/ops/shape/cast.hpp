#pragma once
// cast: converts the element type (complex to real keeps the real part; floating to int32/int64
// truncates toward zero, saturates out of range and sends NaN to 0); clone: a contiguous copy.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

template <class U>
struct Cast {
  static constexpr const char* name = "cast";
  static constexpr bool one_kernel = true;  // forward is one captured kernel call (kernels/capture.hpp)
  static constexpr bool saves_outputs = false;
  static constexpr bool batched_jvp = true, batched_vjp = true;  // batched (co)tangents (ad/apply.hpp)
  template <class T>
  Tensor<U> forward(const Tensor<T>& x) const {
    Tensor<U> out = Tensor<U>::empty(x.shape(), x.device());
    detail::copy_into(out, x);
    return out;
  }
  // A cast is R-linear: dy = cast(dx). Its adjoint casts back: complex -> real keeps Re(gy)
  // (the cotangent of Re), real -> complex gives gy + 0i. Casts to bool/int carry no derivative.
  template <class C>
  auto jvp(const C& c) const {
    if constexpr (dtype_traits<U>::is_floating)
      return cast<U>(c.dx0());
    else
      return Tensor<U>();
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    return cast<T>(c.gy0());
  }
};

struct Clone {
  static constexpr const char* name = "clone";
  static constexpr bool one_kernel = true;  // forward is one captured kernel call (kernels/capture.hpp)
  static constexpr bool saves_outputs = false;
  static constexpr bool batched_jvp = true, batched_vjp = true;  // batched (co)tangents (ad/apply.hpp)
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    Tensor<T> out = Tensor<T>::empty(x.shape(), x.device());
    detail::copy_into(out, x);
    return out;
  }
  // Identity: dy = dx; gx = gy.
  template <class C>
  auto jvp(const C& c) const {
    return c.dx0();
  }
  template <class C>
  auto vjp(const C& c) const {
    return c.gy0();
  }
};

}  // namespace ops

template <Scalar U, Scalar T>
Tensor<U> cast(const Tensor<T>& x) {
  if constexpr (std::is_same_v<U, T>) {
    return x;
  } else if constexpr (dtype_traits<U>::is_floating && dtype_traits<T>::is_floating) {
    return detail::apply(ops::Cast<U>{}, x);
  } else {
    return detail::apply_nondiff(ops::Cast<U>{}, x);  // to or from bool/int: no derivative
  }
}

template <Scalar T>
Tensor<T> clone(const Tensor<T>& x) {
  if constexpr (dtype_traits<T>::is_floating)
    return detail::apply(ops::Clone{}, x);
  else
    return detail::apply_nondiff(ops::Clone{}, x);
}

// A contiguous tensor with the same values: the input itself when already contiguous.
template <Scalar T>
Tensor<T> contiguous(const Tensor<T>& x) {
  detail::check_defined("contiguous", x);
  return x.is_contiguous() ? x : clone(x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_CLONE(T)                    \
  TENAX_INSTANCE Tensor<T> clone(const Tensor<T>&); \
  TENAX_INSTANCE Tensor<T> contiguous(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_SCALAR, TENAX_INSTANCES_CLONE)

}  // namespace tenax
