#pragma once
// Function transforms over the eager engine: grad, value_and_grad, vjp, jvp, hvp.
//
// Nesting: when an input already takes part in an enclosing reverse pass (grad of grad), the
// inner pass differentiates with respect to a recorded view of it (grad_input) and records its
// own backward (create_graph), so the outer pass differentiates through it. The same holds for an inner
// transform over other variables run while an outer one evaluates its function (the inner
// function closes over the outer variable): it records its backward too. Forward over reverse (jvp of grad,
// Hessian-vector products) needs nothing special: the backward rules are public ops, so they
// carry the tangents of their inputs. Forward over forward (jvp of jvp): a tensor holds one
// tangent, so a jvp run while another one evaluates its function (or on an input that already
// carries a tangent) does not use that slot. It transposes a VJP twice instead: with u -> J^H u
// recorded, the VJP of that linear map at dx is J dx. Every op on the way is a public op, so the
// enclosing level's tangents flow through it (one forward and two backward passes).
#include <array>
#include <functional>
#include <tuple>
#include <utility>

#include "tenax/ad/engine.hpp"
#include "tenax/ad/mode.hpp"
#include "tenax/ad/tensor_ad.hpp"
#include "tenax/core/shared_state.hpp"
#include "tenax/core/tensor.hpp"
#include "tenax/ops/shape/reshape.hpp"

