#pragma once
// The trace hook of detail::apply. While trace() runs a function, ModeState::tracer points at a
// Tracer: every op's forward still runs (tracing is by execution, on the example values, so shape
// logic and the AD machinery behave exactly as in eager mode) and is also recorded as a graph node.
// Forward kernels run with the tracer paused, so an op built from other ops records once.
// Ops whose inputs are all constants are not recorded: their outputs become constants of the
// graph (constant folding of input-independent parts).
#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tenax/ad/mode.hpp"
#include "tenax/core/tensor.hpp"
#include "tenax/trace/graph.hpp"

namespace tenax::detail {

template <class Op, class... In>
auto apply(const Op& op, const In&... in);
template <class Op, class... In>
auto apply_nondiff(const Op& op, const In&... in);

class Tracer {
 public:
  explicit Tracer(ir::Graph& g);
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  ir::Graph& graph;

  bool is_value(const TensorImpl& t) const { return (t.trace_id >> 32) == epoch_; }
  // A new graph input standing for t (t must be a fresh tensor the tracer may tag).
  std::int32_t add_input(TensorImpl& t);
  // The value an op input stands for: a value of this trace, or a constant (recorded once).
  // Throws when t views traced data without being a traced value (made outside any op).
  std::int32_t use(const char* op, const TensorImpl& t);
  // Names a fresh op output as a new value (or returns the value it already is: an alias).
  std::int32_t define(TensorImpl& t);

  // Records one op application; Diff: whether re-executing it goes through apply (ops with rules)
  // or apply_nondiff (integer/boolean results); no_grad: the caller applied it with recording off
  // (a no_grad scope, not a backward pass), so re-executing it records nothing either.
  template <bool Diff, class Op, class R, class... In>
  void record(const Op& op, const R& r, bool no_grad, const In&... in);

 private:
  std::uint64_t epoch_;
  bool grad_at_start_;  // a no_grad begun before trace() does not cut the function off
  std::unordered_map<const TensorImpl*, std::int32_t> const_ids_;
  std::unordered_set<const void*> traced_storage_;
  std::vector<Storage> keep_;  // traced storages stay alive while tracing (no address reuse)
};

// Pauses tracing in a scope (forward kernels; prepared runs).
class TracerPause {
 public:
  TracerPause() : prev_(mode().tracer) { mode().tracer = nullptr; }
  ~TracerPause() { mode().tracer = prev_; }
  TracerPause(const TracerPause&) = delete;
  TracerPause& operator=(const TracerPause&) = delete;

 private:
  void* prev_;
};

template <class R>
auto trace_tuple(const R& r) {
  if constexpr (requires {
                  typename R::value_type;
                  r.impl();
                })
    return std::tuple<R>(r);
  else
    return r;
}

// Writes the outputs of one op application into env.
template <class R>
void store_outputs(const R& r, ImplPtr* env, const std::int32_t* out) {
  const auto t = trace_tuple(r);
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    ((out[I] >= 0 ? (env[out[I]] = std::get<I>(t).impl(), 0) : 0), ...);
  }
  (std::make_index_sequence<std::tuple_size_v<decltype(t)>>{});
}

template <class Op>
std::string cse_key() {
  if constexpr (std::is_empty_v<Op>) {
    return typeid(Op).name();
  } else if constexpr (std::has_unique_object_representations_v<Op>) {
    std::string k = typeid(Op).name();
    k += '#';
    return k;  // the parameter bytes are appended by the caller
  } else {
    return {};
  }
}

