#pragma once
// Differentiable functions with rules of their own: custom_op, custom_vjp, custom_jvp.
//
//   auto lse = tenax::custom_op("logsumexp",
//       [](const Tensor<double>& x) { ... return y; },                        // forward
//       [](const Tensor<double>& x, const Tensor<double>& y,
//          const Tensor<double>& dx) { ... return dy; },                      // jvp: (x..., y, dx...)
//       [](const Tensor<double>& x, const Tensor<double>& y,
//          const Tensor<double>& gy) { ... return gx; });                     // vjp: (x..., y, gy)
//   Tensor<double> y = lse(x);
//
// forward takes the inputs (tensors) and returns a tensor or a std::tuple of tensors (y; the rules
// see it with that type). jvp returns the output tangents (y's type), vjp the input cotangents (a
// tensor for one input, a std::tuple for several), in tenax's convention for complex values (the
// same as the built-in ops', docs/MATH.md section 0). Zero tangents and cotangents reach the rules as
// zeros. The forward runs without recording; the rules run like the built-in ops' rules: written
// with tenax ops, they are differentiated in turn (higher order), and they must be linear in the
// tangent / cotangent. The function is one op to the tape, to trace() (one graph node named after
// it) and to compile().
//
// custom_vjp(name, forward, vjp): forward mode (jvp, hvp, jacfwd) transposes the vjp rule: J dx is
// the pullback of u -> vjp(x..., y, u) at dx (two reverse passes over the rule's own small graph).
// custom_jvp(name, forward, jvp): reverse mode transposes the jvp rule in the same way (JAX derives
// a custom_jvp function's VJP by transposition too).
#include <cstddef>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tenax/ad/apply.hpp"
#include "tenax/ad/engine.hpp"
#include "tenax/ad/mode.hpp"
#include "tenax/ad/structure.hpp"
#include "tenax/core/tensor.hpp"

namespace tenax {
namespace detail {

// No rule given: the other one is transposed (see the top of this file).
struct Transposed {};

template <class Fwd, class Jvp, class Vjp>
struct CustomRules {
  static constexpr bool jvp_transposed = std::is_same_v<Jvp, Transposed>;
  static constexpr bool vjp_transposed = std::is_same_v<Vjp, Transposed>;
  std::string name;
  Fwd forward;
  Jvp jvp;
  Vjp vjp;
};

template <class X>
struct is_tuple_of_tensors : std::false_type {};
template <class... X>
struct is_tuple_of_tensors<std::tuple<Tensor<X>...>> : std::true_type {};

// The tensor t, or zeros of `like`'s shape, dtype and device when t is undefined.
template <class T>
Tensor<T> or_zeros(const Tensor<T>& t, const Tensor<T>& like) {
  return t.defined() ? t : Tensor<T>::zeros(like.shape(), like.device());
}

template <class Tup>
Tup zeros_for_undefined(const Tup& t, const Tup& like) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return Tup{or_zeros(std::get<I>(t), std::get<I>(like))...};
  }
  (std::make_index_sequence<std::tuple_size_v<Tup>>{});
}

// The output as the forward returned it: a tensor, or the tuple.
template <class Y, class OutTup>
Y as_result(const OutTup& t) {
  if constexpr (is_tensor<Y>::value)
    return std::get<0>(t);
  else
    return t;
}

// Fresh leaves of zeros shaped like the tensors of t (the variables of a transposition).
template <class Tup>
Tup zero_leaves(const Tup& t) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return Tup{std::tuple_element_t<I, Tup>::zeros(std::get<I>(t).shape(), std::get<I>(t).device()).requires_grad()...};
  }
  (std::make_index_sequence<std::tuple_size_v<Tup>>{});
}

// The cotangents reaching `vars` (the stop tensors of the pass) from the recorded results `lin`
// seeded with `seeds` (undefined: none); recorded when the caller records (higher order). One tensor
// per variable, undefined where none arrived. For a linear map of fresh leaves this is its transpose
// (the custom rules); checkpoint pulls back through its recomputation with it.
template <class Lin, class Vars, class Seeds>
Vars pull_back(const Lin& lin, const Vars& vars, const Seeds& seeds) {
  std::vector<ImplPtr> roots, gs;
  const auto ls = flat_impls(lin);
  const auto ss = flat_impls(seeds);
  for (std::size_t k = 0; k < ls.size(); ++k)
    if (ls[k] && ls[k]->requires_grad && ss[k]) roots.push_back(ls[k]), gs.push_back(ss[k]);
  const auto ins = flat_impls(vars);
  Vars r;
  if (roots.empty()) return r;
  const std::vector<ImplPtr> g = run_backward({roots, gs, ins, is_grad_enabled()});
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    ((std::get<I>(r) = g[I] ? std::tuple_element_t<I, Vars>(g[I]) : std::tuple_element_t<I, Vars>()), ...);
  }
  (std::make_index_sequence<std::tuple_size_v<Vars>>{});
  return r;
}

}  // namespace detail

