#pragma once
// expand / broadcast_to: a stride-0 view that broadcasts x to a larger shape (aligned at dim 0).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Expand {
  static constexpr const char* name = "expand";
  static constexpr bool saves_outputs = false;
  static constexpr bool batched_jvp = true, batched_vjp = true;  // batched (co)tangents (ad/apply.hpp)
  Shape shape;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    Strides st;
    for (int d = 0; d < shape.size(); ++d) st.push_back(d < x.dim() && x.shape()[d] == shape[d] ? x.strides()[d] : 0);
    return Tensor<T>(detail::make_view_impl(*x.impl(), shape, st, x.offset()));
  }
  // dy = expand(dx); gx = sum_to(gy, x's shape).
  template <class C>
  auto jvp(const C& c) const {
    return expand(c.dx0(), detail::tangent_shape(shape));
  }
  template <class C>
  auto vjp(const C& c) const {
    return sum_to(c.gy0(), c.x0().shape());
  }
};

}  // namespace ops

template <Scalar T>
Tensor<T> expand(const Tensor<T>& x, const Shape& shape) {
  detail::check_defined("expand", x);
  TENAX_CHECK(x.dim() <= shape.size(), "expand", "cannot expand shape ", x.shape(), " to ", shape, " (",
              dtype_traits<T>::name, " on ", x.device().str(), ")");
  for (int d = 0; d < shape.size(); ++d) {
    const std::int64_t s = d < x.dim() ? x.shape()[d] : 1;
    TENAX_CHECK(s == shape[d] || s == 1, "expand", "cannot expand shape ", x.shape(), " to ", shape, " (",
                dtype_traits<T>::name, " on ", x.device().str(), ")");
  }
  checked_numel(shape, "expand", [&] { return detail::dtype_on(x); });
  if (shape == x.shape()) return x;
  if constexpr (dtype_traits<T>::is_floating)
    return detail::apply(ops::Expand{shape}, x);
  else
    return detail::apply_nondiff(ops::Expand{shape}, x);
}

template <Scalar T>
Tensor<T> broadcast_to(const Tensor<T>& x, const Shape& shape) {
  detail::check_defined("broadcast_to", x);
  // Checked here too, so that errors name the op the caller used.
  checked_numel(shape, "broadcast_to", [&] { return detail::dtype_on(x); });
  TENAX_CHECK(x.dim() <= shape.size() && broadcast_conflict(x.shape(), shape) < 0 &&
                  broadcast_shapes(x.shape(), shape, "broadcast_to") == shape,
              "broadcast_to", "cannot broadcast shape ", x.shape(), " to ", shape, detail::dtype_on(x));
  return expand(x, shape);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_EXPAND(T)                                  \
  TENAX_INSTANCE Tensor<T> expand(const Tensor<T>&, const Shape&); \
  TENAX_INSTANCE Tensor<T> broadcast_to(const Tensor<T>&, const Shape&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_SCALAR, TENAX_INSTANCES_EXPAND)

}  // namespace tenax
