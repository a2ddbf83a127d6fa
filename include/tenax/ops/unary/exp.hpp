#pragma once
// exp: elementwise op.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Exp {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "exp";
  static constexpr bool saves_outputs = true;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return detail::map<T>(name, fn::Exp{}, x);
  }
  // y = e^x (holomorphic): dy = y dx; gx = conj(y) gy.
  template <class C>
  auto jvp(const C& c) const {
    return mul(c.dx0(), c.y0());
  }
  template <class C>
  auto vjp(const C& c) const {
    return mul(c.gy0(), conj(c.y0()));
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> exp(const Tensor<T>& x) {
  return detail::apply(ops::Exp{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_EXP(T) TENAX_INSTANCE Tensor<T> exp(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_EXP)

}  // namespace tenax
