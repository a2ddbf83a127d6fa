#pragma once
// apply(op, inputs...): the single place that knows about AD modes.
//
//   1. trace hook: while a function is traced, the forward is also recorded as a graph node;
//   2. run the op's forward kernel (with recording and tangents off, so an op built from other
//      ops never records twice);
//   3. if an input carries a forward-mode tangent, compute output tangents with Op::jvp;
//   4. if recording is on and an input needs a gradient, push a tape node holding Op::vjp.
//
// An op is a struct with `static constexpr const char* name`, `forward(inputs...)` returning a
// Tensor or a std::tuple of Tensors, and `jvp(ctx)` / `vjp(ctx)` written with public ops. The
// rules see undefined Tensors for zero tangents/cotangents (symbolic zeros). Ops whose rules do not
// read the outputs declare `static constexpr bool saves_outputs = false;`.
#include <algorithm>
#include <array>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tenax/ad/anomaly.hpp"
#include "tenax/ad/mode.hpp"
#include "tenax/ad/node.hpp"
#include "tenax/core/tensor.hpp"
#include "tenax/trace/recorder.hpp"

namespace tenax::detail {

template <class X>
struct is_tensor : std::false_type {};
template <class T>
struct is_tensor<Tensor<T>> : std::true_type {};

template <class R>
auto as_tuple(const R& r) {
  if constexpr (is_tensor<R>::value)
    return std::tuple<R>(r);
  else
    return r;
}

template <class Tup>
inline constexpr std::size_t tuple_n = std::tuple_size_v<std::remove_cvref_t<Tup>>;

template <class Op>
constexpr bool saves_outputs() {
  if constexpr (requires { Op::saves_outputs; })
    return Op::saves_outputs;
  else
    return true;
}

// Batched tangents (jacfwd's batched replay, ad/jacobian.hpp): while ModeState::tangent_batch_rank
// is P >= 0, every tangent carries all tangent_batch directions at once. The tangent of a value of
// shape s then has shape s padded with ones to rank P, then one more dimension, the directions. P
// is the highest rank of any value the replayed steps read or write, so a value broadcasts against
// a batched tangent (shapes align at dimension 0) over the directions, and a rule made of maps is
// right as written. A rule that names a shape takes it through tangent_shape. Only ops whose rules
// are written so (batches_tangents) take part in a batched replay.
inline Shape tangent_shape(const Shape& s) {
  const ModeState& m = mode();
  if (m.tangent_batch_rank < 0) [[likely]]
    return s;
  Shape t = s;
  while (static_cast<int>(t.size()) < m.tangent_batch_rank) t.push_back(1);
  t.push_back(m.tangent_batch);
  return t;
}
inline bool tangents_batched() { return mode().tangent_batch_rank >= 0; }
// Batched tangents of `directions` directions past rank P in a scope.
struct TangentBatchScope {
  TangentBatchScope(int rank, std::int64_t directions)
      : m(mode()), prev_rank(m.tangent_batch_rank), prev_batch(m.tangent_batch) {
    m.tangent_batch_rank = rank;
    m.tangent_batch = directions;
  }
  ~TangentBatchScope() {
    m.tangent_batch_rank = prev_rank;
    m.tangent_batch = prev_batch;
  }
  TangentBatchScope(const TangentBatchScope&) = delete;
  TangentBatchScope& operator=(const TangentBatchScope&) = delete;
  ModeState& m;
  int prev_rank;
  std::int64_t prev_batch;
};
// Checks a rule's result against the tensor it belongs to (batched: tangent_shape's, exactly: an
// unbatched result would broadcast over the directions).
inline void check_rule_result(const char* op, const char* what, const ImplPtr& r, const TensorImpl& ref) {
  if (!tangents_batched()) [[likely]] {
    TENAX_CHECK(r->shape == ref.shape, op, "internal error: ", what, " has shape ", r->shape, ", expected ", ref.shape);
    return;
  }
  const Shape want = tangent_shape(ref.shape);
  TENAX_CHECK(r->shape == want, op, "internal error: ", what, " has shape ", r->shape, ", expected ", want);
}

// The most directions one batch takes: a batch's (co)tangents hold that many times the largest
// value of the pass, kept under batch_elements() elements (32 MiB of f64 by default; JAX's and
// torch.func's chunk sizes bound the same thing). Tests lower it to exercise several batches.
TENAX_SHARED_STATE inline std::int64_t& batch_elements() {
  static std::int64_t v = std::int64_t{1} << 22;
  return v;
}
inline std::int64_t directions_per_batch(std::int64_t n, std::int64_t largest) {
  return std::clamp<std::int64_t>(batch_elements() / std::max<std::int64_t>(1, largest), 1,
                                  std::max<std::int64_t>(1, n));
}

// Whether Op's JVP (VJP) rule takes batched tangents (cotangents): ops that say so (batched_jvp,
// batched_vjp), and elementwise ops (their rules are maps of the tangents and values, with
// tangent_shape where they name a shape; sum_to keeps a batched cotangent's directions).
template <class Op>
constexpr bool elementwise_op() {
  if constexpr (requires { Op::elementwise; })
    return Op::elementwise;
  else
    return false;
}
template <class Op>
constexpr bool batches_tangents() {
  if constexpr (requires { Op::batched_jvp; })
    return Op::batched_jvp;
  else
    return elementwise_op<Op>();
}
template <class Op>
constexpr bool batches_cotangents() {
  if constexpr (requires { Op::batched_vjp; })
    return Op::batched_vjp;
  else
    return elementwise_op<Op>();
}

// The highest rank and the most elements among the defined tensors of the tuples (the extent a
// batch of (co)tangents of their values takes: tangent_shape's P, directions_per_batch).
struct ValueExtent {
  int rank = 0;
  std::int64_t numel = 0;
  template <class... Tup>
  void see(const Tup&... tups) {
    auto one = [&](const auto& t) {
      if (t.defined()) rank = std::max(rank, t.dim()), numel = std::max(numel, t.numel());
    };
    (std::apply([&](const auto&... t) { (one(t), ...); }, tups), ...);
  }
};

// What a JVP rule sees: inputs x, outputs y, input tangents dx (undefined = zero).
template <class InTup, class OutTup>
struct JvpCtx {
  const InTup& in;
  const OutTup& out;
  InTup tin;
  template <std::size_t I>
  const auto& x() const {
    return std::get<I>(in);
  }
  template <std::size_t I>
  const auto& y() const {
    return std::get<I>(out);
  }
  template <std::size_t I>
  const auto& dx() const {
    return std::get<I>(tin);
  }
  const auto& x0() const { return x<0>(); }
  const auto& x1() const { return x<1>(); }
  const auto& x2() const { return x<2>(); }
  const auto& y0() const { return y<0>(); }
  const auto& y1() const { return y<1>(); }
  const auto& y2() const { return y<2>(); }
  const auto& dx0() const { return dx<0>(); }
  const auto& dx1() const { return dx<1>(); }
  const auto& dx2() const { return dx<2>(); }
  // The shape of the first output's tangent: its shape, or with batched tangents tangent_shape's.
  Shape dy0_shape() const { return tangent_shape(y0().shape()); }
};

// What a VJP rule sees: inputs x, outputs y, output cotangents gy (undefined = zero), and which
// inputs need a gradient.
template <class InTup, class OutTup>
struct VjpCtx {
  const InTup& in;
  OutTup out;
  OutTup gout;
  std::array<bool, tuple_n<InTup>> need;
  template <std::size_t I>
  const auto& x() const {
    return std::get<I>(in);
  }
  template <std::size_t I>
  const auto& y() const {
    return std::get<I>(out);
  }
  template <std::size_t I>
  const auto& gy() const {
    return std::get<I>(gout);
  }
  bool needs(std::size_t i) const { return need[i]; }
  const auto& x0() const { return x<0>(); }
  const auto& x1() const { return x<1>(); }
  const auto& x2() const { return x<2>(); }
  const auto& y0() const { return y<0>(); }
  const auto& y1() const { return y<1>(); }
  const auto& y2() const { return y<2>(); }
  const auto& gy0() const { return gy<0>(); }
  const auto& gy1() const { return gy<1>(); }
  const auto& gy2() const { return gy<2>(); }
};

// A copy of x's body (the same view of the same storage) that keeps x's place on the tape
// (requires_grad, grad_fn, output_nr) and holds no tangent.
inline ImplPtr tape_copy(const TensorImpl& x) {
  ImplPtr p = shallow_copy(x);
  p->requires_grad = x.requires_grad;
  p->grad_fn = x.grad_fn;
  p->output_nr = x.output_nr;
  return p;
}

// Copies of the tensors of a tuple that keep their place on the tape but hold no tangent
// (undefined ones stay undefined). A JVP rule reads the outputs through these, so that a tangent's
// graph never holds the tensor carrying that tangent (a reference cycle).
template <class Tup>
Tup without_tangents(const Tup& t) {
  Tup r;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (
        [&] {
          const auto& x = std::get<I>(t);
          if (!x.defined()) return;
          std::get<I>(r) = std::tuple_element_t<I, Tup>(tape_copy(*x.impl()));
        }(),
        ...);
  }
  (std::make_index_sequence<tuple_n<Tup>>{});
  return r;
}

