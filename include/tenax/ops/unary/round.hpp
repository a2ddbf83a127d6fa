#pragma once
// round: the nearest integer, halves to even (NumPy and PyTorch; real).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/unary/piecewise_constant.hpp"

namespace tenax {
namespace ops {

struct Round : PiecewiseConstant<Round, fn::Round> {
  static constexpr const char* name = "round";
};

}  // namespace ops

template <RealFloating T>
Tensor<T> round(const Tensor<T>& x) {
  return detail::apply(ops::Round{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_ROUND(T) TENAX_INSTANCE Tensor<T> round(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_REAL, TENAX_INSTANCES_ROUND)

}  // namespace tenax
