#pragma once
// argmax / argmin along one axis or over every element: int64 indices, no derivative (apply_nondiff;
// a trace records them like any op).
#include <concepts>
#include <cstdint>

#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/lines.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {

// The dtypes argmax/argmin take: the real floating ones and the integers.
template <class T>
concept ArgOrdered = RealFloating<T> || std::same_as<T, std::int32_t> || std::same_as<T, std::int64_t>;

namespace ops {

struct ArgExtremum {
  static constexpr const char* name = "argmax/argmin";
  static constexpr bool one_kernel = true;  // forward is one captured kernel call (kernels/capture.hpp)
  int axis;
  bool keepdim;
  bool is_max;
  template <class T>
  Tensor<std::int64_t> forward(const Tensor<T>& x) const {
    const Tensor<std::int64_t> r = is_max ? detail::along_lines<std::int64_t>("argmax", x, axis, fn::ArgMax{}, false)
                                          : detail::along_lines<std::int64_t>("argmin", x, axis, fn::ArgMin{}, false);
    if (keepdim) return r;
    Shape s;
    for (int d = 0; d < x.dim(); ++d)
      if (d != axis) s.push_back(x.shape()[d]);
    return Tensor<std::int64_t>(detail::make_view_impl(*r.impl(), s, col_major_strides(s), 0));
  }
};

}  // namespace ops

namespace detail {
template <ArgOrdered T>
Tensor<std::int64_t> arg_extremum(const Tensor<T>& x, std::int64_t axis, bool keepdim, bool is_max) {
  const char* op = is_max ? "argmax" : "argmin";
  check_defined(op, x);
  if (x.dim() == 0) {  // a scalar is its own line (axis 0 or -1)
    wrap_axis(axis, 1, op);
    return reshape(arg_extremum(reshape(x, {1}), 0, false, is_max), Shape{});
  }
  const int a = wrap_axis(axis, x, op);
  TENAX_CHECK(x.shape()[a] > 0, op, "reduction over an empty dimension (axis ", axis, ") of shape ", x.shape(),
              dtype_on(x));
  return apply_nondiff(ops::ArgExtremum{a, keepdim, is_max}, x);
}
}  // namespace detail

// The index of the largest element along `axis` (the first on ties; the first NaN where there is
// one, as PyTorch); the axis is removed unless keepdim.
template <ArgOrdered T>
Tensor<std::int64_t> argmax(const Tensor<T>& x, std::int64_t axis, bool keepdim = false) {
  return detail::arg_extremum(x, axis, keepdim, true);
}
template <ArgOrdered T>
Tensor<std::int64_t> argmin(const Tensor<T>& x, std::int64_t axis, bool keepdim = false) {
  return detail::arg_extremum(x, axis, keepdim, false);
}
// Over every element: a 0-d index into the flattened tensor in tenax's column-major element
// order (flatten(x), dimension 0 fastest), so for an m x n matrix the entry (i, j) is i + j m.
template <ArgOrdered T>
Tensor<std::int64_t> argmax(const Tensor<T>& x) {
  detail::check_defined("argmax", x);
  TENAX_CHECK(x.numel() > 0, "argmax", "of an empty tensor of shape ", x.shape(), detail::dtype_on(x));
  return detail::arg_extremum(flatten(x), 0, false, true);
}
template <ArgOrdered T>
Tensor<std::int64_t> argmin(const Tensor<T>& x) {
  detail::check_defined("argmin", x);
  TENAX_CHECK(x.numel() > 0, "argmin", "of an empty tensor of shape ", x.shape(), detail::dtype_on(x));
  return detail::arg_extremum(flatten(x), 0, false, false);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_FOR_ARG_ORDERED(M) M(std::int32_t) M(std::int64_t) TENAX_FOR_REAL(M)
#define TENAX_INSTANCES_ARGMAX(T)                                                   \
  TENAX_INSTANCE Tensor<std::int64_t> argmax(const Tensor<T>&, std::int64_t, bool); \
  TENAX_INSTANCE Tensor<std::int64_t> argmin(const Tensor<T>&, std::int64_t, bool); \
  TENAX_INSTANCE Tensor<std::int64_t> argmax(const Tensor<T>&);                     \
  TENAX_INSTANCE Tensor<std::int64_t> argmin(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_ARG_ORDERED, TENAX_INSTANCES_ARGMAX)

}  // namespace tenax