namespace ops {

// The op behind a custom function (see the top of this file).
template <class Rules>
struct Custom {
  static constexpr const char* name = "custom";
  std::shared_ptr<const Rules> rules;
  const char* name_;  // the function's name, for graphs and errors

  template <class... T>
  auto forward(const Tensor<T>&... x) const {
    auto y = rules->forward(x...);
    static_assert(detail::is_tensor<decltype(y)>::value || detail::is_tuple_of_tensors<decltype(y)>::value,
                  "custom function: the forward must return a tensor or a std::tuple of tensors");
    detail::Structure<decltype(y)>::for_each(
        y, [&](const auto& t) { TENAX_CHECK(t.defined(), name_, "the forward returned an undefined tensor"); });
    return y;
  }

  // The forward's result type for inputs In (a tuple of tensors).
  template <class In>
  using Result =
      std::remove_cvref_t<decltype(std::apply(std::declval<const Rules&>().forward, std::declval<const In&>()))>;

  template <class C>
  auto jvp(const C& c) const {
    using Y = Result<std::remove_cvref_t<decltype(c.in)>>;
    const Y y = detail::as_result<Y>(c.out);
    const auto dx = detail::zeros_for_undefined(c.tin, c.in);
    if constexpr (Rules::jvp_transposed) {
      // J dx: the pullback at dx of u -> vjp(x..., y, u).
      const auto u = detail::zero_leaves(detail::as_tuple(y));
      auto lin = [&] {
        GradModeGuard on(true);
        return detail::as_tuple(std::apply(
            rules->vjp, std::tuple_cat(c.in, std::tuple<const Y&>(y), std::tuple<Y>(detail::as_result<Y>(u)))));
      }();
      const auto r = detail::pull_back(lin, u, dx);
      return detail::as_result<Y>(detail::zeros_for_undefined(r, detail::as_tuple(y)));
    } else {
      return Y(std::apply(rules->jvp, std::tuple_cat(c.in, std::tuple<const Y&>(y), dx)));
    }
  }

  template <class C>
  auto vjp(const C& c) const {
    using In = std::remove_cvref_t<decltype(c.in)>;
    using Y = Result<In>;
    const Y y = detail::as_result<Y>(c.out);
    const auto gy = detail::zeros_for_undefined(c.gout, c.out);
    if constexpr (Rules::vjp_transposed) {
      // J^H gy: the pullback at gy of u -> jvp(x..., y, u...).
      const In u = detail::zero_leaves(c.in);
      auto lin = [&] {
        GradModeGuard on(true);
        return detail::as_tuple(Y(std::apply(rules->jvp, std::tuple_cat(c.in, std::tuple<const Y&>(y), u))));
      }();
      return detail::pull_back(lin, u, gy);
    } else {
      return detail::as_tuple(std::apply(
          rules->vjp, std::tuple_cat(c.in, std::tuple<const Y&>(y), std::tuple<Y>(detail::as_result<Y>(gy)))));
    }
  }
};

}  // namespace ops

// A differentiable function with its own rules (see the top of this file). Copies share the rules.
template <class Fwd, class Jvp, class Vjp>
class CustomFunction {
 public:
  CustomFunction(std::string name, Fwd f, Jvp j, Vjp v)
      : rules_(std::make_shared<const detail::CustomRules<Fwd, Jvp, Vjp>>(
            detail::CustomRules<Fwd, Jvp, Vjp>{std::move(name), std::move(f), std::move(j), std::move(v)})) {}

  template <Floating... T>
  requires(sizeof...(T) > 0) auto operator()(const Tensor<T>&... x) const {
    return detail::apply(ops::Custom<detail::CustomRules<Fwd, Jvp, Vjp>>{rules_, rules_->name.c_str()}, x...);
  }
  const std::string& name() const { return rules_->name; }

 private:
  std::shared_ptr<const detail::CustomRules<Fwd, Jvp, Vjp>> rules_;
};

template <class Fwd, class Jvp, class Vjp>
CustomFunction<Fwd, Jvp, Vjp> custom_op(std::string name, Fwd forward, Jvp jvp, Vjp vjp) {
  return {std::move(name), std::move(forward), std::move(jvp), std::move(vjp)};
}

template <class Fwd, class Vjp>
CustomFunction<Fwd, detail::Transposed, Vjp> custom_vjp(std::string name, Fwd forward, Vjp vjp) {
  return {std::move(name), std::move(forward), detail::Transposed{}, std::move(vjp)};
}

template <class Fwd, class Jvp>
CustomFunction<Fwd, Jvp, detail::Transposed> custom_jvp(std::string name, Fwd forward, Jvp jvp) {
  return {std::move(name), std::move(forward), std::move(jvp), detail::Transposed{}};
}

}  // namespace tenax
