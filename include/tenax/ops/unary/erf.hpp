#pragma once
// erf: elementwise erf, with derivatives (real).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/unary/by_slope.hpp"

namespace tenax {
namespace ops {

// y = erf x: dy = (2 / sqrt(pi)) exp(-x^2) dx; gx = (2 / sqrt(pi)) exp(-x^2) gy.
struct Erf : BySlope<Erf, fn::Erf> {
  static constexpr const char* name = "erf";
  static constexpr bool saves_outputs = false;
  template <class T>
  static Tensor<T> slope(const Tensor<T>& x) {
    return mul(exp(neg(square(x))), T(1.12837916709551257390));
  }
};

}  // namespace ops

template <RealFloating T>
Tensor<T> erf(const Tensor<T>& x) {
  return detail::apply(ops::Erf{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_ERF(T) TENAX_INSTANCE Tensor<T> erf(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_REAL, TENAX_INSTANCES_ERF)

}  // namespace tenax