template <class Op, class InTup, class OutTup>
class OpNode final : public Node {
 public:
  OpNode(const Op& op, InTup in, OutTup saved) : op_(op), in_(std::move(in)), saved_(std::move(saved)) {}
  const char* name() const override { return Op::name; }
  OutTup& saved() { return saved_; }
  bool batches_cotangents() const override { return detail::batches_cotangents<Op>(); }
  void value_extent(int& rank, std::int64_t& numel) const override {
    ValueExtent e{rank, numel};
    e.see(in_, saved_);
    rank = e.rank, numel = e.numel;
  }

  void apply(GradList& gout, GradList& gin) override {
    constexpr std::size_t NI = tuple_n<InTup>, NO = tuple_n<OutTup>;
    OutTup outs = unpack(std::make_index_sequence<NO>{});
    OutTup g;
    set_grads(g, gout, std::make_index_sequence<NO>{});
    VjpCtx<InTup, OutTup> ctx{in_, outs, g, {}};
    for (std::size_t i = 0; i < NI; ++i) ctx.need[i] = static_cast<bool>(next[i].node);
    auto r = as_tuple(op_.vjp(ctx));
    static_assert(tuple_n<decltype(r)> == NI, "vjp must return one cotangent per input");
    gin.resize(NI);
    collect(r, gin, std::make_index_sequence<NI>{});
  }

