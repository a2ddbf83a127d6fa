#pragma once
// Function transforms over the eager engine: grad, value_and_grad, vjp, jvp, hvp, over several
// inputs (argnums<I...> picks which of them grad differentiates) and, for vjp and jvp, functions
// returning a structure of tensors (a tensor, or tuples and pairs of them: ad/structure.hpp).
// Jacobians and Hessians: ad/jacobian.hpp.
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
#include <cstddef>
#include <functional>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tenax/ad/engine.hpp"
#include "tenax/ad/mode.hpp"
#include "tenax/ad/structure.hpp"
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
inline ImplPtr result_of_transform(const ImplPtr& t, bool keep) {
  if (keep) return t;
  ImplPtr p = shallow_copy(*t);
  if (t->tangent) p->tangent = shallow_copy(*t->tangent);
  return p;
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

// f evaluated and recorded on stand-ins for its inputs (grad_input), which reverse-mode transforms
// differentiate with respect to: (the stand-ins, f's result, whether the pass must be recorded).
template <class F, class... T>
auto record_for_reverse(F& f, const char* op, const Tensor<T>&... x) {
  bool nested = false;
  std::tuple<Tensor<T>...> xi{grad_input(x, nested, op)...};
  nested = nested || inside_transform();
  auto y = [&] {
    GradModeGuard on(true);
    TransformScope scope;
    return std::apply(f, xi);
  }();
  return std::tuple{std::move(xi), std::move(y), nested};
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
  auto rec = detail::record_for_reverse(f, "grad", x...);
  const auto& xi = std::get<0>(rec);
  const auto& y = std::get<1>(rec);
  const bool nested = std::get<2>(rec);
  detail::check_scalar_loss(y);
  using Y = std::remove_cvref_t<decltype(y)>;
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

// Which arguments a transform differentiates: grad(f, argnums<0, 2>, x, y, z) differentiates f
// with respect to x and z and holds y fixed (JAX's argnums). The indices are distinct and in range.
template <std::size_t... I>
struct Argnums {};
template <std::size_t... I>
inline constexpr Argnums<I...> argnums{};

namespace detail {

template <std::size_t... I>
constexpr bool distinct_indices() {
  constexpr std::size_t v[] = {I...};
  for (std::size_t a = 0; a < sizeof...(I); ++a)
    for (std::size_t b = a + 1; b < sizeof...(I); ++b)
      if (v[a] == v[b]) return false;
  return true;
}

// f as a function of its arguments I... alone, the others fixed at the values in `all`.
template <std::size_t... I, class F, class... T>
auto select_args(F& f, const std::tuple<Tensor<T>...>& all) {
  static_assert(sizeof...(I) > 0, "argnums: pick at least one argument");
  static_assert(((I < sizeof...(T)) && ...), "argnums: an index is out of range");
  static_assert(distinct_indices<I...>(), "argnums: the indices must be distinct");
  return [&f, &all](const std::tuple_element_t<I, std::tuple<Tensor<T>...>>&... z) {
    std::tuple<Tensor<T>...> args = all;
    ((std::get<I>(args) = z), ...);
    return std::apply(f, args);
  };
}

// One tensor for one input, a tuple for several.
template <class... T>
using PerInput =
    std::conditional_t<sizeof...(T) == 1, std::tuple_element_t<0, std::tuple<Tensor<T>...>>, std::tuple<Tensor<T>...>>;

template <class... T>
PerInput<T...> per_input(std::tuple<Tensor<T>...> t) {
  if constexpr (sizeof...(T) == 1)
    return std::get<0>(std::move(t));
  else
    return t;
}

}  // namespace detail

template <class F, std::size_t... I, Floating... T>
requires(sizeof...(T) > 0) auto value_and_grad(F&& f, Argnums<I...>, const Tensor<T>&... x) {
  const std::tuple<Tensor<T>...> all{x...};
  return value_and_grad(detail::select_args<I...>(f, all), std::get<I>(all)...);
}

template <class F, std::size_t... I, Floating... T>
requires(sizeof...(T) > 0) auto grad(F&& f, Argnums<I...> a, const Tensor<T>&... x) {
  return value_and_grad(std::forward<F>(f), a, x...).second;
}

// (f(x...), pullback): pullback(gy) returns the cotangents of x... (a tensor for one input, a tuple
// for several) for the cotangent gy of f's result, which has the result's structure (a tensor, or
// tuples and pairs of tensors; in a structure, an undefined tensor is a zero cotangent). The forward
// runs once; the pullback may be called any number of times.
template <class F, Floating... T>
requires(sizeof...(T) > 0) auto vjp(F&& f, const Tensor<T>&... x) {
  constexpr std::size_t N = sizeof...(T);
  auto rec = detail::record_for_reverse(f, "vjp", x...);
  const auto& xi = std::get<0>(rec);
  const auto& y = std::get<1>(rec);
  const bool nested = std::get<2>(rec);
  using Y = std::remove_cvref_t<decltype(y)>;
  static_assert(detail::TensorStructure<Y>, "vjp: f must return a tensor, or tuples and pairs of tensors");
  const auto ys = detail::flat_impls(y);
  for (const detail::ImplPtr& p : ys) TENAX_CHECK(p, "vjp", "the function returned an undefined tensor");
  const std::array<detail::ImplPtr, N> ins = std::apply([](const auto&... t) { return std::array{t.impl()...}; }, xi);
  const std::array<Shape, N> shapes{x.shape()...};
  const std::array<Device, N> devs{x.device()...};
  auto pullback = [ins, ys, nested, shapes, devs](const Y& gy) -> detail::PerInput<T...> {
    const auto gs = detail::flat_impls(gy);
    std::array<detail::ImplPtr, detail::Structure<Y>::size> roots, seeds;  // (no allocation per call)
    std::size_t count = 0;
    bool seeds_recorded = false;
    for (std::size_t k = 0; k < ys.size(); ++k) {
      TENAX_CHECK(gs[k] ? gs[k]->shape == ys[k]->shape : !detail::is_tensor<Y>::value, "vjp", "cotangent ",
                  ys.size() > 1 ? std::to_string(k) + " " : std::string(), "of shape ",
                  gs[k] ? to_string(gs[k]->shape) : std::string("undefined"), " for an output of shape ", ys[k]->shape);
      if (!gs[k] || !ys[k]->requires_grad) continue;
      roots[count] = ys[k];
      seeds[count++] = gs[k];
      seeds_recorded = seeds_recorded || gs[k]->requires_grad;
    }
    std::vector<detail::ImplPtr> res;
    if (count > 0)
      res = detail::run_backward({std::span<const detail::ImplPtr>(roots.data(), count),
                                  std::span<const detail::ImplPtr>(seeds.data(), count), ins,
                                  nested || detail::inside_transform() || (seeds_recorded && is_grad_enabled())});
    res.resize(N);
    auto g = [&]<std::size_t... I>(std::index_sequence<I...>) {
      return std::tuple<Tensor<T>...>{res[I] ? Tensor<T>(res[I]) : Tensor<T>::zeros(shapes[I], devs[I])...};
    }
    (std::index_sequence_for<T...>{});
    return detail::per_input<T...>(std::move(g));
  };
  // (not detach(): while tracing, that records a cut; here the value is y's, cut only from this tape)
  Y value = y;
  if (!nested) {
    std::array<detail::ImplPtr, ys.size()> cut;
    for (std::size_t k = 0; k < ys.size(); ++k) cut[k] = detail::shallow_copy(*ys[k]);
    value = detail::unflatten_as<Y>(cut);
  }
  return std::pair{value, std::function<detail::PerInput<T...>(const Y&)>(pullback)};
}

namespace detail {

template <class T>
void check_tangent(std::size_t k, std::size_t n, const Tensor<T>& x, const Tensor<T>& dx, bool allow_undefined) {
  TENAX_CHECK(x.defined() && (dx.defined() ? dx.shape() == x.shape() && dx.device() == x.device() : allow_undefined),
              "jvp", "tangent ", n > 1 ? std::to_string(k) + " " : std::string(), "of shape ", shape_or_undefined(dx),
              " on ", dx.defined() ? dx.device().str() : "?", " for a primal of shape ", shape_or_undefined(x), " on ",
              x.defined() ? x.device().str() : "?");
}

// jvp inside jvp (see the top of this file): (f(x...), J dx) by two reverse passes, the tangents of
// the enclosing level carried through both.
template <class F, class... T>
auto nested_jvp(F& f, const std::tuple<Tensor<T>...>& x, const std::tuple<Tensor<T>...>& dx) {
  constexpr std::size_t N = sizeof...(T);
  bool nested = false;
  const std::tuple<Tensor<T>...> xi =
      std::apply([&](const auto&... t) { return std::tuple<Tensor<T>...>{grad_input(t, nested, "jvp")...}; }, x);
  nested = nested || inside_transform();
  auto y = [&] {
    GradModeGuard on(true);
    TransformScope scope;
    ForwardScope fscope;
    return std::apply(f, xi);
  }();
  using Y = decltype(y);
  const auto ys = flat_impls(y);
  for (const ImplPtr& p : ys) TENAX_CHECK(p, "jvp", "the function returned an undefined tensor");
  const std::array<ImplPtr, N> ins = std::apply([](const auto&... t) { return std::array{t.impl()...}; }, xi);
  const std::array<ImplPtr, N> dins = std::apply([](const auto&... t) { return std::array{t.impl()...}; }, dx);
  // J dx stays differentiable with respect to what the caller differentiates: x (nested) or dx.
  bool keep_dy = nested;
  for (const ImplPtr& d : dins) keep_dy = keep_dy || (d && d->requires_grad && is_grad_enabled());
  std::array<ImplPtr, ys.size()> dys{};
  {
    GradModeGuard on(true);
    std::vector<ImplPtr> roots, us;
    std::vector<std::size_t> at;
    for (std::size_t k = 0; k < ys.size(); ++k) {
      if (!ys[k]->requires_grad) continue;
      roots.push_back(ys[k]);
      us.push_back(dispatch_floating(ys[k]->dtype, [&](auto z) {
        using U = decltype(z);
        return Tensor<U>::zeros(ys[k]->shape, ys[k]->device).requires_grad().impl();
      }));
      at.push_back(k);
    }
    if (!roots.empty()) {
      const std::vector<ImplPtr> g = run_backward({roots, us, ins, true});  // J^H u, recorded
      std::vector<ImplPtr> roots2, seeds2;
      for (std::size_t j = 0; j < N; ++j)
        if (g[j] && g[j]->requires_grad && dins[j]) roots2.push_back(g[j]), seeds2.push_back(dins[j]);
      if (!roots2.empty()) {
        const std::vector<ImplPtr> r = run_backward({roots2, seeds2, us, keep_dy});
        for (std::size_t i = 0; i < at.size(); ++i) dys[at[i]] = r[i];
      }
    }
  }
  std::array<ImplPtr, ys.size()> vs, ts;
  for (std::size_t k = 0; k < ys.size(); ++k) {
    vs[k] = result_of_transform(ys[k], nested);
    if (!dys[k])
      ts[k] = dispatch_floating(ys[k]->dtype, [&](auto z) {
        using U = decltype(z);
        return Tensor<U>::zeros(ys[k]->shape, ys[k]->device).impl();
      });
    else
      ts[k] = result_of_transform(dys[k], keep_dy);
  }
  return std::pair{unflatten_as<Y>(vs), unflatten_as<Y>(ts)};
}

}  // namespace detail

// (f(x...), J dx): the forward-mode derivative of f at the primals x in the directions dx (tuples of
// tensors of the same shapes; an undefined tangent is zero). f returns a tensor, or tuples and pairs
// of tensors; J dx has that structure. Nests (jvp of jvp, any order).
template <class F, Floating... T>
requires(sizeof...(T) > 0) auto jvp(F&& f, const std::tuple<Tensor<T>...>& x, const std::tuple<Tensor<T>...>& dx) {
  constexpr std::size_t N = sizeof...(T);
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (detail::check_tangent(I, N, std::get<I>(x), std::get<I>(dx), true), ...);
  }
  (std::index_sequence_for<T...>{});
  bool carries = detail::forward_depth() > 0;
  std::apply([&](const auto&... t) { ((carries = carries || static_cast<bool>(t.impl()->tangent)), ...); }, x);
  if (carries) return detail::nested_jvp(f, x, dx);
  const std::tuple<Tensor<T>...> xt = [&]<std::size_t... I>(std::index_sequence<I...>) {
    auto with_tangent = [](const auto& p, const auto& d) {
      using X = std::remove_cvref_t<decltype(p)>;
      detail::ImplPtr c = detail::tape_copy(*p.impl());
      if (d.defined()) c->tangent = d.impl();
      return X(std::move(c));
    };
    return std::tuple<Tensor<T>...>{with_tangent(std::get<I>(x), std::get<I>(dx))...};
  }
  (std::index_sequence_for<T...>{});
  auto y = [&] {
    detail::ForwardScope fscope;
    return std::apply(f, xt);
  }();
  using Y = decltype(y);
  static_assert(detail::TensorStructure<Y>, "jvp: f must return a tensor, or tuples and pairs of tensors");
  const auto ys = detail::flat_impls(y);
  std::array<detail::ImplPtr, ys.size()> vs, ts;
  for (std::size_t k = 0; k < ys.size(); ++k) {
    TENAX_CHECK(ys[k], "jvp", "the function returned an undefined tensor");
    vs[k] = detail::tape_copy(*ys[k]);
    ts[k] = ys[k]->tangent ? ys[k]->tangent : dispatch_floating(ys[k]->dtype, [&](auto z) {
      using U = decltype(z);
      return Tensor<U>::zeros(ys[k]->shape, ys[k]->device).impl();
    });
  }
  return std::pair{detail::unflatten_as<Y>(vs), detail::unflatten_as<Y>(ts)};
}

// (f(x), J dx) for one input: jvp(f, std::tuple{x}, std::tuple{dx}) (dx must be defined).
template <class F, Floating T>
auto jvp(F&& f, const Tensor<T>& x, const Tensor<T>& dx) {
  detail::check_tangent(0, 1, x, dx, false);
  return jvp(std::forward<F>(f), std::tuple<Tensor<T>>{x}, std::tuple<Tensor<T>>{dx});
}

// Hessian-vector product H v of a real scalar f at x (forward over reverse).
template <class F, Floating T>
Tensor<T> hvp(F&& f, const Tensor<T>& x, const Tensor<T>& v) {
  return jvp([&](const Tensor<T>& z) { return grad(f, z); }, x, v).second;
}

// H v for several inputs: the tangents of the gradients (a tuple, one per input) along v.
template <class F, Floating... T>
requires(sizeof...(T) > 1) std::tuple<Tensor<T>...> hvp(F&& f, const std::tuple<Tensor<T>...>& x,
                                                        const std::tuple<Tensor<T>...>& v) {
  return jvp([&](const Tensor<T>&... z) { return grad(f, z...); }, x, v).second;
}

}  // namespace tenax
