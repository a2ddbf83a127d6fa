#pragma once
// log1p: elementwise op.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Log1p {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "log1p";
  static constexpr bool saves_outputs = false;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return detail::map<T>(name, fn::Log1p{}, x);
  }
  // y = log(1 + x): dy = dx / (1 + x); gx = gy / (1 + x).
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    return div(c.dx0(), add(c.x0(), T(1)));
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    return div(c.gy0(), add(c.x0(), T(1)));
  }
};

}  // namespace ops

template <RealFloating T>
Tensor<T> log1p(const Tensor<T>& x) {
  return detail::apply(ops::Log1p{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_LOG1P(T) TENAX_INSTANCE Tensor<T> log1p(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_REAL, TENAX_INSTANCES_LOG1P)

}  // namespace tenax
