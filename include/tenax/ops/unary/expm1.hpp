#pragma once
// expm1: elementwise op.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Expm1 {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "expm1";
  static constexpr bool saves_outputs = true;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return detail::map<T>(name, fn::Expm1{}, x);
  }
  // y = e^x - 1: dy = (y + 1) dx; gx = (y + 1) gy.
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    return mul(c.dx0(), add(c.y0(), T(1)));
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    return mul(c.gy0(), add(c.y0(), T(1)));
  }
};

}  // namespace ops

template <RealFloating T>
Tensor<T> expm1(const Tensor<T>& x) {
  return detail::apply(ops::Expm1{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_EXPM1(T) TENAX_INSTANCE Tensor<T> expm1(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_REAL, TENAX_INSTANCES_EXPM1)

}  // namespace tenax
