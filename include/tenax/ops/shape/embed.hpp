#pragma once
// embed<View>: the adjoint of a strided view op (slice, diagonal). It writes its input into the
// view of a zero tensor of the view's source shape. The view's own rule is embed's adjoint, and
// embed is the view's, so each is differentiable to any order.
#include "tenax/ad/apply.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

template <class View>
struct Embed {
  static constexpr const char* name = "embed";
  static constexpr bool saves_outputs = false;
  View view;
  Shape full;  // shape of the tensor the view was taken from
  template <class T>
  Tensor<T> forward(const Tensor<T>& g) const {
    Tensor<T> out = Tensor<T>::zeros(full, g.device());
    detail::copy_into(view.forward(out), g);
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
