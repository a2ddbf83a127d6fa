#pragma once
// put_along_axis (NumPy's, out of place): out = x; out[p; axis = idx[p]] = values[p]. When several
// positions name one target, the last in index order wins (the largest position along axis), on
// every device. Indices as ops/index/index_kernels.hpp says.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/binary/compare.hpp"
#include "tenax/ops/binary/where.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/index/index_kernels.hpp"

namespace tenax {
namespace ops {

struct PutAlongAxis {
  static constexpr const char* name = "put_along_axis";
  static constexpr bool one_kernel = true;  // forward is one captured kernel call (kernels/capture.hpp)
  static constexpr bool saves_outputs = false;
  int axis;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x, const Tensor<std::int64_t>& idx, const Tensor<T>& values) const {
    Tensor<T> out = Tensor<T>::empty(x.shape(), x.device());
    if (out.numel() == 0 && idx.numel() == 0) return out;
    const detail::AxisGeometry g =
        detail::axis_geometry(axis, x.shape(), out.strides(), idx.shape(), idx.strides(), values.strides());
    const detail::DeviceKernels* k = detail::backend_for(name, x.device()).kernels;
    const detail::IndexReport report{name, axis, x.shape()[axis], idx.shape(), false, x.device()};
    detail::run_checked(
        report,
        [k, g, dev = x.device().index](char* const* p, std::int64_t* bad) {
          k->put_axis(dev, g, reinterpret_cast<const std::int64_t*>(p[2]), p[3], p[0], sizeof(T), bad);
        },
        &x, out, x, idx, values);
    return out;
  }
  // y = x off the targets, the winning value on them: dy = put(dx, idx, dvalues);
  // gx = put(gy, idx, 0) (gy with the targets zeroed), gvalues = gather(gy, idx) where the
  // position won its target and 0 where a later position overwrote it. A position won iff putting
  // each position's own coordinate along axis and gathering it back returns that coordinate.
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    auto or_zeros = [](const Tensor<T>& d, const Tensor<T>& x) {
      return d.defined() ? d : Tensor<T>::zeros(x.shape(), x.device());
    };
    return detail::apply(*this, or_zeros(c.dx0(), c.x0()), c.x1(), or_zeros(c.dx2(), c.x2()));
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>& g = c.gy0();
    const Tensor<std::int64_t>& idx = c.x1();
    Tensor<T> gx, gv;
    if (c.needs(0)) gx = detail::apply(*this, g, idx, Tensor<T>::zeros(c.x2().shape(), g.device()));
    if (c.needs(2)) {
      Shape s;
      for (int d = 0; d < idx.dim(); ++d) s.push_back(d == axis ? idx.shape()[d] : 1);
      const Tensor<std::int64_t> k =
          broadcast_to(reshape(Tensor<std::int64_t>::arange(idx.shape()[axis], g.device()), s), idx.shape());
      const Tensor<std::int64_t> put_k =
          put_along_axis(Tensor<std::int64_t>::zeros(g.shape(), g.device()), idx, k, axis);
      gv = where(eq(gather(put_k, axis, idx), k), gather(g, axis, idx), Tensor<T>::zeros({}, g.device()));
    }
    return std::tuple{gx, Tensor<std::int64_t>(), gv};
  }
};

}  // namespace ops

// x with values[p] put at x[p; axis = idx[p]]. idx has x's rank; outside axis its dimensions equal
// x's or are 1 (broadcast to x's), and values broadcast to that shape. Of several positions naming
// one target the last (largest position along axis) wins, and only it gets a gradient.
template <Scalar T>
Tensor<T> put_along_axis(const Tensor<T>& x, const Tensor<std::int64_t>& idx, const Tensor<T>& values, int axis) {
  detail::check_defined("put_along_axis", x, idx, values);
  const int a = wrap_axis(axis, x, "put_along_axis");
  detail::check_index_args("put_along_axis", x, a, idx, detail::IndexExtents::broadcast, values);
  Shape s = x.shape();
  s[a] = idx.shape()[a];
  for (int d = 0; d < x.dim(); ++d)
    TENAX_CHECK(d == a || idx.shape()[d] == x.shape()[d] || idx.shape()[d] == 1, "put_along_axis",
                "the indices' shape ", idx.shape(), " does not broadcast to x's ", x.shape(), " outside axis ", a,
                detail::dtype_on(x));
  TENAX_CHECK(values.dim() <= s.size() && broadcast_conflict(values.shape(), s) < 0 &&
                  broadcast_shapes(values.shape(), s, "put_along_axis") == s,
              "put_along_axis", "values of shape ", values.shape(), " do not broadcast to ", s,
              detail::dtype_on(values));
  const Tensor<std::int64_t> ib = broadcast_to(idx, s);
  const Tensor<T> vb = broadcast_to(values, s);
  if constexpr (dtype_traits<T>::is_floating)
    return detail::apply(ops::PutAlongAxis{a}, x, ib, vb);
  else
    return detail::apply_nondiff(ops::PutAlongAxis{a}, x, ib, vb);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_PUT_ALONG_AXIS(T) \
  TENAX_INSTANCE Tensor<T> put_along_axis(const Tensor<T>&, const Tensor<std::int64_t>&, const Tensor<T>&, int);
TENAX_DECLARE_INSTANCES(TENAX_FOR_SCALAR, TENAX_INSTANCES_PUT_ALONG_AXIS)

}  // namespace tenax