namespace tenax {
namespace detail {

// One more level of a thread's transform depth while in scope.
template <int& (*Depth)()>
class DepthScope {
 public:
  DepthScope() { ++Depth(); }
  ~DepthScope() { --Depth(); }
  DepthScope(const DepthScope&) = delete;
  DepthScope& operator=(const DepthScope&) = delete;
};

// How many reverse-mode transforms (grad, value_and_grad, vjp) are evaluating their function on
// this thread. An inner transform run inside an outer one records its backward pass (create_graph)
// when recording is on, so that the outer one differentiates through it even when the inner
// inputs are not the outer ones (a closure over the outer variable).
TENAX_SHARED_STATE inline int& transform_depth() {
  thread_local int depth = 0;
  return depth;
}
using TransformScope = DepthScope<transform_depth>;
inline bool inside_transform() { return transform_depth() > 0 && is_grad_enabled(); }

// How many jvp transforms are evaluating their function on this thread. A jvp run inside another
// one takes the nested path (see the top of this file): the tensors it sees may carry the outer
// level's tangents in the one tangent slot.
TENAX_SHARED_STATE inline int& forward_depth() {
  thread_local int depth = 0;
  return depth;
}
using ForwardScope = DepthScope<forward_depth>;

// t itself when `keep`; otherwise t off the tape, with its tangent's value (not the graph that
// computed it).
template <class Y>
Y result_of_transform(const Y& t, bool keep) {
  if (keep) return t;
  ImplPtr p = shallow_copy(*t.impl());
  if (t.impl()->tangent) p->tangent = shallow_copy(*t.impl()->tangent);
  return Y(std::move(p));
}

// A tensor to differentiate with respect to. When an enclosing pass records x: a recorded view
// of x (an identity on the tape), so the inner pass stops at a node of its own and counts only
// the function's uses of its argument, not those of x the function closes over; the enclosing
// pass differentiates through the view to x. Otherwise a fresh leaf sharing x's data (and tangent).
template <class T>
Tensor<T> grad_input(const Tensor<T>& x, bool& nested, const char* op) {
  TENAX_CHECK(x.defined(), op, "undefined input");
  if (x.tracks_grad() && is_grad_enabled()) {
    nested = true;
    return detail::apply(ops::Reshape{x.shape()}, x);
  }
  return x.requires_grad();  // keeps x's tangent (forward over reverse); detach() would drop it
}

template <class T>
Tensor<T> zeros_if_null(const ImplPtr& g, const Tensor<T>& like) {
  return g ? Tensor<T>(g) : Tensor<T>::zeros(like.shape(), like.device());
}

template <class Y>
void check_scalar_loss(const Y& y) {
  using R = typename Y::value_type;
  TENAX_CHECK(y.defined() && y.numel() == 1, "grad", "the function must return a one-element tensor, got shape ",
              shape_or_undefined(y));
  TENAX_CHECK(!is_complex_v<R>, "grad", "the function must return a real scalar, got ", dtype_traits<R>::name);
}

}  // namespace detail

// (f(x...), gradients of f at x...) for a real scalar-valued f. For complex x the gradient is
// dL/dRe x + i dL/dIm x (PyTorch's convention, docs/MATH.md section 0).
template <class F, Floating... T>
requires(sizeof...(T) > 0) auto value_and_grad(F&& f, const Tensor<T>&... x) {
  bool nested = false;
  std::tuple<Tensor<T>...> xi{detail::grad_input(x, nested, "grad")...};
  nested = nested || detail::inside_transform();
  auto y = [&] {
    GradModeGuard on(true);
    detail::TransformScope scope;
    return std::apply(f, xi);
  }();
  detail::check_scalar_loss(y);
  using Y = decltype(y);
  std::vector<detail::ImplPtr> res(sizeof...(T));
  if (y.tracks_grad()) {
    const detail::ImplPtr roots[] = {y.impl()};
    const detail::ImplPtr seeds[] = {Y::ones(y.shape(), y.device()).impl()};
    const auto ins =
        std::apply([](const auto&... t) { return std::array<detail::ImplPtr, sizeof...(T)>{t.impl()...}; }, xi);
    res = detail::run_backward({roots, seeds, ins, nested});
  }
  auto g = [&]<std::size_t... I>(std::index_sequence<I...>) {
    return std::tuple<Tensor<T>...>{detail::zeros_if_null(res[I], x)...};
  }
  (std::index_sequence_for<T...>{});
  // (not detach(): while tracing, that records a cut; here the value is y's, cut only from this tape)
  Y value = nested ? y : Y(detail::shallow_copy(*y.impl()));
  if constexpr (sizeof...(T) == 1)
    return std::pair{value, std::get<0>(g)};
  else
    return std::pair{value, g};
}

// Gradient of a real scalar-valued f at x (a tuple of gradients for several inputs).
template <class F, Floating... T>
requires(sizeof...(T) > 0) auto grad(F&& f, const Tensor<T>&... x) {
  return value_and_grad(std::forward<F>(f), x...).second;
}

// (f(x), pullback): pullback(gy) returns the cotangent of x for the output cotangent gy.
template <class F, Floating T>
auto vjp(F&& f, const Tensor<T>& x) {
  bool nested = false;
  Tensor<T> xi = detail::grad_input(x, nested, "vjp");
  nested = nested || detail::inside_transform();
  auto y = [&] {
    GradModeGuard on(true);
    detail::TransformScope scope;
    return f(xi);
  }();
  using Y = decltype(y);
  TENAX_CHECK(y.defined(), "vjp", "the function returned an undefined tensor");
  auto pullback = [xi, y, nested, shape = x.shape(), dev = x.device()](const Y& gy) -> Tensor<T> {
    TENAX_CHECK(gy.defined() && gy.shape() == y.shape(), "vjp", "cotangent of shape ", detail::shape_or_undefined(gy),
                " for an output of shape ", y.shape());
    if (!y.tracks_grad()) return Tensor<T>::zeros(shape, dev);
    const detail::ImplPtr roots[] = {y.impl()};
    const detail::ImplPtr seeds[] = {gy.impl()};
    const detail::ImplPtr ins[] = {xi.impl()};
    auto res = detail::run_backward(
        {roots, seeds, ins, nested || detail::inside_transform() || (gy.tracks_grad() && is_grad_enabled())});
    return res[0] ? Tensor<T>(res[0]) : Tensor<T>::zeros(shape, dev);
  };
  return std::pair{nested ? y : Y(detail::shallow_copy(*y.impl())),  // (as in value_and_grad)
                   std::function<Tensor<T>(const Y&)>(pullback)};
}

namespace detail {

// jvp inside jvp (see the top of this file): (f(x), J dx) by two reverse passes, the tangents of
// the enclosing level carried through both.
template <class F, class T>
auto nested_jvp(F& f, const Tensor<T>& x, const Tensor<T>& dx) {
  bool nested = false;
  Tensor<T> xi = grad_input(x, nested, "jvp");  // keeps x's tangent
  nested = nested || inside_transform();
  auto y = [&] {
    GradModeGuard on(true);
    TransformScope scope;
    ForwardScope fscope;
    return f(xi);
  }();
  using Y = decltype(y);
  TENAX_CHECK(y.defined(), "jvp", "the function returned an undefined tensor");
  // J dx stays differentiable with respect to what the caller differentiates: x (nested) or dx.
  const bool keep_dy = nested || (dx.tracks_grad() && is_grad_enabled());
  Y dy;
  if (y.tracks_grad()) {
    GradModeGuard on(true);
    const Y u = Y::zeros(y.shape(), y.device()).requires_grad();
    const ImplPtr roots[] = {y.impl()}, seeds[] = {u.impl()}, ins[] = {xi.impl()};
    const ImplPtr g = run_backward({roots, seeds, ins, true})[0];  // J^H u, recorded
    if (g && g->requires_grad) {
      const ImplPtr roots2[] = {g}, seeds2[] = {dx.impl()}, ins2[] = {u.impl()};
      const ImplPtr r = run_backward({roots2, seeds2, ins2, keep_dy})[0];
      if (r) dy = Y(r);
    }
  }
  if (!dy.defined()) dy = Y::zeros(y.shape(), y.device());
  return std::pair{result_of_transform(y, nested), result_of_transform(dy, keep_dy)};
}

}  // namespace detail

// (f(x), J dx): forward-mode derivative of f at x in direction dx. Nests (jvp of jvp, any order).
template <class F, Floating T>
auto jvp(F&& f, const Tensor<T>& x, const Tensor<T>& dx) {
  TENAX_CHECK(x.defined() && dx.defined() && dx.shape() == x.shape() && dx.device() == x.device(), "jvp",
              "tangent of shape ", detail::shape_or_undefined(dx), " on ", dx.defined() ? dx.device().str() : "?",
              " for a primal of shape ", detail::shape_or_undefined(x), " on ", x.defined() ? x.device().str() : "?");
  if (x.impl()->tangent || detail::forward_depth() > 0) return detail::nested_jvp(f, x, dx);
  detail::ImplPtr p = detail::tape_copy(*x.impl());
  p->tangent = dx.impl();
  auto y = [&] {
    detail::ForwardScope fscope;
    return f(Tensor<T>(std::move(p)));
  }();
  using Y = decltype(y);
  TENAX_CHECK(y.defined(), "jvp", "the function returned an undefined tensor");
  Y dy = y.tangent().defined() ? y.tangent() : Y::zeros(y.shape(), y.device());
  return std::pair{Y(detail::tape_copy(*y.impl())), dy};
}

// Hessian-vector product H v of a real scalar f at x (forward over reverse).
template <class F, Floating T>
Tensor<T> hvp(F&& f, const Tensor<T>& x, const Tensor<T>& v) {
  return jvp([&](const Tensor<T>& z) { return grad(f, z); }, x, v).second;
}

}  // namespace tenax
