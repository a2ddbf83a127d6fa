#pragma once
// tanh: elementwise op.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Tanh {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "tanh";
  static constexpr bool saves_outputs = true;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return detail::map<T>(name, fn::Tanh{}, x);
  }
  // y = tanh x: dy = (1 - y^2) dx; gx = conj(1 - y^2) gy.
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    return mul(c.dx0(), rsub(square(c.y0()), T(1)));
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    return mul(c.gy0(), conj(rsub(square(c.y0()), T(1))));
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> tanh(const Tensor<T>& x) {
  return detail::apply(ops::Tanh{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_TANH(T) TENAX_INSTANCE Tensor<T> tanh(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_TANH)

}  // namespace tenax
