#pragma once
// sinh: elementwise sinh, with derivatives (real and complex).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/unary/by_slope.hpp"

namespace tenax {
namespace ops {

// y = sinh x: dy = cosh(x) dx; gx = conj(cosh x) gy.
struct Sinh : BySlope<Sinh, fn::Sinh> {
  static constexpr const char* name = "sinh";
  static constexpr bool saves_outputs = false;
  template <class T>
  static Tensor<T> slope(const Tensor<T>& x) {
    return cosh(x);
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> sinh(const Tensor<T>& x) {
  return detail::apply(ops::Sinh{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_SINH(T) TENAX_INSTANCE Tensor<T> sinh(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_SINH)

}  // namespace tenax