 private:
  template <std::size_t... I>
  OutTup unpack(std::index_sequence<I...>) {
    if constexpr (!saves_outputs<Op>()) {
      return OutTup{};
    } else if (mode().grad_enabled) {
      // Higher order: the rule's uses of the outputs must connect back to this node.
      OutTup o;
      ((std::get<I>(o) = reconnect<I>()), ...);
      if (mode().fw_enabled && (... || has_saved_tangent<I>())) retangent(o);
      return o;
    } else {
      return saved_;
    }
  }
  template <std::size_t I>
  auto reconnect() {
    using T = std::tuple_element_t<I, OutTup>;
    const T& s = std::get<I>(saved_);
    if (!s.defined()) return s;
    ImplPtr p = shallow_copy(*s.impl());
    p->tangent = s.impl()->tangent;
    if constexpr (dtype_traits<typename T::value_type>::is_floating) {
      p->requires_grad = true;
      p->grad_fn = NodePtr(this);
      p->output_nr = static_cast<std::uint32_t>(I);
    }
    return T(std::move(p));
  }
  template <std::size_t I>
  bool has_saved_tangent() const {
    const auto& s = std::get<I>(saved_);
    return s.defined() && static_cast<bool>(s.impl()->tangent);
  }
  // Reverse over forward over reverse (the gradient of a function of hvp): the rule reads the
  // outputs' tangents, and the enclosing pass must reach this node's inputs through them. The node
  // keeps only their values (a tangent's graph reaches the node: keeping it would be a cycle), so
  // they are computed again here, recorded, from the inputs' tangents and the reconnected outputs.
  // The rule reads the outputs through copies without tangents (without_tangents).
  void retangent(OutTup& o) {
    constexpr std::size_t NI = tuple_n<InTup>, NO = tuple_n<OutTup>;
    InTup tin;
    bool any = false;
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      (
          [&] {
            const ImplPtr& t = std::get<J>(in_).impl()->tangent;
            if (t) std::get<J>(tin) = std::tuple_element_t<J, InTup>(t), any = true;
          }(),
          ...);
    }
    (std::make_index_sequence<NI>{});
    if (!any) return;  // the inputs no longer carry tangents: keep the saved values
    const OutTup seen = without_tangents(o);
    JvpCtx<InTup, OutTup> ctx{in_, seen, std::move(tin)};
    ForwardOffGuard f;
    const TangentBatchScope unbatched(-1, 0);  // saved tangents are one direction, in a batched pass too
    auto t = as_tuple(op_.jvp(ctx));
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (
          [&] {
            const auto& ti = std::get<I>(t);
            const auto& oi = std::get<I>(o);
            if (ti.defined() && oi.defined()) oi.impl()->tangent = ti.impl();
          }(),
          ...);
    }
    (std::make_index_sequence<NO>{});
  }
  template <std::size_t... I>
  static void set_grads(OutTup& g, GradList& gout, std::index_sequence<I...>) {
    ((std::get<I>(g) = std::tuple_element_t<I, OutTup>(I < gout.size() ? gout[I] : ImplPtr())), ...);
  }
  template <class R, std::size_t... I>
  void collect(const R& r, GradList& gin, std::index_sequence<I...>) {
    ((gin[I] = next[I].node && std::get<I>(r).defined() ? std::get<I>(r).impl() : ImplPtr()), ...);
    for (std::size_t i = 0; i < sizeof...(I); ++i)
      if (gin[i]) check_rule_result(Op::name, "vjp cotangent", gin[i], *input_impl(i));
  }
  const TensorImpl* input_impl(std::size_t i) const {
    const TensorImpl* p = nullptr;
    std::size_t k = 0;
    std::apply([&](const auto&... t) { ((k++ == i ? (p = t.impl().get()) : nullptr), ...); }, in_);
    return p;
  }

  Op op_;
  InTup in_;
  OutTup saved_;
};

