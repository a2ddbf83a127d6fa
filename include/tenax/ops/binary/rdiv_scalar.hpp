#pragma once
// rdiv: s / a.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

template <class T>
struct RDivScalar {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "rdiv";
  static constexpr bool saves_outputs = true;
  T s;
  Tensor<T> forward(const Tensor<T>& a) const { return detail::map<T>(name, fn::RDivScalar<T>{s}, a); }
  // y = s / a: dy = -(y / a) da; ga = -conj(y / a) gy.
  template <class C>
  auto jvp(const C& c) const {
    return neg(mul(c.dx0(), div(c.y0(), c.x0())));
  }
  template <class C>
  auto vjp(const C& c) const {
    return neg(mul(c.gy0(), conj(div(c.y0(), c.x0()))));
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> rdiv(const Tensor<T>& a, T s) {
  return detail::apply(ops::RDivScalar<T>{s}, a);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_RDIV_SCALAR(T) TENAX_INSTANCE Tensor<T> rdiv(const Tensor<T>&, T);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_RDIV_SCALAR)

}  // namespace tenax
