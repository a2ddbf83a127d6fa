#pragma once
// checkpoint(f, x...): f(x...) whose reverse pass recomputes f instead of keeping its intermediates.
//
// The forward runs f without recording and keeps only f's inputs (one tape node); the node's rule
// runs f again on them, recorded, and pulls the cotangents back through that recomputation (a
// reverse pass of its own). Peak memory of a chain of k checkpointed segments is therefore the
// segment inputs plus one segment's intermediates, for one more forward evaluation of each segment.
// Forward mode recomputes f with the tangents. Gradients equal those without checkpoint bit for
// bit (the same rules run on the same values), to any order.
//
// Everything f differentiates with respect to must be an argument: a tensor that f closes over and
// that requires grad would receive no gradient through the checkpoint, so the backward raises when
// the recomputation reaches one. Constants (tensors that need no gradient) may be closed over.
// Traced, the checkpoint is one graph node (named "checkpoint"); compiled programs keep the saving.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "tenax/ad/apply.hpp"
#include "tenax/ad/custom.hpp"
#include "tenax/ad/engine.hpp"
#include "tenax/ad/mode.hpp"
#include "tenax/ops/shape/reshape.hpp"

namespace tenax {
namespace detail {

// Raises when the recorded graph of `outs` reaches a tensor that requires grad other than through
// `stops` (nodes created before `first_seq`, or leaves).
void check_checkpoint_closure(const std::vector<ImplPtr>& outs, const std::vector<const Node*>& stops,
                              std::uint64_t first_seq);

}  // namespace detail

namespace ops {

template <class F>
struct Checkpoint {
  static constexpr const char* name = "checkpoint";
  static constexpr bool saves_outputs = false;  // only the inputs: the point of it
  std::shared_ptr<const F> f;

  template <class... T>
  auto forward(const Tensor<T>&... x) const {
    auto y = (*f)(x...);
    static_assert(detail::is_tensor<decltype(y)>::value || detail::is_tuple_of_tensors<decltype(y)>::value,
                  "checkpoint: f must return a tensor or a std::tuple of tensors");
    return y;
  }

  // f again with the inputs' tangents (the inputs carry them here); the recomputed value is dropped.
  template <class C>
  auto jvp(const C& c) const {
    const detail::ForwardOnGuard on;
    auto y = detail::as_tuple(std::apply(*f, c.in));
    using OutTup = decltype(y);
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      auto tangent = [](const auto& t) {
        using X = std::remove_cvref_t<decltype(t)>;
        return t.impl()->tangent ? X(t.impl()->tangent) : X();
      };
      return OutTup{tangent(std::get<I>(y))...};
    }
    (std::make_index_sequence<std::tuple_size_v<OutTup>>{});
  }

  template <class C>
  auto vjp(const C& c) const {
    using In = std::remove_cvref_t<decltype(c.in)>;
    const bool record = is_grad_enabled();  // the enclosing pass records (higher order)
    // The inputs of the recomputation: stops of its reverse pass. Recorded views of the inputs
    // when the enclosing pass records (so the result depends on them), else fresh leaves.
    const In xs = [&]<std::size_t... I>(std::index_sequence<I...>) {
      auto input = [&](const auto& x) {
        using X = std::remove_cvref_t<decltype(x)>;
        if (record && x.tracks_grad()) return detail::apply(Reshape{x.shape()}, x);
        detail::ImplPtr p = detail::shallow_copy(*x.impl());
        p->tangent = x.impl()->tangent;  // forward over reverse: the recomputation carries it
        return X(std::move(p)).requires_grad();
      };
      return In{input(std::get<I>(c.in))...};
    }
    (std::make_index_sequence<std::tuple_size_v<In>>{});
    const std::uint64_t first = detail::mode().next_seq;
    auto y = [&] {
      GradModeGuard on(true);
      return detail::as_tuple(std::apply(*f, xs));
    }();
    const auto ys = detail::flat_impls(y);
    const auto ins = detail::flat_impls(xs);
    std::vector<const detail::Node*> stops;
    for (const detail::ImplPtr& p : ins) stops.push_back(p->grad_fn.get());
    std::vector<detail::ImplPtr> reached;  // the outputs the reverse pass starts from
    const auto gs = detail::flat_impls(c.gout);
    for (std::size_t k = 0; k < ys.size(); ++k)
      if (gs[k] && ys[k]->requires_grad) reached.push_back(ys[k]);
    detail::check_checkpoint_closure(reached, stops, first);
    return detail::pull_back(y, xs, c.gout);
  }
};

}  // namespace ops

// f(x...) with its intermediates recomputed in the reverse pass (see the top of this file). f
// returns a tensor or a std::tuple of tensors.
template <class F, Floating... T>
requires(sizeof...(T) > 0) auto checkpoint(F&& f, const Tensor<T>&... x) {
  using G = std::decay_t<F>;
  return detail::apply(ops::Checkpoint<G>{std::make_shared<const G>(std::forward<F>(f))}, x...);
}

}  // namespace tenax
