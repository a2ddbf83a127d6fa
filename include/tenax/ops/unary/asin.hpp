#pragma once
// asin: elementwise asin, with derivatives (real and complex).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/unary/by_slope.hpp"

namespace tenax {
namespace ops {

// y = asin x: dy = dx / sqrt(1 - x^2) (the principal branches); gx = conj(1 / sqrt(1 - x^2)) gy.
struct Asin : BySlope<Asin, fn::Asin> {
  static constexpr const char* name = "asin";
  static constexpr bool saves_outputs = false;
  template <class T>
  static Tensor<T> slope(const Tensor<T>& x) {
    return rsqrt(rsub(square(x), T(1)));
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> asin(const Tensor<T>& x) {
  return detail::apply(ops::Asin{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_ASIN(T) TENAX_INSTANCE Tensor<T> asin(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_ASIN)

}  // namespace tenax
