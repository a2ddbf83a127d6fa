#pragma once
// sqrt: elementwise op.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Sqrt {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "sqrt";
  static constexpr bool saves_outputs = true;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return detail::map<T>(name, fn::Sqrt{}, x);
  }
  // y = sqrt x (holomorphic): dy = dx / (2y); gx = gy / conj(2y).
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    return div(c.dx0(), mul(c.y0(), T(2)));
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    return div(c.gy0(), conj(mul(c.y0(), T(2))));
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> sqrt(const Tensor<T>& x) {
  return detail::apply(ops::Sqrt{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_SQRT(T) TENAX_INSTANCE Tensor<T> sqrt(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_SQRT)

}  // namespace tenax
