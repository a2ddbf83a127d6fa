#pragma once
// The forward and rules of the piecewise constant ops (floor, ceil, round, trunc), given the
// functor Fn: the derivative is zero, also at the jumps (as PyTorch and JAX). The rules return
// zeros of the input's shape on its device rather than 0 * dx, which would be NaN for an infinite
// or NaN tangent; zeros are a constant, so the rules hold to any order. Op derives from
// PiecewiseConstant<Op, Fn> and names itself.
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
    return zeros_of(c.x0());
  }
  template <class C>
  auto vjp(const C& c) const {
    return zeros_of(c.x0());
  }

 private:
  template <class T>
  static Tensor<T> zeros_of(const Tensor<T>& x) {
    return Tensor<T>::zeros(x.shape(), x.device());
  }
};

}  // namespace tenax::ops
