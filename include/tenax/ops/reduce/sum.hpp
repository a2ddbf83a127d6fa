#pragma once
// sum over chosen axes (keepdim or not), over everything, and sum_to (the adjoint of broadcasting).
#include <vector>

#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/reduce.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace detail {

template <Scalar T>
AxisMask axis_mask(const std::vector<std::int64_t>& axes, const Tensor<T>& x, std::string_view op) {
  AxisMask m;
  for (auto a : axes) {
    int d = wrap_axis(a, x, op);
    TENAX_CHECK(!m[d], op, "axis ", a, " listed twice (", dtype_traits<T>::name, " tensor of shape ", x.shape(), " on ",
                x.device().str(), ")");
    m[d] = true;
  }
  return m;
}

inline AxisMask all_axes(int rank) {
  AxisMask m;
  for (int d = 0; d < rank; ++d) m[d] = true;
  return m;
}

}  // namespace detail

namespace ops {

struct Sum {
  static constexpr const char* name = "sum";
  static constexpr bool one_kernel = true;  // forward is one captured kernel call (kernels/capture.hpp)
  static constexpr bool saves_outputs = false;
  detail::AxisMask mask;
  bool keepdim;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    Tensor<T> r = detail::reduce<T>(name, x, mask, T(0), fn::Add{});
    if (keepdim) return r;
    const Shape s = detail::reduced_shape(x.shape(), mask, false);
    return Tensor<T>(detail::make_view_impl(*r.impl(), s, col_major_strides(s), 0));
  }
  // Linear: dy = sum(dx); gx = gy broadcast back over the summed axes. Batched tangents (ad/apply.hpp)
  // keep their dimensions and take tangent_shape (the directions stay in the last one).
  static constexpr bool batched_jvp = true, batched_vjp = true;
  template <class C>
  auto jvp(const C& c) const {
    if (detail::tangents_batched() && !keepdim) [[unlikely]]
      return reshape(detail::apply(Sum{mask, true}, c.dx0()), c.dy0_shape());
    return detail::apply(*this, c.dx0());
  }
  template <class C>
  auto vjp(const C& c) const {
    const Shape& xs = c.x0().shape();
    return expand(reshape(c.gy0(), detail::tangent_shape(detail::reduced_shape(xs, mask, true))),
                  detail::tangent_shape(xs));
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> sum(const Tensor<T>& x, const std::vector<std::int64_t>& axes, bool keepdim) {
  detail::check_defined("sum", x);
  return detail::apply(ops::Sum{detail::axis_mask(axes, x, "sum"), keepdim}, x);
}

template <Floating T>
Tensor<T> sum(const Tensor<T>& x) {
  detail::check_defined("sum", x);
  return detail::apply(ops::Sum{detail::all_axes(x.dim()), false}, x);
}

template <Floating T>
Tensor<T> sum_to(const Tensor<T>& x, const Shape& shape) {
  detail::check_defined("sum_to", x);
  if (x.shape() == shape) return x;
  // Batched cotangents (ad/apply.hpp) have rank P + 1, every value at most P: one keeps its
  // directions (a rule's sum over broadcast dimensions).
  if (detail::tangents_batched()) [[unlikely]]
    if (const int p = detail::mode().tangent_batch_rank; x.dim() == p + 1 && shape.size() <= p)
      return sum_to(x, detail::tangent_shape(shape));
  TENAX_CHECK(shape.size() <= x.dim(), "sum_to", "cannot reduce shape ", x.shape(), " to ", shape, detail::dtype_on(x));
  detail::AxisMask m;
  for (int d = 0; d < x.dim(); ++d) {
    const std::int64_t s = d < shape.size() ? shape[d] : 1;
    TENAX_CHECK(s == x.shape()[d] || s == 1, "sum_to", "cannot reduce shape ", x.shape(), " to ", shape,
                detail::dtype_on(x));
    if (s == 1 && x.shape()[d] != 1) m[d] = true;
    if (d >= shape.size()) m[d] = true;
  }
  return reshape(detail::apply(ops::Sum{m, true}, x), shape);
}

template <Floating T>
Tensor<T> mean(const Tensor<T>& x, const std::vector<std::int64_t>& axes, bool keepdim) {
  detail::check_defined("mean", x);
  const detail::AxisMask m = detail::axis_mask(axes, x, "mean");
  std::int64_t n = 1;
  for (int d = 0; d < x.dim(); ++d)
    if (m[d]) n *= x.shape()[d];
  return div(detail::apply(ops::Sum{m, keepdim}, x), T(static_cast<real_t<T>>(n)));
}

template <Floating T>
Tensor<T> mean(const Tensor<T>& x) {
  detail::check_defined("mean", x);
  return div(sum(x), T(static_cast<real_t<T>>(x.numel())));
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_SUM(T)                                                             \
  TENAX_INSTANCE Tensor<T> sum(const Tensor<T>&, const std::vector<std::int64_t>&, bool);  \
  TENAX_INSTANCE Tensor<T> sum(const Tensor<T>&);                                          \
  TENAX_INSTANCE Tensor<T> sum_to(const Tensor<T>&, const Shape&);                         \
  TENAX_INSTANCE Tensor<T> mean(const Tensor<T>&, const std::vector<std::int64_t>&, bool); \
  TENAX_INSTANCE Tensor<T> mean(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_SUM)

}  // namespace tenax
