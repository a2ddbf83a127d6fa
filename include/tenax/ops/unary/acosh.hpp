#pragma once
// acosh: elementwise acosh, with derivatives (real and complex).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/unary/by_slope.hpp"

namespace tenax {
namespace ops {

// y = acosh x: dy = dx / (sqrt(x - 1) sqrt(x + 1)) (sqrt(x^2 - 1) for real x > 1; the
// product is the principal branch's derivative for complex x); gx = conj of that, times gy.
struct Acosh : BySlope<Acosh, fn::Acosh> {
  static constexpr const char* name = "acosh";
  static constexpr bool saves_outputs = false;
  template <class T>
  static Tensor<T> slope(const Tensor<T>& x) {
    return rdiv(mul(sqrt(add(x, T(-1))), sqrt(add(x, T(1)))), T(1));
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> acosh(const Tensor<T>& x) {
  return detail::apply(ops::Acosh{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_ACOSH(T) TENAX_INSTANCE Tensor<T> acosh(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_ACOSH)

}  // namespace tenax
