#pragma once
// embed<View>: the adjoint of a strided view op (slice, diagonal). It writes its input into the
// view of a zero tensor of the view's source shape. The view's own rule is embed's adjoint, and
// embed is the view's, so each is differentiable to any order.
#include "tenax/ad/apply.hpp"
#include "tenax/kernels/dispatch.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

template <class View>
struct Embed {
  static constexpr const char* name = "embed";
  static constexpr bool one_kernel = true;  // forward is one captured kernel call (kernels/capture.hpp)
  static constexpr bool saves_outputs = false;
  View view;
  Shape full;  // shape of the tensor the view was taken from
  template <class T>
  Tensor<T> forward(const Tensor<T>& g) const {
    return detail::dispatch<&Embed::template host<T>, &Embed::template generic<T>>(g.device(), *this, g);
  }
  // Zero, then copy into the view: one kernel, which a prepared program captures.
  template <class T>
  static Tensor<T> host(const Embed& op, const Tensor<T>& g) {
    Tensor<T> out = Tensor<T>::empty(op.full, g.device());
    const Tensor<T> v = op.view.forward(out);
    TENAX_CHECK(v.shape() == g.shape(), name, "input of shape ", g.shape(), " for a view of shape ", v.shape());
    const std::int64_t numel = out.numel(), at = v.offset() * static_cast<std::int64_t>(sizeof(T));
    auto run = [copy = detail::copy_kernel<T, T>(*v.impl(), *g.impl()), numel, at](char* const* p) {
      T* q = reinterpret_cast<T*>(p[0]);
      for (std::int64_t i = 0; i < numel; ++i) q[i] = T(0);
      copy(p[0] + at, p[1]);
    };
    detail::record_kernel(run, out, g);
    return out;
  }
  // Zeros, then a copy into the view.
  template <class T>
  static Tensor<T> generic(const Embed& op, const Tensor<T>& g) {
    Tensor<T> out = Tensor<T>::zeros(op.full, g.device());
    detail::copy_into(op.view.forward(out), g);
    return out;
  }
  // Linear: dy = embed(dx); gx = view(gy).
  template <class C>
  auto jvp(const C& c) const {
    return detail::apply(*this, c.dx0());
  }
  template <class C>
  auto vjp(const C& c) const {
    return detail::apply(view, c.gy0());
  }
};

}  // namespace ops
}  // namespace tenax
