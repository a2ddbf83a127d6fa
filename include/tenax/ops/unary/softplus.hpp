#pragma once
// softplus: log(1 + e^x), computed stably (real).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/unary/by_slope.hpp"

namespace tenax {
namespace ops {

// y = log(1 + e^x): dy = sigmoid(x) dx; gx = sigmoid(x) gy.
struct Softplus : BySlope<Softplus, fn::Softplus> {
  static constexpr const char* name = "softplus";
  static constexpr bool saves_outputs = false;
  template <class T>
  static Tensor<T> slope(const Tensor<T>& x) {
    return sigmoid(x);
  }
};

}  // namespace ops

template <RealFloating T>
Tensor<T> softplus(const Tensor<T>& x) {
  return detail::apply(ops::Softplus{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_SOFTPLUS(T) TENAX_INSTANCE Tensor<T> softplus(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_REAL, TENAX_INSTANCES_SOFTPLUS)

}  // namespace tenax
