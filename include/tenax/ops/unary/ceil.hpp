#pragma once
// ceil: the smallest integer not below x (real).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/unary/piecewise_constant.hpp"

namespace tenax {
namespace ops {

struct Ceil : PiecewiseConstant<Ceil, fn::Ceil> {
  static constexpr const char* name = "ceil";
};

}  // namespace ops

template <RealFloating T>
Tensor<T> ceil(const Tensor<T>& x) {
  return detail::apply(ops::Ceil{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_CEIL(T) TENAX_INSTANCE Tensor<T> ceil(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_REAL, TENAX_INSTANCES_CEIL)

}  // namespace tenax
