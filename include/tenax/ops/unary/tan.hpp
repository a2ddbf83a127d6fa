#pragma once
// tan: elementwise tan, with derivatives (real and complex).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/unary/by_slope.hpp"

namespace tenax {
namespace ops {

// y = tan x: dy = (1 + y^2) dx; gx = conj(1 + y^2) gy.
struct Tan : BySlope<Tan, fn::Tan> {
  static constexpr const char* name = "tan";
  static constexpr bool saves_outputs = true;
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
