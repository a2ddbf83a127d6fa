#pragma once
// The forward and rules of a unary elementwise op y = f(x) given its functor Fn and its slope
// f'(x): Op::slope(x), or Op::slope(y) where the op saves its outputs (Op::saves_outputs). Then
// dy = f'(x) dx and gx = conj(f'(x)) gy. The slope is written with public ops, so the rules are
// differentiable again. Op derives from BySlope<Op, Fn> and names itself, as every op does.
#include "tenax/core/dtype.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax::ops {

template <class Op, class Fn>
struct BySlope {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return detail::map<T>(Op::name, Fn{}, x);
  }
  template <class C>
  auto jvp(const C& c) const {
    return mul(c.dx0(), slope_of(c));
  }
  template <class C>
  auto vjp(const C& c) const {
    auto s = slope_of(c);
    if constexpr (is_complex_v<typename decltype(s)::value_type>)
      return mul(c.gy0(), conj(s));
    else
      return mul(c.gy0(), s);
  }

 private:
  template <class C>
  static auto slope_of(const C& c) {
    if constexpr (Op::saves_outputs)
      return Op::slope(c.y0());
    else
      return Op::slope(c.x0());
  }
};

}  // namespace tenax::ops
