#pragma once
// neg: elementwise op.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Neg {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "neg";
  static constexpr bool saves_outputs = false;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return detail::map<T>(name, fn::Neg{}, x);
  }
  // y = -x: dy = -dx; gx = -gy.
  template <class C>
  auto jvp(const C& c) const {
    return neg(c.dx0());
  }
  template <class C>
  auto vjp(const C& c) const {
    return neg(c.gy0());
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> neg(const Tensor<T>& x) {
  return detail::apply(ops::Neg{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_NEG(T) TENAX_INSTANCE Tensor<T> neg(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_NEG)

}  // namespace tenax