// Runs Op::jvp on the inputs' tangents (their tangent slots) and puts the results in the outputs'
// slots (and, with a tape node, its saved outputs'). The rule reads the outputs through `seen`:
// copies that keep their place on the tape but hold no tangent (without_tangents), so the tangent's
// graph reaches the node (reverse over forward) without a cycle. reset: an output whose tangent is
// now zero loses the one it had (a replay, below).
template <class Op, class InTup, class OutTup, class NodeT>
void push_tangents(const Op& op, const InTup& inputs, const OutTup& outs, const OutTup& seen, NodeT* node, bool reset) {
  constexpr std::size_t NO = tuple_n<OutTup>;
  JvpCtx<InTup, OutTup> ctx{inputs, seen, {}};
  auto set_tangent = [](auto& dst, const auto& src) {
    if (src.impl()->tangent) dst = std::remove_cvref_t<decltype(dst)>(src.impl()->tangent);
  };
  std::apply([&](auto&... d) { std::apply([&](const auto&... s) { (set_tangent(d, s), ...); }, ctx.in); }, ctx.tin);
  ForwardOffGuard f;
  auto t = as_tuple(op.jvp(ctx));
  static_assert(tuple_n<decltype(t)> == NO, "jvp must return one tangent per output");
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (
        [&] {
          const auto& ti = std::get<I>(t);
          const auto& oi = std::get<I>(outs);
          if (ti.defined() && oi.defined()) {
            check_rule_result(Op::name, "jvp tangent", ti.impl(), *oi.impl());
            // (A rule that returns an output it read as that output's tangent: a copy, not a cycle.)
            oi.impl()->tangent = ti.impl() == oi.impl() ? shallow_copy(*ti.impl()) : ti.impl();
            // The node keeps the tangent's value only (its graph holds the node).
            if constexpr (saves_outputs<Op>() && !std::is_void_v<NodeT>)
              if (node && std::get<I>(node->saved()).defined())
                std::get<I>(node->saved()).impl()->tangent = shallow_copy(*ti.impl());
          } else if (reset && oi.defined()) {
            oi.impl()->tangent.reset();
          }
        }(),
        ...);
  }
  (std::make_index_sequence<NO>{});
}

