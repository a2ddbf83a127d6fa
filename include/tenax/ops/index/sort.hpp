#pragma once
// sort, argsort and topk along an axis of a real or integer tensor (complex numbers have no order:
// the Sortable constraint rejects them at compile time). The sort is stable (equal values keep
// their order, in both directions) and NaN is the largest value, as in PyTorch: last ascending,
// first descending (NumPy, which has no descending sort, also puts NaN last). topk is a sort
// followed by a slice, so its values are always sorted (sorted = false allows any order).
#include <utility>

#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/dispatch.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/index/gather.hpp"
#include "tenax/ops/index/scatter_add.hpp"
#include "tenax/ops/shape/slice.hpp"

namespace tenax {

template <class T>
concept Sortable = Scalar<T> && !dtype_traits<T>::is_complex;

namespace ops {

struct Sort {
  static constexpr const char* name = "sort";
  static constexpr bool one_kernel = true;     // on the host, one captured kernel (kernels/capture.hpp)
  static constexpr bool saves_outputs = true;  // the indices
  int axis;
  bool descending;
  template <class T>
  std::tuple<Tensor<T>, Tensor<std::int64_t>> forward(const Tensor<T>& x) const {
    Tensor<T> values = Tensor<T>::empty(x.shape(), x.device());
    Tensor<std::int64_t> indices = Tensor<std::int64_t>::empty(x.shape(), x.device());
    if (x.numel() == 0) return {values, indices};
    detail::LineGeometry g;
    g.rank = x.dim();
    g.axis = axis;
    g.n = x.shape()[axis];
    g.lines = x.numel() / g.n;
    for (int d = 0; d < g.rank; ++d) {
      g.shape[d] = x.shape()[d];
      g.x[d] = x.strides()[d];
      g.out[d] = values.strides()[d];
    }
    const detail::SortFn<T> fn = detail::SortKernel<T>::on[kind_index(x.device())];
    if (fn == nullptr) [[unlikely]]
      detail::fail(name, "no kernel for device ", x.device().str(), " (", dtype_traits<T>::name, ")");
    detail::dispatch<&Sort::host<T>, &Sort::generic<T>>(x.device(), fn, g, descending, x, values, indices);
    return {values, indices};
  }
  // The device's kernel, recorded for a prepared program's first run.
  template <class T>
  static void host(detail::SortFn<T> fn, const detail::LineGeometry& g, bool descending, const Tensor<T>& x,
                   const Tensor<T>& values, const Tensor<std::int64_t>& indices) {
    const detail::TensorImpl* const outs[] = {values.impl().get(), indices.impl().get()};
    const detail::TensorImpl* const ins[] = {x.impl().get()};
    detail::record_kernel_n(
        [fn, g, descending, dev = x.device().index](char* const* p) {
          fn(dev, g, reinterpret_cast<const T*>(p[2]), reinterpret_cast<T*>(p[0]),
             reinterpret_cast<std::int64_t*>(p[1]), descending);
        },
        outs, ins);
  }
  // The device's kernel, called.
  template <class T>
  static void generic(detail::SortFn<T> fn, const detail::LineGeometry& g, bool descending, const Tensor<T>& x,
                      const Tensor<T>& values, const Tensor<std::int64_t>& indices) {
    fn(x.device().index, g, x.data(), values.mutable_data(), indices.mutable_data(), descending);
  }
  // The values are x permuted along axis by the indices (held fixed: they are locally constant):
  // dy = take_along_axis(dx, idx); gx = scatter_add(0, idx, gy).
  template <class C>
  auto jvp(const C& c) const {
    return std::tuple{gather(c.dx0(), axis, c.y1()), Tensor<std::int64_t>()};
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    if (!c.gy0().defined()) return Tensor<T>();
    return scatter_add(Tensor<T>::zeros(c.x0().shape(), c.x0().device()), axis, c.y1(), c.gy0());
  }
};

}  // namespace ops

// The values of x sorted along axis (stable; NaN largest) and the positions they came from.
template <Sortable T>
std::pair<Tensor<T>, Tensor<std::int64_t>> sort(const Tensor<T>& x, int axis, bool descending = false) {
  detail::check_defined("sort", x);
  const ops::Sort op{wrap_axis(axis, x, "sort"), descending};
  auto [values, indices] = [&] {
    if constexpr (dtype_traits<T>::is_floating)
      return detail::apply(op, x);
    else
      return detail::apply_nondiff(op, x);
  }();
  return {values, indices};
}

// The positions that sort x along axis (stable; NaN largest).
template <Sortable T>
Tensor<std::int64_t> argsort(const Tensor<T>& x, int axis, bool descending = false) {
  detail::check_defined("argsort", x);
  return std::get<1>(detail::apply_nondiff(ops::Sort{wrap_axis(axis, x, "argsort"), descending}, x));
}

// The k largest (or smallest) values along axis, sorted, and their positions; ties keep the order
// of x (a stable sort), NaN counts as the largest value (PyTorch's topk).
template <Sortable T>
std::pair<Tensor<T>, Tensor<std::int64_t>> topk(const Tensor<T>& x, std::int64_t k, int axis, bool largest = true,
                                                bool sorted = true) {
  detail::check_defined("topk", x);
  const int a = wrap_axis(axis, x, "topk");
  TENAX_CHECK(k >= 0 && k <= x.shape()[a], "topk", "k = ", k, " is out of range for axis ", a, " of length ",
              x.shape()[a], " (shape ", x.shape(), detail::dtype_on(x), ")");
  (void)sorted;  // always sorted
  const auto [values, indices] = sort(x, a, largest);
  return {slice(values, a, 0, k), slice(indices, a, 0, k)};
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_SORT(T)                                                                \
  TENAX_INSTANCE std::pair<Tensor<T>, Tensor<std::int64_t>> sort(const Tensor<T>&, int, bool); \
  TENAX_INSTANCE Tensor<std::int64_t> argsort(const Tensor<T>&, int, bool);                    \
  TENAX_INSTANCE std::pair<Tensor<T>, Tensor<std::int64_t>> topk(const Tensor<T>&, std::int64_t, int, bool, bool);
TENAX_DECLARE_INSTANCES(TENAX_FOR_ORDERED, TENAX_INSTANCES_SORT)

}  // namespace tenax
