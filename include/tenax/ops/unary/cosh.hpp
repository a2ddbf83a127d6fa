#pragma once
// cosh: elementwise cosh, with derivatives (real and complex).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/unary/by_slope.hpp"

namespace tenax {
namespace ops {

// y = cosh x: dy = sinh(x) dx; gx = conj(sinh x) gy.
struct Cosh : BySlope<Cosh, fn::Cosh> {
  static constexpr const char* name = "cosh";
  static constexpr bool saves_outputs = false;
  template <class T>
  static Tensor<T> slope(const Tensor<T>& x) {
    return sinh(x);
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> cosh(const Tensor<T>& x) {
  return detail::apply(ops::Cosh{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_COSH(T) TENAX_INSTANCE Tensor<T> cosh(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_COSH)

}  // namespace tenax