// Forward-mode steps recorded for replay (jacfwd's linearization, ad/jacobian.hpp): while
// ModeState::tangent_replay points at one, every op application that propagates tangents (outside
// the JVP rules themselves) is kept with its inputs and outputs, so that its rule can run again
// after the inputs' tangents change: the tangents of a new direction without recomputing the primal.
struct TangentStep {
  virtual ~TangentStep() = default;
  virtual void run() const = 0;
};
template <class Op, class InTup, class OutTup>
struct ReplayedOp final : TangentStep {
  ReplayedOp(const Op& o, InTup i, OutTup r, OutTup s)
      : op(o), in(std::move(i)), out(std::move(r)), seen(std::move(s)) {}
  void run() const override { push_tangents<Op, InTup, OutTup, void>(op, in, out, seen, nullptr, true); }
  Op op;
  InTup in;
  OutTup out, seen;
};

struct TangentReplay {
  std::vector<std::unique_ptr<TangentStep>> steps;
  bool usable = true;                  // false once a backward pass applied an op while recording (not replayable)
  bool batchable = true;               // every step's rule takes batched tangents (batches_tangents)
  ValueExtent extent;                  // of the steps' values (tangent_shape's P, the largest)
  std::vector<const char*> unbatched;  // the names of the recorded ops that take no batch
  template <class Op, class InTup, class OutTup>
  void record(const Op& op, const InTup& in, const OutTup& out, const OutTup& seen) {
    if constexpr (!batches_tangents<Op>()) {
      batchable = false;
      if (std::find(unbatched.begin(), unbatched.end(), Op::name) == unbatched.end()) unbatched.push_back(Op::name);
    }
    extent.see(in, out);
    steps.push_back(std::make_unique<ReplayedOp<Op, InTup, OutTup>>(op, in, out, seen));
  }
};

// Anomaly mode: checks an op application's outputs (ad/anomaly.hpp).
template <class R, class... In>
void anomaly_forward(const char* op, const R& r, const In&... in) {
  const auto t = as_tuple(r);
  std::array<ImplPtr, tuple_n<decltype(t)>> outs;
  [&]<std::size_t... I>(std::index_sequence<I...>) { ((outs[I] = std::get<I>(t).impl()), ...); }
  (std::make_index_sequence<tuple_n<decltype(t)>>{});
  const ImplPtr ins[] = {in.impl()...};
  check_anomaly("forward of", op, outs.data(), outs.size(), ins, sizeof...(In), nullptr);
}

