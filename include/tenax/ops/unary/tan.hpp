#pragma once
// tan: elementwise op (real and complex).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Tan {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "tan";
  static constexpr bool saves_outputs = true;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return detail::map<T>(name, fn::Tan{}, x);
  }
  // y = tan x: dy = (1 + y^2) dx; gx = conj(1 + y^2) gy.
  template <class C>
  auto jvp(const C& c) const {
    return mul(c.dx0(), slope(c.y0()));
  }
  template <class C>
  auto vjp(const C& c) const {
    return mul(c.gy0(), conj(slope(c.y0())));
  }

 private:
  template <class T>
  static Tensor<T> slope(const Tensor<T>& y) {
    return add(square(y), T(1));
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> tan(const Tensor<T>& x) {
  return detail::apply(ops::Tan{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_TAN(T) TENAX_INSTANCE Tensor<T> tan(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_TAN)

}  // namespace tenax
