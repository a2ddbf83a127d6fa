#pragma once
// floor: the largest integer not above x (real).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/unary/piecewise_constant.hpp"

namespace tenax {
namespace ops {

struct Floor : PiecewiseConstant<Floor, fn::Floor> {
  static constexpr const char* name = "floor";
};

}  // namespace ops

template <RealFloating T>
Tensor<T> floor(const Tensor<T>& x) {
  return detail::apply(ops::Floor{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_FLOOR(T) TENAX_INSTANCE Tensor<T> floor(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_REAL, TENAX_INSTANCES_FLOOR)

}  // namespace tenax
