#pragma once
// log10: elementwise log10, with derivatives (real and complex).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/unary/by_slope.hpp"

namespace tenax {
namespace ops {

// y = log10 x = log(x) / log 10: dy = dx / (x log 10); gx = conj(1 / (x log 10)) gy.
struct Log10 : BySlope<Log10, fn::Log10> {
  static constexpr const char* name = "log10";
  static constexpr bool saves_outputs = false;
  template <class T>
  static Tensor<T> slope(const Tensor<T>& x) {
    return rdiv(mul(x, T(2.30258509299404568402)), T(1));
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> log10(const Tensor<T>& x) {
  return detail::apply(ops::Log10{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_LOG10(T) TENAX_INSTANCE Tensor<T> log10(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_LOG10)

}  // namespace tenax
