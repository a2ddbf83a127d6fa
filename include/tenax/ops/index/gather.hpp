#pragma once
// Gathers along an axis: gather (PyTorch's order and rules: idx of x's rank, no larger than x
// outside axis, no broadcasting), take_along_axis (NumPy's: idx's other dimensions broadcast
// against x's) and index_select (one 1-D index for every slice). out[p] = x[p; axis = idx[p]];
// indices as ops/index/index_kernels.hpp says (negative from the end, out of range raises).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/index/index_kernels.hpp"

namespace tenax {
namespace ops {

struct Gather {
  static constexpr const char* name = "gather";
  static constexpr bool one_kernel = true;  // forward is one captured kernel call (kernels/capture.hpp)
  static constexpr bool saves_outputs = false;
  int axis;
  bool one_d = false;            // index_select: errors name the position along axis
  const char* name_ = "gather";  // the public op (errors and graph nodes name it)
  template <class T>
  Tensor<T> forward(const Tensor<T>& x, const Tensor<std::int64_t>& idx) const {
    Tensor<T> out = Tensor<T>::empty(idx.shape(), x.device());
    if (out.numel() == 0) return out;
    const detail::AxisGeometry g =
        detail::axis_geometry(axis, x.shape(), x.strides(), idx.shape(), idx.strides(), out.strides());
    const detail::DeviceKernels* k = detail::backend_for(name_, x.device()).kernels;
    const detail::IndexReport report{name_, axis, x.shape()[axis], idx.shape(), one_d, x.device()};
    detail::run_checked(
        report,
        [k, g, dev = x.device().index](char* const* p, std::int64_t* bad) {
          k->gather_axis(dev, g, reinterpret_cast<const std::int64_t*>(p[2]), p[1], p[0], sizeof(T), bad);
        },
        static_cast<const Tensor<T>*>(nullptr), out, x, idx);
    return out;
  }
  // Linear in x: dy = gather(dx, idx); gx = scatter_add(0, idx, gy) (each entry of x gets the sum
  // of the cotangents of the positions that read it).
  template <class C>
  auto jvp(const C& c) const {
    return detail::apply(*this, c.dx0(), c.x1());
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    return std::tuple{scatter_add(Tensor<T>::zeros(c.x0().shape(), c.x0().device()), axis, c.x1(), c.gy0()),
                      Tensor<std::int64_t>()};
  }
};

}  // namespace ops

namespace detail {
template <class T>
Tensor<T> gather_along(const Tensor<T>& x, const Tensor<std::int64_t>& idx, const ops::Gather& op) {
  if constexpr (dtype_traits<T>::is_floating)
    return apply(op, x, idx);
  else
    return apply_nondiff(op, x, idx);
}
}  // namespace detail

// out[p] = x[p; axis = idx[p]], out of idx's shape (idx of x's rank, at most x's extent outside
// axis). PyTorch's torch.gather, with negative indices counted from the end.
template <Scalar T>
Tensor<T> gather(const Tensor<T>& x, int axis, const Tensor<std::int64_t>& idx) {
  detail::check_defined("gather", x, idx);
  const int a = wrap_axis(axis, x, "gather");
  detail::check_index_args("gather", x, a, idx, detail::IndexExtents::at_most);
  return detail::gather_along(x, idx, ops::Gather{a});
}

// NumPy's take_along_axis: idx has x's rank; outside axis, its dimensions and x's broadcast.
template <Scalar T>
Tensor<T> take_along_axis(const Tensor<T>& x, const Tensor<std::int64_t>& idx, int axis) {
  detail::check_defined("take_along_axis", x, idx);
  const int a = wrap_axis(axis, x, "take_along_axis");
  detail::check_index_args("take_along_axis", x, a, idx, detail::IndexExtents::broadcast);
  Shape xs = x.shape(), is = idx.shape();
  for (int d = 0; d < x.dim(); ++d)
    if (d != a) xs[d] = is[d] = x.shape()[d] == 1 ? idx.shape()[d] : x.shape()[d];
  return detail::gather_along(broadcast_to(x, xs), broadcast_to(idx, is), ops::Gather{a, false, "take_along_axis"});
}

// The slices of x at the positions idx (1-D) along axis: out has x's shape with axis idx's length.
template <Scalar T>
Tensor<T> index_select(const Tensor<T>& x, int axis, const Tensor<std::int64_t>& idx) {
  detail::check_defined("index_select", x, idx);
  const int a = wrap_axis(axis, x, "index_select");
  detail::check_index_vector("index_select", x, idx);
  Shape s = x.shape();
  s[a] = idx.numel();
  return detail::gather_along(x, detail::spread_along(idx, a, s), ops::Gather{a, true, "index_select"});
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_GATHER(T)                                                               \
  TENAX_INSTANCE Tensor<T> gather(const Tensor<T>&, int, const Tensor<std::int64_t>&);          \
  TENAX_INSTANCE Tensor<T> take_along_axis(const Tensor<T>&, const Tensor<std::int64_t>&, int); \
  TENAX_INSTANCE Tensor<T> index_select(const Tensor<T>&, int, const Tensor<std::int64_t>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_SCALAR, TENAX_INSTANCES_GATHER)

}  // namespace tenax
