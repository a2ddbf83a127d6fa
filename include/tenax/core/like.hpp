#pragma once
// Tensors shaped like another one: zeros_like, ones_like, full_like (same shape, dtype and device).
#include "tenax/core/tensor.hpp"

namespace tenax {

template <Scalar T>
Tensor<T> zeros_like(const Tensor<T>& x) {
  TENAX_CHECK(x.defined(), "zeros_like", "undefined tensor");
  return Tensor<T>::zeros(x.shape(), x.device());
}

template <Scalar T>
Tensor<T> ones_like(const Tensor<T>& x) {
  TENAX_CHECK(x.defined(), "ones_like", "undefined tensor");
  return Tensor<T>::ones(x.shape(), x.device());
}

template <Scalar T>
Tensor<T> full_like(const Tensor<T>& x, T value) {
  TENAX_CHECK(x.defined(), "full_like", "undefined tensor");
  return Tensor<T>::full(x.shape(), value, x.device());
}

}  // namespace tenax