template <class Op, class... In>
auto apply(const Op& op, const In&... in) {
  check_defined(Op::name, in...);
  ModeState& m = mode();
  const bool rec = m.grad_enabled && (... || in.impl()->requires_grad);
  const bool fw = m.fw_enabled && (... || static_cast<bool>(in.impl()->tangent));
  if (!rec && !fw) [[likely]] {
    // While trace() runs, the forward is also recorded as a graph node (trace/recorder.hpp); in
    // anomaly mode its outputs are checked (ad/anomaly.hpp).
    if (m.tracer || m.anomaly) [[unlikely]] {
      auto r = m.tracer ? traced_forward(!m.grad_enabled && !m.in_backward, op, in...) : op.forward(in...);
      if (m.anomaly) anomaly_forward(Op::name, r, in...);
      return r;
    }
    return op.forward(in...);
  }

  using R = decltype(op.forward(in...));
  const bool no_grad = !m.grad_enabled && !m.in_backward;  // the caller's no_grad (trace/recorder.hpp)
  R r = [&] {
    GradModeGuard g(false);
    ForwardOffGuard f;
    if (m.tracer) return traced_forward(no_grad, op, in...);
    return op.forward(in...);
  }();
  if (m.anomaly) [[unlikely]]
    anomaly_forward(Op::name, r, in...);
  auto outs = as_tuple(r);
  using InTup = std::tuple<In...>;
  using OutTup = std::remove_cvref_t<decltype(as_tuple(r))>;
  constexpr std::size_t NO = tuple_n<OutTup>;

  OpNode<Op, InTup, OutTup>* node = nullptr;
  if (rec) {
    OutTup saved;
    if constexpr (saves_outputs<Op>()) {
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        ((std::get<I>(saved) = std::get<I>(outs).defined()
                                   ? std::tuple_element_t<I, OutTup>(shallow_copy(*std::get<I>(outs).impl()))
                                   : std::tuple_element_t<I, OutTup>()),
         ...);
      }
      (std::make_index_sequence<NO>{});
    }
    node = Node::create<OpNode<Op, InTup, OutTup>>(op, InTup(in...), std::move(saved));
    NodePtr np(node);
    if (m.anomaly && m.anomaly_stacks) [[unlikely]]
      node->origin = new CallStack(CallStack::capture());
    node->num_outputs = NO;
    node->seq = m.next_seq++;
    node->next.resize(sizeof...(In));
    std::size_t k = 0;
    ((in.impl()->requires_grad ? (node->next[k] = Edge{in.impl()->grad_fn, in.impl()->output_nr}, 0) : 0, ++k), ...);
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (
          [&] {
            TensorImpl* o = std::get<I>(outs).impl().get();
            if (!o) return;  // an output the op did not compute
            if constexpr (dtype_traits<typename std::tuple_element_t<I, OutTup>::value_type>::is_floating) {
              o->requires_grad = true;
              o->grad_fn = np;
              o->output_nr = static_cast<std::uint32_t>(I);
            }
          }(),
          ...);
    }
    (std::make_index_sequence<NO>{});
  }

  if (fw) {
    const InTup inputs(in...);
    auto* replay = static_cast<TangentReplay*>(m.tangent_replay);
    // The rule reads the outputs through copies without tangents where its ops may record (a tape
    // node, or an input tangent that requires grad: reverse over forward), since the tangent's graph
    // would otherwise hold the output that holds the tangent, and for a replay, which runs the rule
    // again once the outputs hold tangents. Otherwise nothing the rule computes can refer to an
    // output but a result that is the output itself (push_tangents copies that one), so the rule
    // reads the outputs as they are (an eager JVP made a copy per output of every op).
    const bool may_record =
        m.grad_enabled && (rec || (... || (in.impl()->tangent && in.impl()->tangent->requires_grad)));
    const OutTup seen = may_record || replay ? without_tangents(outs) : outs;
    if (!replay) [[likely]] {
      push_tangents(op, inputs, outs, seen, node, false);
    } else {
      // The rule's own ops are not steps: the step runs the rule again.
      struct Pause {
        ModeState& m;
        void* prev;
        ~Pause() { m.tangent_replay = prev; }
      } pause{m, m.tangent_replay};
      m.tangent_replay = nullptr;
      push_tangents(op, inputs, outs, seen, node, false);
      if (m.in_backward)
        replay->usable = false;
      else
        replay->record(op, inputs, outs, seen);
    }
  }
  return r;
}

}  // namespace tenax::detail
