#pragma once
// square: elementwise op.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Square {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "square";
  static constexpr bool saves_outputs = false;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return detail::map<T>(name, fn::Square{}, x);
  }
  // y = x^2: dy = 2x dx; gx = conj(2x) gy.
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    return mul(c.dx0(), mul(c.x0(), T(2)));
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    return mul(c.gy0(), conj(mul(c.x0(), T(2))));
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> square(const Tensor<T>& x) {
  return detail::apply(ops::Square{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_SQUARE(T) TENAX_INSTANCE Tensor<T> square(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_SQUARE)

}  // namespace tenax
