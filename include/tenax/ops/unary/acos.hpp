#pragma once
// acos: elementwise acos, with derivatives (real and complex).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/unary/by_slope.hpp"

namespace tenax {
namespace ops {

// y = acos x: dy = -dx / sqrt(1 - x^2); gx = conj(-1 / sqrt(1 - x^2)) gy.
struct Acos : BySlope<Acos, fn::Acos> {
  static constexpr const char* name = "acos";
  static constexpr bool saves_outputs = false;
  template <class T>
  static Tensor<T> slope(const Tensor<T>& x) {
    return neg(rsqrt(rsub(square(x), T(1))));
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> acos(const Tensor<T>& x) {
  return detail::apply(ops::Acos{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_ACOS(T) TENAX_INSTANCE Tensor<T> acos(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_ACOS)

}  // namespace tenax
