#pragma once
// max / min over chosen axes or everything (real tensors).
#include <limits>
#include <vector>

#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/reduce.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/reduce/sum.hpp"

namespace tenax {
namespace ops {

struct Extremum {
  static constexpr const char* name = "max/min";
  static constexpr bool one_kernel = true;  // forward is one captured kernel call (kernels/capture.hpp)
  detail::AxisMask mask;
  bool keepdim;
  bool is_max;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    TENAX_CHECK(
        x.numel() > 0 ||
            [&] {
              for (int d = 0; d < x.dim(); ++d)
                if (mask[d] && x.shape()[d] == 0) return false;
              return true;
            }(),
        is_max ? "max" : "min", "reduction over an empty dimension of shape ", x.shape(), detail::dtype_on(x));
    const T init = is_max ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    Tensor<T> r = is_max ? detail::reduce<T>("max", x, mask, init, fn::FoldMax{})
                         : detail::reduce<T>("min", x, mask, init, fn::FoldMin{});
    if (keepdim) return r;
    const Shape s = detail::reduced_shape(x.shape(), mask, false);
    return Tensor<T>(detail::make_view_impl(*r.impl(), s, col_major_strides(s), 0));
  }
  // The derivative goes to the positions that attain the extremum; ties share it evenly:
  // w = [x == y] / count(x == y) over each group; dy = sum(w dx); gx = w gy. Where the extremum
  // is a NaN (the forward propagates one), the NaN entries attain it (as in maximum/minimum and
  // PyTorch's max()), so finite entries get 0, not 0/0.
  template <class C>
  auto jvp(const C& c) const {
    return detail::apply(Sum{mask, keepdim}, mul(weights(c.x0(), c.y0()), c.dx0()));
  }
  template <class C>
  auto vjp(const C& c) const {
    return mul(weights(c.x0(), c.y0()), expand(reshape(c.gy0(), kshape(c.x0())), c.x0().shape()));
  }

 private:
  Shape kshape(const auto& x) const { return detail::reduced_shape(x.shape(), mask, true); }
  template <class T>
  Tensor<T> weights(const Tensor<T>& x, const Tensor<T>& y) const {
    const auto ye = expand(reshape(y, kshape(x)), x.shape());
    auto hit = add(cast<T>(eq(x, ye)), mul(cast<T>(ne(x, x)), cast<T>(ne(ye, ye))));
    return div(hit, expand(detail::apply(Sum{mask, true}, hit), x.shape()));
  }
};

}  // namespace ops

template <RealFloating T>
Tensor<T> max(const Tensor<T>& x, const std::vector<std::int64_t>& axes, bool keepdim) {
  detail::check_defined("max", x);
  return detail::apply(ops::Extremum{detail::axis_mask(axes, x, "max"), keepdim, true}, x);
}
template <RealFloating T>
Tensor<T> max(const Tensor<T>& x) {
  detail::check_defined("max", x);
  return detail::apply(ops::Extremum{detail::all_axes(x.dim()), false, true}, x);
}
template <RealFloating T>
Tensor<T> min(const Tensor<T>& x, const std::vector<std::int64_t>& axes, bool keepdim) {
  detail::check_defined("min", x);
  return detail::apply(ops::Extremum{detail::axis_mask(axes, x, "min"), keepdim, false}, x);
}
template <RealFloating T>
Tensor<T> min(const Tensor<T>& x) {
  detail::check_defined("min", x);
  return detail::apply(ops::Extremum{detail::all_axes(x.dim()), false, false}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_EXTREMUM(T)                                                       \
  TENAX_INSTANCE Tensor<T> max(const Tensor<T>&, const std::vector<std::int64_t>&, bool); \
  TENAX_INSTANCE Tensor<T> max(const Tensor<T>&);                                         \
  TENAX_INSTANCE Tensor<T> min(const Tensor<T>&, const std::vector<std::int64_t>&, bool); \
  TENAX_INSTANCE Tensor<T> min(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_REAL, TENAX_INSTANCES_EXTREMUM)

}  // namespace tenax
