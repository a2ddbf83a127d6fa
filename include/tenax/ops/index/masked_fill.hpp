#pragma once
// masked_fill: x with value where mask (broadcast to x's shape) is true. A composition with where,
// so its derivatives (x's off the mask; a 0-d value tensor's, the sum over the mask) are where's.
#include "tenax/core/instances.hpp"
#include "tenax/ops/binary/where.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {

// value: a 0-d tensor on x's device.
template <Scalar T>
Tensor<T> masked_fill(const Tensor<T>& x, const Tensor<bool>& mask, const Tensor<T>& value) {
  detail::check_defined("masked_fill", x, mask, value);
  TENAX_CHECK(mask.device() == x.device() && value.device() == x.device(), "masked_fill",
              "inputs are on different devices (x on ", x.device().str(), ", mask on ", mask.device().str(),
              ", value on ", value.device().str(), ")");
  TENAX_CHECK(value.dim() == 0, "masked_fill", "the value must be a 0-d tensor (shape ", value.shape(), ")",
              detail::dtype_on(value));
  TENAX_CHECK(mask.dim() <= x.dim() && broadcast_conflict(mask.shape(), x.shape()) < 0 &&
                  broadcast_shapes(mask.shape(), x.shape(), "masked_fill") == x.shape(),
              "masked_fill", "a mask of shape ", mask.shape(), " does not broadcast to x's shape ", x.shape(),
              detail::dtype_on(x));
  return where(mask, value, x);
}

template <Scalar T>
Tensor<T> masked_fill(const Tensor<T>& x, const Tensor<bool>& mask, T value) {
  detail::check_defined("masked_fill", x);
  return masked_fill(x, mask, Tensor<T>::full({}, value, x.device()));
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_MASKED_FILL(T)                                                           \
  TENAX_INSTANCE Tensor<T> masked_fill(const Tensor<T>&, const Tensor<bool>&, const Tensor<T>&); \
  TENAX_INSTANCE Tensor<T> masked_fill(const Tensor<T>&, const Tensor<bool>&, T);
TENAX_DECLARE_INSTANCES(TENAX_FOR_SCALAR, TENAX_INSTANCES_MASKED_FILL)

}  // namespace tenax
