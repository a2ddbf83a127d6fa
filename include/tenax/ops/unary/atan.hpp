#pragma once
// atan: elementwise atan, with derivatives (real and complex).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/unary/by_slope.hpp"

namespace tenax {
namespace ops {

// y = atan x: dy = dx / (1 + x^2); gx = conj(1 / (1 + x^2)) gy.
struct Atan : BySlope<Atan, fn::Atan> {
  static constexpr const char* name = "atan";
  static constexpr bool saves_outputs = false;
  template <class T>
  static Tensor<T> slope(const Tensor<T>& x) {
    return rdiv(add(square(x), T(1)), T(1));
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> atan(const Tensor<T>& x) {
  return detail::apply(ops::Atan{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_ATAN(T) TENAX_INSTANCE Tensor<T> atan(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_ATAN)

}  // namespace tenax
