#pragma once
// slice: x[start:stop:step] along one dimension, as a view.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/shape/embed.hpp"

namespace tenax {
namespace ops {

struct Slice {
  static constexpr const char* name = "slice";
  static constexpr bool saves_outputs = false;
  static constexpr bool batched_jvp = true;  // takes batched tangents (ad/apply.hpp)
  int dim;
  std::int64_t start, len, step;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    Shape s = x.shape();
    Strides st = x.strides();
    const std::int64_t off = x.offset() + start * st[dim];
    s[dim] = len;
    st[dim] *= step;
    return Tensor<T>(detail::make_view_impl(*x.impl(), s, st, off));
  }
  // Linear: dy = slice(dx); gx = embed(gy) (zeros outside the slice).
  template <class C>
  auto jvp(const C& c) const {
    return detail::apply(*this, c.dx0());
  }
  template <class C>
  auto vjp(const C& c) const {
    return detail::apply(Embed<Slice>{*this, c.x0().shape()}, c.gy0());
  }
};

}  // namespace ops

// Elements start, start+step, ... < stop of dimension `dim` (negative indices count from the end
// and out-of-range bounds are clamped, as in Python). step must be positive.
template <Scalar T>
Tensor<T> slice(const Tensor<T>& x, int dim, std::int64_t start, std::int64_t stop, std::int64_t step) {
  detail::check_defined("slice", x);
  const int d = wrap_axis(dim, x, "slice");
  TENAX_CHECK(step > 0, "slice", "step must be positive, got ", step, " for shape ", x.shape(), detail::dtype_on(x));
  const std::int64_t n = x.shape()[d];
  auto clamp = [n](std::int64_t i) { return std::clamp<std::int64_t>(i < 0 ? i + n : i, 0, n); };
  start = clamp(start);
  stop = clamp(stop);
  // (no overflow for any step; one element or none needs no step, so stride * step cannot overflow)
  const std::int64_t len = stop > start ? 1 + (stop - start - 1) / step : 0;
  ops::Slice op{d, start, len, len > 1 ? step : 1};
  if constexpr (dtype_traits<T>::is_floating)
    return detail::apply(op, x);
  else
    return detail::apply_nondiff(op, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_SLICE(T) \
  TENAX_INSTANCE Tensor<T> slice(const Tensor<T>&, int, std::int64_t, std::int64_t, std::int64_t);
TENAX_DECLARE_INSTANCES(TENAX_FOR_SCALAR, TENAX_INSTANCES_SLICE)

}  // namespace tenax
