#pragma once
// cos: elementwise op.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Cos {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "cos";
  static constexpr bool saves_outputs = false;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return detail::map<T>(name, fn::Cos{}, x);
  }
  // y = cos x: dy = -sin(x) dx; gx = -conj(sin x) gy.
  template <class C>
  auto jvp(const C& c) const {
    return mul(c.dx0(), neg(sin(c.x0())));
  }
  template <class C>
  auto vjp(const C& c) const {
    return mul(c.gy0(), neg(conj(sin(c.x0()))));
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> cos(const Tensor<T>& x) {
  return detail::apply(ops::Cos{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_COS(T) TENAX_INSTANCE Tensor<T> cos(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_COS)

}  // namespace tenax
