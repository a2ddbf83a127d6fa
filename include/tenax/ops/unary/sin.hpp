#pragma once
// sin: elementwise op.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Sin {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "sin";
  static constexpr bool saves_outputs = false;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return detail::map<T>(name, fn::Sin{}, x);
  }
  // y = sin x: dy = cos(x) dx; gx = conj(cos x) gy.
  template <class C>
  auto jvp(const C& c) const {
    return mul(c.dx0(), cos(c.x0()));
  }
  template <class C>
  auto vjp(const C& c) const {
    return mul(c.gy0(), conj(cos(c.x0())));
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> sin(const Tensor<T>& x) {
  return detail::apply(ops::Sin{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_SIN(T) TENAX_INSTANCE Tensor<T> sin(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_SIN)

}  // namespace tenax
