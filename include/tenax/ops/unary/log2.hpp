#pragma once
// log2: elementwise log2, with derivatives (real).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/unary/by_slope.hpp"

namespace tenax {
namespace ops {

// y = log2 x = log(x) / log 2: dy = dx / (x log 2); gx = gy / (x log 2).
struct Log2 : BySlope<Log2, fn::Log2> {
  static constexpr const char* name = "log2";
  static constexpr bool saves_outputs = false;
  template <class T>
  static Tensor<T> slope(const Tensor<T>& x) {
    return rdiv(mul(x, T(0.69314718055994530942)), T(1));
  }
};

}  // namespace ops

template <RealFloating T>
Tensor<T> log2(const Tensor<T>& x) {
  return detail::apply(ops::Log2{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_LOG2(T) TENAX_INSTANCE Tensor<T> log2(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_REAL, TENAX_INSTANCES_LOG2)

}  // namespace tenax
