#pragma once
// Scatter-adds along an axis, out of place: scatter_add (PyTorch's torch.scatter_add, with src of
// idx's shape) and index_add (the slices of src added at the positions of a 1-D index).
// out = x; out[p; axis = idx[p]] += src[p]. Several positions naming one target all add, in
// increasing position along axis after x's value on every device (no floating atomics), so the
// result is deterministic. Indices as ops/index/index_kernels.hpp says.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/index/index_kernels.hpp"

namespace tenax {
namespace ops {

struct ScatterAdd {
  static constexpr const char* name = "scatter_add";
  static constexpr bool one_kernel = true;  // forward is one captured kernel call (kernels/capture.hpp)
  static constexpr bool saves_outputs = false;
  int axis;
  bool one_d = false;                 // index_add: errors name the position along axis
  const char* name_ = "scatter_add";  // the public op (errors and graph nodes name it)
  template <class T>
  Tensor<T> forward(const Tensor<T>& x, const Tensor<std::int64_t>& idx, const Tensor<T>& src) const {
    Tensor<T> out = Tensor<T>::empty(x.shape(), x.device());
    if (out.numel() == 0 && idx.numel() == 0) return out;
    const detail::AxisGeometry g =
        detail::axis_geometry(axis, x.shape(), out.strides(), idx.shape(), idx.strides(), src.strides());
    const detail::ScatterAddFn<T> fn = detail::ScatterAddKernel<T>::on[kind_index(x.device())];
    if (fn == nullptr) [[unlikely]]
      detail::fail(name_, "no kernel for device ", x.device().str(), " (", dtype_traits<T>::name, ")");
    const detail::IndexReport report{name_, axis, x.shape()[axis], idx.shape(), one_d, x.device()};
    detail::run_checked(
        report,
        [fn, g, dev = x.device().index](char* const* p, std::int64_t* bad) {
          fn(dev, g, reinterpret_cast<const std::int64_t*>(p[2]), reinterpret_cast<const T*>(p[3]),
             reinterpret_cast<T*>(p[0]), bad);
        },
        &x, out, x, idx, src);
    return out;
  }
  // Linear in (x, src): dy = scatter_add(dx, idx, dsrc); gx = gy, gsrc = gather(gy, idx).
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    if (!c.dx2().defined()) return c.dx0();
    const Tensor<T> dx = c.dx0().defined() ? c.dx0() : Tensor<T>::zeros(c.x0().shape(), c.x0().device());
    return detail::apply(*this, dx, c.x1(), c.dx2());
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    return std::tuple{c.needs(0) ? c.gy0() : Tensor<T>(), Tensor<std::int64_t>(),
                      c.needs(2) ? gather(c.gy0(), axis, c.x1()) : Tensor<T>()};
  }
};

}  // namespace ops

namespace detail {
template <class T>
Tensor<T> scatter_add_along(const Tensor<T>& x, const Tensor<std::int64_t>& idx, const Tensor<T>& src,
                            const ops::ScatterAdd& op) {
  if constexpr (dtype_traits<T>::is_floating)
    return apply(op, x, idx, src);
  else
    return apply_nondiff(op, x, idx, src);
}
}  // namespace detail

// x with src[p] added at x[p; axis = idx[p]] (idx of x's rank, at most x's extent outside axis;
// src of idx's shape: PyTorch also accepts a larger src and reads its leading part).
template <AddableScalar T>
Tensor<T> scatter_add(const Tensor<T>& x, int axis, const Tensor<std::int64_t>& idx, const Tensor<T>& src) {
  detail::check_defined("scatter_add", x, idx, src);
  const int a = wrap_axis(axis, x, "scatter_add");
  detail::check_index_args("scatter_add", x, a, idx, detail::IndexExtents::at_most, src);
  TENAX_CHECK(src.shape() == idx.shape(), "scatter_add", "src's shape ", src.shape(), " differs from the indices' ",
              idx.shape(), detail::dtype_on(src));
  return detail::scatter_add_along(x, idx, src, ops::ScatterAdd{a});
}

// x with the slices of src (x's shape with axis idx's length) added at the positions idx (1-D)
// along axis; repeated positions accumulate.
template <AddableScalar T>
Tensor<T> index_add(const Tensor<T>& x, int axis, const Tensor<std::int64_t>& idx, const Tensor<T>& src) {
  detail::check_defined("index_add", x, idx, src);
  const int a = wrap_axis(axis, x, "index_add");
  detail::check_index_vector("index_add", x, idx);
  Shape s = x.shape();
  s[a] = idx.numel();
  TENAX_CHECK(src.device() == x.device(), "index_add", "inputs are on different devices (x on ", x.device().str(),
              ", src on ", src.device().str(), ")");
  TENAX_CHECK(src.shape() == s, "index_add", "src's shape ", src.shape(), " should be ", s, " (x's shape ", x.shape(),
              " with axis ", a, " of the indices' length)", detail::dtype_on(src));
  return detail::scatter_add_along(x, detail::spread_along(idx, a, s), src, ops::ScatterAdd{a, true, "index_add"});
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_SCATTER_ADD(T)                                                                        \
  TENAX_INSTANCE Tensor<T> scatter_add(const Tensor<T>&, int, const Tensor<std::int64_t>&, const Tensor<T>&); \
  TENAX_INSTANCE Tensor<T> index_add(const Tensor<T>&, int, const Tensor<std::int64_t>&, const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_ADDABLE, TENAX_INSTANCES_SCATTER_ADD)

}  // namespace tenax
