#pragma once
// eq, ne, lt, le, gt, ge: elementwise comparisons with broadcasting. They have no derivative, so they
// run the kernel directly and never record.
#include "tenax/ad/apply.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {}  // namespace ops

template <Scalar T>
Tensor<bool> eq(const Tensor<T>& a, const Tensor<T>& b) {
  return detail::map<bool>("eq", fn::Eq{}, a, b);
}

template <Scalar T>
Tensor<bool> ne(const Tensor<T>& a, const Tensor<T>& b) {
  return detail::map<bool>("ne", fn::Ne{}, a, b);
}

template <Scalar T>
Tensor<bool> lt(const Tensor<T>& a, const Tensor<T>& b) {
  return detail::map<bool>("lt", fn::Lt{}, a, b);
}

template <Scalar T>
Tensor<bool> le(const Tensor<T>& a, const Tensor<T>& b) {
  return detail::map<bool>("le", fn::Le{}, a, b);
}

template <Scalar T>
Tensor<bool> gt(const Tensor<T>& a, const Tensor<T>& b) {
  return detail::map<bool>("gt", fn::Gt{}, a, b);
}

template <Scalar T>
Tensor<bool> ge(const Tensor<T>& a, const Tensor<T>& b) {
  return detail::map<bool>("ge", fn::Ge{}, a, b);
}

}  // namespace tenax
