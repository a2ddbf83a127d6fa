#pragma once
// erfc: elementwise erfc, with derivatives (real).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/unary/by_slope.hpp"

namespace tenax {
namespace ops {

// y = erfc x = 1 - erf x: dy = -(2 / sqrt(pi)) exp(-x^2) dx; gx likewise.
struct Erfc : BySlope<Erfc, fn::Erfc> {
  static constexpr const char* name = "erfc";
  static constexpr bool saves_outputs = false;
  template <class T>
  static Tensor<T> slope(const Tensor<T>& x) {
    return mul(exp(neg(square(x))), T(-1.12837916709551257390));
  }
};

}  // namespace ops

template <RealFloating T>
Tensor<T> erfc(const Tensor<T>& x) {
  return detail::apply(ops::Erfc{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_ERFC(T) TENAX_INSTANCE Tensor<T> erfc(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_REAL, TENAX_INSTANCES_ERFC)

}  // namespace tenax
