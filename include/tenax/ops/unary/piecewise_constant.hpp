#pragma once
// The forward and rules of the piecewise constant ops (floor, ceil, round, trunc), given the
// functor Fn: the derivative is zero, also at the jumps (as PyTorch and JAX). The rules return
// zeros of the input's shape on its device rather than 0 * dx, which would be NaN for an infinite
// or NaN tangent; zeros are a constant, so the rules hold to any order. Op derives from
// PiecewiseConstant<Op, Fn> and names itself.
#include "tenax/ad/apply.hpp"
#include "tenax/core/tensor.hpp"
#include "tenax/kernels/map.hpp"

namespace tenax::ops {

template <class Op, class Fn>
struct PiecewiseConstant {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr bool saves_outputs = false;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return detail::map<T>(Op::name, Fn{}, x);
  }
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    return Tensor<T>::zeros(c.dy0_shape(), c.x0().device());
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    return Tensor<T>::zeros(detail::tangent_shape(c.x0().shape()), c.x0().device());
  }
};

}  // namespace tenax::ops
