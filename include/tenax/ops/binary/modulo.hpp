#pragma once
// What remainder and fmod share: y = a - r(a / b) b, where r (Op::round) is floor for remainder and
// trunc for fmod. Real floating dtypes get derivatives; int32/int64 are applied without
// (apply_nondiff). Op derives from Modulo<Op, Fn> and names itself and its rounding.
#include <type_traits>
#include <utility>

#include "tenax/ad/apply.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/binary/slopes.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax::ops {

// r is piecewise constant (derivative 0): dy = da - r(a / b) db; ga = sum_to(gy),
// gb = sum_to(-r(a / b) gy).
template <class Op, class Fn>
struct Modulo : BySlopes<Op, Fn> {
  static constexpr bool saves_outputs = false;
  template <class C>
  static auto slopes(const C& c) {
    using Tn = std::remove_cvref_t<decltype(c.x0())>;
    return std::pair{Tn(), neg(Op::round(div(c.x0(), c.x1())))};
  }
};

// a mod s for a scalar s (Fn carries it): dy = da; ga = gy.
template <class Op, class Fn>
struct ModuloScalar {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = Op::name;
  static constexpr bool saves_outputs = false;
  Fn f;
  template <class T>
  Tensor<T> forward(const Tensor<T>& a) const {
    return detail::map<T>(name, f, a);
  }
  template <class C>
  auto jvp(const C& c) const {
    return c.dx0();
  }
  template <class C>
  auto vjp(const C& c) const {
    return c.gy0();
  }
};

template <class Op, class... In>
auto apply_modulo(const Op& op, const In&... in) {
  if constexpr ((... && Integer<typename In::value_type>))
    return detail::apply_nondiff(op, in...);
  else
    return detail::apply(op, in...);
}

}  // namespace tenax::ops
