// The reverse-mode engine. A depth-first pass collects the nodes reachable from the roots and
// marks those that lead to a wanted gradient; Kahn's algorithm then runs each needed node once
// all of its consumers have contributed, so fan-out cotangents are summed before a rule runs.
#include "tenax/ad/engine.hpp"

#include "tenax/ad/anomaly.hpp"

#include <mutex>
#include <utility>

#include "tenax/ad/mode.hpp"
#include "tenax/ops/binary/add.hpp"
#include "tenax/tenax.hpp"

namespace tenax::detail {

void accumulate(ImplPtr& slot, const ImplPtr& g) {
  if (!g) return;
  if (!slot) {
    slot = g;
    return;
  }
  TENAX_CHECK(slot->dtype == g->dtype && slot->shape == g->shape, "backward",
              "internal error: accumulating a cotangent of shape ", g->shape, " (", dtype_name(g->dtype),
              ") into one of shape ", slot->shape, " (", dtype_name(slot->dtype), ")");
  slot = dispatch_floating(g->dtype, [&](auto z) -> ImplPtr {
    using T = decltype(z);
    return add(Tensor<T>(slot), Tensor<T>(g)).impl();
  });
}

void LeafNode::apply(GradList& gout, GradList&) {
  if (gout.size() > 0 && gout[0]) accumulate(grad, gout[0]);
}

std::recursive_mutex& engine_mutex() {
  static std::recursive_mutex m;
  return m;
}

namespace {

// Pass ids are process-wide (64-bit: they never wrap back to a node's initial 0): a node visited by
// one thread's pass must look unvisited to the next pass of any thread. Called with engine_mutex()
// held.
std::uint64_t next_pass() {
  static std::uint64_t pass = 0;
  return ++pass;
}

// Set while this thread runs a pass: the scratch (in the nodes, and the thread's work lists) is
// the pass's, so a pass cannot start inside another one on the same thread.
thread_local bool in_pass = false;

class PassScope {
 public:
  PassScope() { in_pass = true; }
  ~PassScope() { in_pass = false; }
  PassScope(const PassScope&) = delete;
  PassScope& operator=(const PassScope&) = delete;
};

}  // namespace

std::vector<ImplPtr> run_backward(const BackwardRequest& req) {
  TENAX_CHECK(req.roots.size() == req.root_grads.size(), "backward", "internal error: ", req.roots.size(),
              " roots and ", req.root_grads.size(), " cotangents");
  TENAX_CHECK(!in_pass, "backward", "a backward pass cannot start inside another one on the same thread");
  std::lock_guard<std::recursive_mutex> lock(engine_mutex());
  const PassScope scope;
  const std::uint64_t pass = next_pass();
  const bool accumulate_leaves = req.inputs.empty();

  // Stop nodes: the producers of the requested inputs.
  SmallVec<Node*, 4> stops;
  for (const auto& in : req.inputs)
    if (in && in->requires_grad && in->grad_fn) stops.push_back(in->grad_fn.get());
  auto is_stop = [&](Node* n) {
    for (Node* s : stops)
      if (s == n) return true;
    return false;
  };

  // Depth-first collection with post-order "needed" marking.
  thread_local std::vector<Node*> order;
  thread_local std::vector<std::pair<Node*, std::size_t>> stack;
  order.clear();
  stack.clear();
  auto visit = [&](Node* n) {
    if (!n || n->visit == pass) return;
    n->visit = pass;
    n->pending = 0;
    n->needed = false;
    n->buffer.clear();
    n->buffer.resize(n->num_outputs);
    stack.emplace_back(n, 0);
  };
  for (const auto& r : req.roots) {
    TENAX_CHECK(r && r->requires_grad && r->grad_fn, "backward",
                "tensor does not require grad (no recorded op or leaf leads to it)");
    visit(r->grad_fn.get());
    while (!stack.empty()) {
      auto& [n, i] = stack.back();
      if (!is_stop(n) && i < n->next.size()) {
        Node* child = n->next[i++].node.get();
        visit(child);
        continue;
      }
      Node* done = n;
      stack.pop_back();
      bool needed = accumulate_leaves ? done->is_leaf() : is_stop(done);
      if (!is_stop(done))
        for (const auto& e : done->next)
          if (e.node && e.node->needed) needed = true;
      done->needed = needed;
      order.push_back(done);
    }
  }
  // Consumers per node, counted over needed nodes only.
  for (Node* n : order) {
    if (!n->needed || is_stop(n)) continue;
    for (const auto& e : n->next)
      if (e.node && e.node->needed) ++e.node->pending;
  }

  for (std::size_t i = 0; i < req.roots.size(); ++i) {
    Node* n = req.roots[i]->grad_fn.get();
    accumulate(n->buffer[req.roots[i]->output_nr], req.root_grads[i]);
  }

  GradModeGuard mode(req.create_graph);
  // Rules run with recording off (unless create_graph) but are not the caller's no_grad: a traced
  // backward pass stays differentiable when the graph is re-executed (trace/recorder.hpp).
  struct InBackward {
    bool prev = detail::mode().in_backward;
    InBackward() { detail::mode().in_backward = true; }
    ~InBackward() { detail::mode().in_backward = prev; }
  } in_backward;
  thread_local std::vector<Node*> ready;
  ready.clear();
  for (const auto& r : req.roots) {
    Node* n = r->grad_fn.get();
    if (n->needed && n->pending == 0 && n->visit == pass) {
      n->pending = -1;  // queued
      ready.push_back(n);
    }
  }
  GradList gin;
  while (!ready.empty()) {
    Node* n = ready.back();
    ready.pop_back();
    if (is_stop(n) && !accumulate_leaves) continue;  // read below
    bool any = false;
    for (const auto& g : n->buffer) any = any || static_cast<bool>(g);
    gin.clear();
    if (any && detail::mode().anomaly) [[unlikely]] {
      // The rule is checked as a whole (its cotangents against its incoming cotangents), so the
      // report names the rule and where its forward op was called, not an op inside the rule.
      {
        AnomalyGuard inner(false, detail::mode().anomaly_stacks);
        n->apply(n->buffer, gin);
      }
      check_anomaly("backward of", n->name(), gin.begin(), gin.size(), n->buffer.begin(), n->buffer.size(), n->origin);
    } else if (any) {
      n->apply(n->buffer, gin);
    }
    if (!n->is_leaf()) n->buffer.clear();
    for (std::size_t k = 0; k < n->next.size(); ++k) {
      Node* child = n->next[k].node.get();
      if (!child || !child->needed) continue;
      if (k < gin.size() && gin[k]) accumulate(child->buffer[n->next[k].output_nr], gin[k]);
      if (--child->pending == 0) ready.push_back(child);
    }
  }

  std::vector<ImplPtr> result;
  result.reserve(req.inputs.size());
  for (const auto& in : req.inputs) {
    if (in && in->requires_grad && in->grad_fn && in->grad_fn->visit == pass &&
        in->grad_fn->buffer.size() > in->output_nr)
      result.push_back(in->grad_fn->buffer[in->output_nr]);
    else
      result.emplace_back();
  }
  for (Node* n : order) n->buffer.clear();
  return result;
}

}  // namespace tenax::detail
