#pragma once
// asinh: elementwise asinh, with derivatives (real and complex).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/unary/by_slope.hpp"

namespace tenax {
namespace ops {

// y = asinh x: dy = dx / sqrt(x^2 + 1); gx = conj(1 / sqrt(x^2 + 1)) gy.
struct Asinh : BySlope<Asinh, fn::Asinh> {
  static constexpr const char* name = "asinh";
  static constexpr bool saves_outputs = false;
  template <class T>
  static Tensor<T> slope(const Tensor<T>& x) {
    return rsqrt(add(square(x), T(1)));
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> asinh(const Tensor<T>& x) {
  return detail::apply(ops::Asinh{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_ASINH(T) TENAX_INSTANCE Tensor<T> asinh(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_ASINH)

}  // namespace tenax
