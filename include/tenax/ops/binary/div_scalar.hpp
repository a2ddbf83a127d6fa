#pragma once
// div: a / s (a true division: multiplying by 1 / s would overflow for a subnormal s and round
// twice otherwise).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

template <class T>
struct DivScalar {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "div";
  static constexpr bool saves_outputs = false;
  T s;
  Tensor<T> forward(const Tensor<T>& a) const { return detail::map<T>(name, fn::DivScalar<T>{s}, a); }
  // y = a / s: dy = da / s; ga = gy / conj(s).
  template <class C>
  auto jvp(const C& c) const {
    return div(c.dx0(), s);
  }
  template <class C>
  auto vjp(const C& c) const {
    return div(c.gy0(), fn::conj_of(s));
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> div(const Tensor<T>& a, T s) {
  return detail::apply(ops::DivScalar<T>{s}, a);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_DIV_SCALAR(T) TENAX_INSTANCE Tensor<T> div(const Tensor<T>&, T);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_DIV_SCALAR)

}  // namespace tenax
