// The reverse-mode engine. A depth-first pass collects the nodes reachable from the roots and
// marks those that lead to a wanted gradient; Kahn's algorithm then runs each needed node once
// all of its consumers have contributed, so fan-out cotangents are summed before a rule runs.
#include "tenax/ad/engine.hpp"

#include "tenax/ad/anomaly.hpp"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <mutex>
#include <unordered_set>
#include <utility>
#include <vector>

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

// The passes this thread is running, outermost first. A pass may start inside another one (a rule
// that differentiates a graph of its own: custom rules by transposition, checkpoint's recomputation,
// ad/custom.hpp) when it stops at requested inputs; it then leaves alone every node the enclosing
// passes visited. Those nodes existed before the inner graph's inputs were made, so none of them
// leads to those inputs, and the enclosing passes' scratch in them stays intact.
thread_local std::vector<std::uint64_t> active_passes;

struct PassWork {
  std::vector<Node*> order;
  std::vector<std::pair<Node*, std::size_t>> stack;
  std::vector<Node*> ready;
};

// The work lists of the pass at a depth (a deque: the outer passes' lists stay where they are).
PassWork& scratch_at(std::size_t depth) {
  thread_local std::deque<PassWork> pool;
  while (pool.size() <= depth) pool.emplace_back();
  return pool[depth];
}

class PassScope {
 public:
  explicit PassScope(std::uint64_t pass) { active_passes.push_back(pass); }
  ~PassScope() { active_passes.pop_back(); }
  PassScope(const PassScope&) = delete;
  PassScope& operator=(const PassScope&) = delete;
};

bool visited_by_enclosing_pass(const Node* n) {
  for (std::size_t i = 0; i + 1 < active_passes.size(); ++i)
    if (n->visit == active_passes[i]) return true;
  return false;
}

}  // namespace

int batched_backward_rank(std::span<const ImplPtr> roots, std::span<const ImplPtr> inputs, std::int64_t& largest) {
  std::lock_guard<std::recursive_mutex> lock(engine_mutex());
  int rank = 0;
  largest = 0;
  SmallVec<const Node*, 4> stops;
  for (const auto& in : inputs)
    if (in) {
      rank = std::max(rank, in->rank());
      largest = std::max(largest, in->numel());
      if (in->requires_grad && in->grad_fn) stops.push_back(in->grad_fn.get());
    }
  std::unordered_set<const Node*> seen;
  std::vector<const Node*> stack;
  for (const auto& r : roots)
    if (r) {
      rank = std::max(rank, r->rank());
      largest = std::max(largest, r->numel());
      if (r->grad_fn && seen.insert(r->grad_fn.get()).second) stack.push_back(r->grad_fn.get());
    }
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (std::find(stops.begin(), stops.end(), n) != stops.end()) continue;
    if (!n->batches_cotangents()) return -1;
    n->value_extent(rank, largest);
    for (const auto& e : n->next)
      if (e.node && seen.insert(e.node.get()).second) stack.push_back(e.node.get());
  }
  return rank;
}

std::vector<ImplPtr> run_backward(const BackwardRequest& req) {
  TENAX_CHECK(req.roots.size() == req.root_grads.size(), "backward", "internal error: ", req.roots.size(),
              " roots and ", req.root_grads.size(), " cotangents");
  const bool accumulate_leaves = req.inputs.empty();
  TENAX_CHECK(active_passes.empty() || !accumulate_leaves, "backward",
              "a backward pass inside another one (a derivative rule calling backward()) must ask for the gradients "
              "of given inputs (grad, vjp), not accumulate into leaves");
  std::lock_guard<std::recursive_mutex> lock(engine_mutex());
  const std::uint64_t pass = next_pass();
  const PassScope scope(pass);
  const bool nested_pass = active_passes.size() > 1;
  PassWork& work = scratch_at(active_passes.size() - 1);
  auto in_this_pass = [pass](const Node* n) { return n->visit == pass; };

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
  std::vector<Node*>& order = work.order;
  std::vector<std::pair<Node*, std::size_t>>& stack = work.stack;
  order.clear();
  stack.clear();
  auto visit = [&](Node* n) {
    if (!n || n->visit == pass) return;
    if (nested_pass && visited_by_enclosing_pass(n)) return;  // (see active_passes)
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
          if (e.node && in_this_pass(e.node.get()) && e.node->needed) needed = true;
      done->needed = needed;
      order.push_back(done);
    }
  }
  // Consumers per node, counted over needed nodes only.
  for (Node* n : order) {
    if (!n->needed || is_stop(n)) continue;
    for (const auto& e : n->next)
      if (e.node && in_this_pass(e.node.get()) && e.node->needed) ++e.node->pending;
  }

  for (std::size_t i = 0; i < req.roots.size(); ++i) {
    Node* n = req.roots[i]->grad_fn.get();
    if (!in_this_pass(n)) continue;  // a node of an enclosing pass: it cannot lead to the inputs
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
  std::vector<Node*>& ready = work.ready;
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
      if (!child || !in_this_pass(child) || !child->needed) continue;
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
