#pragma once
// trunc: x rounded toward zero (real).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/unary/piecewise_constant.hpp"

namespace tenax {
namespace ops {

struct Trunc : PiecewiseConstant<Trunc, fn::Trunc> {
  static constexpr const char* name = "trunc";
};

}  // namespace ops

template <RealFloating T>
Tensor<T> trunc(const Tensor<T>& x) {
  return detail::apply(ops::Trunc{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_TRUNC(T) TENAX_INSTANCE Tensor<T> trunc(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_REAL, TENAX_INSTANCES_TRUNC)

}  // namespace tenax
