#pragma once
// The derivative rules of the piecewise constant ops (floor, ceil, round, trunc): zero, also at
// the jumps (as PyTorch and JAX). The rules return zeros of the input's shape on its device rather
// than 0 * dx, which would be NaN for an infinite or NaN tangent; zeros are a constant, so the rules
// hold to any order.
#include "tenax/core/tensor.hpp"

namespace tenax::ops {

struct PiecewiseConstant {
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
