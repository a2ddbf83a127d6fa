#pragma once
// The rules of a broadcasting binary op y = f(a, b) given its slopes wa = df/da and wb = df/db
// (tensors that broadcast to y; an undefined slope stands for 1): dy = wa da + wb db, and the
// real cotangents ga = sum_to(wa gy, a), gb = sum_to(wb gy, b). For real ops (no conj).
#include <tuple>

#include "tenax/core/tensor.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax::detail {

template <class T>
Tensor<T> times_slope(const Tensor<T>& w, const Tensor<T>& v) {
  return w.defined() ? mul(w, v) : v;
}

template <class C, class T>
Tensor<T> tangent_by_slopes(const C& c, const Tensor<T>& wa, const Tensor<T>& wb) {
  Tensor<T> r;
  if (c.dx0().defined()) r = times_slope(wa, c.dx0());
  if (c.dx1().defined()) r = accumulate(r, times_slope(wb, c.dx1()));
  return broadcast_to(r, c.y0().shape());
}

template <class C, class T>
std::tuple<Tensor<T>, Tensor<T>> cotangents_by_slopes(const C& c, const Tensor<T>& wa, const Tensor<T>& wb) {
  Tensor<T> ga, gb;
  if (c.needs(0)) ga = sum_to(times_slope(wa, c.gy0()), c.x0().shape());
  if (c.needs(1)) gb = sum_to(times_slope(wb, c.gy0()), c.x1().shape());
  return std::tuple{ga, gb};
}

}  // namespace tenax::detail
