#pragma once
// rsqrt: elementwise op.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Rsqrt {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "rsqrt";
  static constexpr bool saves_outputs = true;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return detail::map<T>(name, fn::Rsqrt{}, x);
  }
  // y = x^(-1/2): dy = -y^3/2 dx; gx = conj(-y^3/2) gy.
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    return mul(c.dx0(), mul(mul(square(c.y0()), c.y0()), T(-0.5)));
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    return mul(c.gy0(), conj(mul(mul(square(c.y0()), c.y0()), T(-0.5))));
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> rsqrt(const Tensor<T>& x) {
  return detail::apply(ops::Rsqrt{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_RSQRT(T) TENAX_INSTANCE Tensor<T> rsqrt(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_RSQRT)

}  // namespace tenax
