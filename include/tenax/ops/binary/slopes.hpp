#pragma once
// The forward and rules of a real broadcasting binary op y = f(a, b) given its functor Fn and its
// slopes wa = df/da and wb = df/db: Op::slopes(c) returns {wa, wb} (tensors that broadcast to y;
// an undefined slope stands for 1). Then dy = wa da + wb db, and ga = sum_to(wa gy, a),
// gb = sum_to(wb gy, b). The slopes are written with public ops, so the rules are differentiable
// again. Op derives from BySlopes<Op, Fn> and names itself, as every op does.
#include <tuple>
#include <type_traits>

#include "tenax/core/tensor.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax::ops {

template <class Op, class Fn>
struct BySlopes {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  template <class T>
  Tensor<T> forward(const Tensor<T>& a, const Tensor<T>& b) const {
    return detail::map<T>(Op::name, Fn{}, a, b);
  }
  template <class C>
  auto jvp(const C& c) const {
    const auto [wa, wb] = Op::slopes(c);
    std::remove_cvref_t<decltype(wa)> r;
    if (c.dx0().defined()) r = times(wa, c.dx0());
    if (c.dx1().defined()) r = detail::accumulate(r, times(wb, c.dx1()));
    return broadcast_to(r, c.dy0_shape());
  }
  template <class C>
  auto vjp(const C& c) const {
    const auto [wa, wb] = Op::slopes(c);
    std::remove_cvref_t<decltype(wa)> ga, gb;
    if (c.needs(0)) ga = sum_to(times(wa, c.gy0()), c.x0().shape());
    if (c.needs(1)) gb = sum_to(times(wb, c.gy0()), c.x1().shape());
    return std::tuple{ga, gb};
  }

 private:
  template <class T>
  static Tensor<T> times(const Tensor<T>& w, const Tensor<T>& v) {
    return w.defined() ? mul(w, v) : v;
  }
};

}  // namespace tenax::ops
