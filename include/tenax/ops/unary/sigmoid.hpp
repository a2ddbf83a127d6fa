#pragma once
// sigmoid: elementwise op.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Sigmoid {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "sigmoid";
  static constexpr bool saves_outputs = true;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return detail::map<T>(name, fn::Sigmoid{}, x);
  }
  // y = 1/(1 + e^-x): dy = y (1 - y) dx; gx = conj(y (1 - y)) gy.
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    return mul(c.dx0(), mul(c.y0(), rsub(c.y0(), T(1))));
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    return mul(c.gy0(), conj(mul(c.y0(), rsub(c.y0(), T(1)))));
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> sigmoid(const Tensor<T>& x) {
  return detail::apply(ops::Sigmoid{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_SIGMOID(T) TENAX_INSTANCE Tensor<T> sigmoid(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_SIGMOID)

}  // namespace tenax