template <bool Diff, class Op, class R, class... In>
void Tracer::record(const Op& op, const R& r, bool no_grad, const In&... in) {
  if (!(... || is_value(*in.impl()))) return;  // input-independent: its outputs are constants
  ir::GraphNode n;
  if constexpr (requires { op.name_; })
    n.name = op.name_;
  else
    n.name = Op::name;
  n.in = {use(Op::name, *in.impl())...};
  if constexpr (requires { Op::elementwise; }) n.elementwise = Op::elementwise;
  if constexpr (requires { Op::one_kernel; }) n.one_kernel = Op::one_kernel;
  if constexpr (requires { Op::effect; }) n.effect = Op::effect;
  const auto outs = trace_tuple(r);
  // An output that is one of the node's inputs (the input itself, or a view of it with the same
  // layout, such as an identity permute) is that value: the node does not define it again.
  auto output = [&](TensorImpl& t) {
    const std::int32_t v = define(t);
    return std::find(n.in.begin(), n.in.end(), v) != n.in.end() ? -1 : v;
  };
  std::apply([&](const auto&... o) { (n.out.push_back(o.defined() ? output(*o.impl()) : -1), ...); }, outs);
  n.forward = [op](ImplPtr* env, const std::int32_t* i, const std::int32_t* o) {
    const auto res = [&]<std::size_t... I>(std::index_sequence<I...>) { return op.forward(In(env[i[I]])...); }
    (std::index_sequence_for<In...>{});
    store_outputs(res, env, o);
  };
  if constexpr (requires {
                  Op::joins;
                  op.forward_joined(in...);
                }) {
    n.joins = Op::joins;
    n.joined_name = Op::joined_name;
    n.forward_joined = [op](ImplPtr* env, const std::int32_t* i, const std::int32_t* o) {
      const auto res = [&]<std::size_t... I>(std::index_sequence<I...>) { return op.forward_joined(In(env[i[I]])...); }
      (std::index_sequence_for<In...>{});
      store_outputs(res, env, o);
    };
  }
  no_grad = no_grad && grad_at_start_;
  n.call = [op, no_grad](ImplPtr* env, const std::int32_t* i, const std::int32_t* o) {
    // (an op the traced function ran under no_grad stays out of any tape, as in eager mode;
    // forward-mode tangents still pass, as they do there)
    const GradModeGuard g(!no_grad && mode().grad_enabled);
    const auto res = [&]<std::size_t... I>(std::index_sequence<I...>) {
      if constexpr (Diff) {
        // Ops whose wrapper chose a cheaper variant because no derivative was needed at trace time
        // (eigvalsh, svdvals) switch back when one is needed now.
        if constexpr (requires { op.for_derivatives(); }) {
          const ModeState& m = mode();
          if ((... || ((m.grad_enabled && env[i[I]]->requires_grad) || (m.fw_enabled && env[i[I]]->tangent))))
            return detail::apply(op.for_derivatives(), In(env[i[I]])...);
        }
        // Ops whose wrapper picks another computation when an input may be differentiated
        // (lu_solve with op = T or C) make that choice again here.
        if constexpr (requires { op.derivative_call(In(env[i[I]])...); }) return op.derivative_call(In(env[i[I]])...);
        return detail::apply(op, In(env[i[I]])...);
      } else {
        // Ops without rules that a rule took because its result was not to be differentiated
        // (the small LU and solve rule kernels) switch to differentiable ops when it is now.
        if constexpr (requires { op.derivative_call(In(env[i[I]])...); }) return op.derivative_call(In(env[i[I]])...);
        return detail::apply_nondiff(op, In(env[i[I]])...);
      }
    }
    (std::index_sequence_for<In...>{});
    store_outputs(res, env, o);
  };
  n.cse_key = cse_key<Op>();
  if constexpr (!std::is_empty_v<Op> && std::has_unique_object_representations_v<Op>)
    n.cse_key.append(reinterpret_cast<const char*>(&op), sizeof(Op));
  graph.nodes.push_back(std::move(n));
}

// apply's forward call while tracing: run the kernel untraced, then record the node (no_grad:
// Tracer::record).
template <bool Diff = true, class Op, class... In>
auto traced_forward(bool no_grad, const Op& op, const In&... in) {
  Tracer& t = *static_cast<Tracer*>(mode().tracer);
  auto r = [&] {
    TracerPause p;
    return op.forward(in...);
  }();
  t.template record<Diff>(op, r, no_grad, in...);
  return r;
}

// Runs an op that has no derivative rules (integer or boolean results, pivots, masks): its
// forward, recorded while tracing like every other op, so a graph never bakes in a value that
// depends on its inputs.
template <class Op, class... In>
auto apply_nondiff(const Op& op, const In&... in) {
  check_defined(op.name, in...);
  if (mode().tracer) [[unlikely]]
    return traced_forward<false>(false, op, in...);
  return op.forward(in...);
}

}  // namespace tenax::detail
