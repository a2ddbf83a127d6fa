// Program: CSE, DCE, joined steps and the liveness plan over a traced graph, and the prepared run.
#include "tenax/trace/program.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <unordered_map>

#include "tenax/ad/anomaly.hpp"
#include "tenax/ad/mode.hpp"
#include "tenax/core/error.hpp"
#include "tenax/kernels/donation.hpp"
#include "tenax/kernels/parallel_loop.hpp"
#include "tenax/kernels/reduce.hpp"
#include "tenax/trace/recorder.hpp"

#include "../core/storage_create.hpp"

namespace tenax::ir {

namespace {

std::int64_t bytes_of(const ValueInfo& v) { return numel_of(v.shape) * static_cast<std::int64_t>(dtype_size(v.dtype)); }

// Merges nodes with equal keys and equal (renamed) inputs; uses of the dropped node's outputs are
// renamed to the kept node's.
std::size_t eliminate_common_subexpressions(Graph& g) {
  std::vector<std::int32_t> rename(g.values.size());
  for (std::size_t v = 0; v < rename.size(); ++v) rename[v] = static_cast<std::int32_t>(v);
  std::unordered_map<std::string, std::size_t> seen;
  std::vector<GraphNode> kept;
  std::size_t merged = 0;
  for (GraphNode& n : g.nodes) {
    for (std::int32_t& v : n.in) v = rename[static_cast<std::size_t>(v)];
    if (!n.cse_key.empty()) {
      std::string key = n.cse_key;
      for (std::int32_t v : n.in) key.append(reinterpret_cast<const char*>(&v), sizeof v);
      const auto [it, fresh] = seen.emplace(std::move(key), kept.size());
      if (!fresh) {
        const GraphNode& m = kept[it->second];
        if (m.out.size() == n.out.size()) {
          bool same_shape = true;
          for (std::size_t k = 0; k < n.out.size(); ++k) same_shape = same_shape && (n.out[k] < 0) == (m.out[k] < 0);
          if (same_shape) {
            for (std::size_t k = 0; k < n.out.size(); ++k)
              if (n.out[k] >= 0) rename[static_cast<std::size_t>(n.out[k])] = m.out[k];
            ++merged;
            continue;
          }
        }
      }
    }
    kept.push_back(std::move(n));
  }
  g.nodes = std::move(kept);
  for (std::int32_t& v : g.outputs) v = rename[static_cast<std::size_t>(v)];
  return merged;
}

// Keeps the nodes some output depends on, and the effects (info checks) with what they read.
std::size_t eliminate_dead_code(Graph& g) {
  std::vector<char> needed(g.values.size(), 0);
  for (std::int32_t v : g.outputs) needed[static_cast<std::size_t>(v)] = 1;
  std::vector<char> keep(g.nodes.size(), 0);
  for (std::size_t k = g.nodes.size(); k-- > 0;) {
    const GraphNode& n = g.nodes[k];
    keep[k] = n.effect;
    for (std::int32_t v : n.out)
      if (v >= 0 && needed[static_cast<std::size_t>(v)]) keep[k] = 1;
    if (keep[k])
      for (std::int32_t v : n.in) needed[static_cast<std::size_t>(v)] = 1;
  }
  std::vector<GraphNode> kept;
  for (std::size_t k = 0; k < g.nodes.size(); ++k)
    if (keep[k]) kept.push_back(std::move(g.nodes[k]));
  const std::size_t removed = g.nodes.size() - kept.size();
  g.nodes = std::move(kept);
  // Constants nobody reads any more are dropped too.
  std::vector<std::int32_t> ids;
  std::vector<detail::ImplPtr> consts;
  for (std::size_t k = 0; k < g.constant_ids.size(); ++k)
    if (needed[static_cast<std::size_t>(g.constant_ids[k])]) {
      ids.push_back(g.constant_ids[k]);
      consts.push_back(g.constants[k]);
    }
  g.constant_ids = std::move(ids);
  g.constants = std::move(consts);
  return removed;
}

// Joins a node whose op has a joint form (GraphNode::joins) with an earlier node of the op that
// form also computes, on the same first inputs, when all of the later node's inputs are defined
// before the earlier one: one node in the earlier one's place runs the joint forward and defines
// the outputs of both (a JVP's exp(A) and L(A, dA): the exponential computed once).
std::size_t join_nodes(Graph& g) {
  std::vector<std::int64_t> def(g.values.size(), -1);
  for (std::size_t k = 0; k < g.nodes.size(); ++k)
    for (std::int32_t v : g.nodes[k].out)
      if (v >= 0 && def[static_cast<std::size_t>(v)] < 0)
        def[static_cast<std::size_t>(v)] = static_cast<std::int64_t>(k);
  std::vector<char> drop(g.nodes.size(), 0);
  std::size_t joined = 0;
  for (std::size_t j = 0; j < g.nodes.size(); ++j) {
    GraphNode& nj = g.nodes[j];
    if (!nj.joins) continue;
    for (std::size_t k = 0; k < j; ++k) {
      GraphNode& nk = g.nodes[k];
      if (drop[k] || std::strcmp(nk.name, nj.joins) != 0 || nk.in.size() > nj.in.size() ||
          !std::equal(nk.in.begin(), nk.in.end(), nj.in.begin()))
        continue;
      const bool ready = std::all_of(nj.in.begin(), nj.in.end(), [&](std::int32_t v) {
        return def[static_cast<std::size_t>(v)] < static_cast<std::int64_t>(k);
      });
      if (!ready) continue;
      GraphNode m;
      m.name = nj.joined_name;
      m.in = nj.in;
      m.out = nj.out;
      m.out.insert(m.out.end(), nk.out.begin(), nk.out.end());
      m.forward = nj.forward_joined;
      m.call = [cj = nj.call, ck = nk.call, nj_out = nj.out.size()](detail::ImplPtr* env, const std::int32_t* in,
                                                                    const std::int32_t* out) {
        ck(env, in, out + nj_out);
        cj(env, in, out);
      };
      m.one_kernel = nj.one_kernel;
      m.effect = nj.effect || nk.effect;
      for (std::int32_t v : nj.out)
        if (v >= 0) def[static_cast<std::size_t>(v)] = static_cast<std::int64_t>(k);
      nk = std::move(m);
      drop[j] = 1;
      ++joined;
      break;
    }
  }
  if (joined) {
    std::vector<GraphNode> kept;
    for (std::size_t k = 0; k < g.nodes.size(); ++k)
      if (!drop[k]) kept.push_back(std::move(g.nodes[k]));
    g.nodes = std::move(kept);
  }
  return joined;
}

}  // namespace

// A copy shares nothing mutable with the original: it gets its own environment and prepares its
// own plan on its first run (the slots and the captured kernels' scratch are not shared).
Program::Program(const Program& o)
    : g_(o.g_),
      release_(o.release_),
      in_place_(o.in_place_),
      env_(o.env_),
      is_constant_(o.is_constant_),
      is_input_(o.is_input_),
      def_(o.def_),
      last_(o.last_),
      shared_out_(o.shared_out_),
      move_out_(o.move_out_),
      traced_nodes_(o.traced_nodes_),
      cse_merged_(o.cse_merged_),
      dce_removed_(o.dce_removed_),
      joined_(o.joined_),
      peak_bytes_(o.peak_bytes_) {}

Program& Program::operator=(const Program& o) {
  if (this != &o) *this = Program(o);
  return *this;
}

Program::Program(const Graph& g) : g_(g), traced_nodes_(g.nodes.size()) {
  cse_merged_ = eliminate_common_subexpressions(g_);
  dce_removed_ = eliminate_dead_code(g_);
  joined_ = join_nodes(g_);
  const std::size_t nv = g_.values.size();
  env_.assign(nv, detail::ImplPtr());
  is_constant_.assign(nv, 0);
  // Per value: 1 for an input that a run borrows, 2 for an input that a step also defines.
  is_input_.assign(nv, 0);
  for (std::int32_t v : g_.inputs) is_input_[static_cast<std::size_t>(v)] = 1;
  for (const GraphNode& n : g_.nodes)
    for (std::int32_t v : n.out)
      if (v >= 0 && is_input_[static_cast<std::size_t>(v)]) is_input_[static_cast<std::size_t>(v)] = 2;
  for (std::size_t k = 0; k < g_.constant_ids.size(); ++k) {
    env_[static_cast<std::size_t>(g_.constant_ids[k])] = g_.constants[k];
    is_constant_[static_cast<std::size_t>(g_.constant_ids[k])] = 1;
  }
  // Liveness: a value dies after its last reader (or right after its definition when unread);
  // inputs, constants and outputs are never released by the plan.
  last_.assign(nv, -1);
  def_.assign(nv, -1);
  std::vector<std::int64_t>& last = last_;
  std::vector<std::int64_t>& def = def_;
  for (std::size_t k = 0; k < g_.nodes.size(); ++k) {
    for (std::int32_t v : g_.nodes[k].in) last[static_cast<std::size_t>(v)] = static_cast<std::int64_t>(k);
    for (std::int32_t v : g_.nodes[k].out)
      if (v >= 0 && def[static_cast<std::size_t>(v)] < 0)
        def[static_cast<std::size_t>(v)] = static_cast<std::int64_t>(k);
  }
  std::vector<char> pinned(nv, 0);
  for (std::int32_t v : g_.inputs) pinned[static_cast<std::size_t>(v)] = 1;
  for (std::int32_t v : g_.outputs) pinned[static_cast<std::size_t>(v)] = 1;
  for (std::int32_t v : g_.constant_ids) pinned[static_cast<std::size_t>(v)] = 1;
  release_.assign(g_.nodes.size(), {});
  for (std::size_t v = 0; v < nv; ++v) {
    if (pinned[v] || def[v] < 0) continue;
    const std::int64_t at = std::max(last[v], def[v]);
    release_[static_cast<std::size_t>(at)].push_back(static_cast<std::int32_t>(v));
  }
  // In place: an elementwise node may overwrite an input that dies at it and matches its output.
  in_place_.assign(g_.nodes.size(), -1);
  for (std::size_t k = 0; k < g_.nodes.size(); ++k) {
    const GraphNode& n = g_.nodes[k];
    if (!n.elementwise || n.out.size() != 1 || n.out[0] < 0) continue;
    const ValueInfo& o = g_.values[static_cast<std::size_t>(n.out[0])];
    for (std::int32_t v : release_[k]) {
      const ValueInfo& vi = g_.values[static_cast<std::size_t>(v)];
      if (std::find(n.in.begin(), n.in.end(), v) != n.in.end() && vi.dtype == o.dtype && vi.shape == o.shape &&
          vi.device == o.device) {
        in_place_[k] = v;
        break;
      }
    }
  }
  // Plan estimate: every defined value as a fresh buffer (views are counted too: an upper bound).
  std::int64_t live = 0;
  for (std::int32_t v : g_.constant_ids) live += bytes_of(g_.values[static_cast<std::size_t>(v)]);
  for (std::int32_t v : g_.inputs) live += bytes_of(g_.values[static_cast<std::size_t>(v)]);
  peak_bytes_ = live;
  for (std::size_t k = 0; k < g_.nodes.size(); ++k) {
    for (std::int32_t v : g_.nodes[k].out)
      if (v >= 0 && def[static_cast<std::size_t>(v)] == static_cast<std::int64_t>(k))
        live += bytes_of(g_.values[static_cast<std::size_t>(v)]);
    peak_bytes_ = std::max(peak_bytes_, live);
    for (std::int32_t v : release_[k]) live -= bytes_of(g_.values[static_cast<std::size_t>(v)]);
  }
  // An output made by a run is moved out at its last place among the outputs; inputs (borrowed)
  // and constants are copied.
  move_out_.assign(g_.outputs.size(), 0);
  for (std::size_t k = 0; k < g_.outputs.size(); ++k) {
    const auto v = static_cast<std::size_t>(g_.outputs[k]);
    const bool again = std::find(g_.outputs.begin() + static_cast<std::ptrdiff_t>(k) + 1, g_.outputs.end(),
                                 g_.outputs[k]) != g_.outputs.end();
    move_out_[k] = !again && !is_constant_[v] && !is_input_[v];
  }
  shared_out_.assign(g_.outputs.size(), 0);
  for (std::size_t k = 0; k < g_.outputs.size(); ++k) {
    const std::int32_t v = g_.outputs[k];
    shared_out_[k] = is_constant_[static_cast<std::size_t>(v)] ||
                     std::find(g_.outputs.begin(), g_.outputs.begin() + static_cast<std::ptrdiff_t>(k), v) !=
                         g_.outputs.begin() + static_cast<std::ptrdiff_t>(k);
  }
}

void Program::run(const detail::ImplPtr* inputs, std::size_t n_inputs, detail::ImplPtr* outputs) {
  TENAX_CHECK(n_inputs == g_.inputs.size(), "compiled", "expected ", g_.inputs.size(), " inputs, got ", n_inputs);
  for (std::size_t k = 0; k < n_inputs; ++k) {
    const detail::TensorImpl* t = inputs[k].get();
    const ValueInfo& want = g_.values[static_cast<std::size_t>(g_.inputs[k])];
    TENAX_CHECK(
        t && t->dtype == want.dtype && t->shape == want.shape && t->device == want.device, "compiled", "input ", k,
        ": compiled for ", want.str(), " on ", want.device.str(), ", got ",
        t ? ValueInfo{t->dtype, t->shape, t->device}.str() + " on " + t->device.str() : std::string("undefined"));
  }
  // A prepared run neither records on the tape, nor carries tangents, nor is traced: its results
  // would be constants to those. Differentiate or trace the function (or the Traced) instead.
  const detail::ModeState& m = detail::mode();
  TENAX_CHECK(!m.tracer, "compiled",
              "a compiled program cannot be called while trace() records (its results would be constants); "
              "call the traced function or the Traced instead");
  for (std::size_t k = 0; k < n_inputs; ++k) {
    const detail::TensorImpl& t = *inputs[k];
    TENAX_CHECK(!(m.grad_enabled && t.requires_grad), "compiled", "input ", k,
                " requires grad, but a compiled program is not differentiable; compile grad(trace(f)) (or "
                "differentiate the Traced) instead");
    TENAX_CHECK(!(m.fw_enabled && t.tangent), "compiled", "input ", k,
                " carries a forward-mode tangent, but a compiled program is not differentiable; compile "
                "jvp(trace(f)) (or differentiate the Traced) instead");
  }
  TENAX_CHECK(!running_.on.exchange(true, std::memory_order_acquire), "compiled",
              "this program is already running on another thread (a Compiled and its copies share one program): "
              "compile one per thread from the same trace, or call through jit(), which keeps one per thread");
  struct Done {
    std::atomic<bool>& on;
    ~Done() { on.store(false, std::memory_order_release); }  // a plain store on x86, not a second xchg
  } done{running_.on};
  const bool anomaly = m.anomaly;
  GradModeGuard no_rec(false);
  detail::ForwardOffGuard no_fw;
  detail::TracerPause no_trace;
  // The inputs are borrowed (the caller holds them for the run; the plan never overwrites or
  // donates an input) and given up at the end; an input some step defines again (an op that
  // returned it as its own output) is held with a count, since that step replaces it in env_.
  for (std::size_t k = 0; k < n_inputs; ++k) {
    const auto v = static_cast<std::size_t>(g_.inputs[k]);
    // (Not one conditional expression: `c ? borrow(..) : inputs[k]` is a const prvalue, which
    // would be copy-assigned, an atomic increment and decrement per input per run.)
    if (is_input_[v] == 1)
      env_[v] = detail::ImplPtr::borrow(inputs[k].get());
    else
      env_[v] = inputs[k];
  }
  // Leaves only the constants behind, also when a kernel throws. After a prepared run that ended
  // normally only the inputs and the outputs can still be held (every other value was released
  // after its last reader), so only those are looked at.
  struct Clear {
    Program& p;
    bool only_ends = false;
    ~Clear() {
      for (std::int32_t v : p.g_.inputs)
        if (p.is_input_[static_cast<std::size_t>(v)] == 1) p.env_[static_cast<std::size_t>(v)].detach();
      if (only_ends) {
        for (std::int32_t v : p.g_.outputs)
          if (!p.is_constant_[static_cast<std::size_t>(v)]) p.env_[static_cast<std::size_t>(v)].reset();
        for (std::int32_t v : p.g_.inputs) p.env_[static_cast<std::size_t>(v)].reset();
        return;
      }
      for (std::size_t v = 0; v < p.env_.size(); ++v)
        if (!p.is_constant_[v] && p.env_[v]) p.env_[v].reset();
    }
  } clear{*this};
  if (anomaly)
    run_forward(true, false);
  else if (!prepared_ && storage_distinct())
    run_capture();
  else if (!prepared_)
    run_forward(false, true);
  else if (inputs_match_plan())
    run_prepared(), clear.only_ends = true;
  else
    run_forward(false, true);
  for (std::size_t k = 0; k < g_.outputs.size(); ++k) {
    detail::ImplPtr& y = env_[static_cast<std::size_t>(g_.outputs[k])];
    if (move_out_[k])
      outputs[k] = std::move(y);
    else
      outputs[k] = y;
  }
}

// Strides that matter: those of dimensions with more than one element.
bool Program::inputs_match_plan() const {
  for (std::size_t k = 0; k < g_.inputs.size(); ++k) {
    const detail::TensorImpl& t = *env_[static_cast<std::size_t>(g_.inputs[k])];
    for (int d = 0; d < t.rank(); ++d)
      if (t.shape[d] != 1 && t.strides[d] != input_strides_[k][d]) return false;
  }
  return true;
}

// Whether the inputs of this run have distinct storages, also distinct from every constant's. The
// plan ties a kernel's operands and a view's base to node inputs by identity in the first run, so
// a first run in which two inputs (or an input and a constant) are the same tensor would tie them
// to the wrong one; such a run does not prepare the program. Constants may share storage among
// themselves: they are the same objects in every run.
bool Program::storage_distinct() const {
  auto storage = [&](std::int32_t v) { return env_[static_cast<std::size_t>(v)]->storage.get(); };
  for (std::size_t i = 0; i < g_.inputs.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j)
      if (storage(g_.inputs[i]) == storage(g_.inputs[j])) return false;
    for (std::int32_t c : g_.constant_ids)
      if (storage(g_.inputs[i]) == storage(c)) return false;
  }
  return true;
}

namespace {

// Whether only the holder of this reference refers to the body and only the body to its storage.
bool sole_owner(const detail::TensorImpl* t) {
  return t != nullptr && t->refs_.load(std::memory_order_acquire) == 1 &&
         t->storage->refs_.load(std::memory_order_acquire) == 1;
}

// Whether a body a prepared run handed out as an output can take the next run's output: only the
// program refers to it (the caller has let it go) and to its storage (no view of it, no DLPack
// export), and it carries no autograd, tangent or trace state. Its dtype, layout and storage are
// those the program made: nothing changes a body's metadata or storage after it is made.
bool recyclable(const detail::TensorImpl* t) {
  return sole_owner(t) && !t->requires_grad && !t->grad_fn && !t->tangent && t->trace_id == 0;
}

}  // namespace

// Step k's op forward; with in_place, an elementwise op may write into the input the liveness
// plan lets it overwrite, when nothing else holds that input (kernels/donation.hpp); in a prepared
// run (borrowing), never into a borrowed slot-backed body.
void Program::forward_step(std::size_t k, bool in_place, bool borrowing) {
  const GraphNode& n = g_.nodes[k];
  detail::TensorImpl* give = nullptr;
  if (const std::int32_t v = in_place_[k]; v >= 0 && in_place &&
                                           !(borrowing && borrowed_[static_cast<std::size_t>(v)]) &&
                                           sole_owner(env_[static_cast<std::size_t>(v)].get()))
    give = env_[static_cast<std::size_t>(v)].get();
  detail::DonationScope offer(give);
  n.forward(env_.data(), n.in.data(), n.out.data());
}

// Every step's op forward, values released after their last reader; an elementwise step may write
// into an input that dies at it when nothing else holds that input's body or storage.
void Program::run_forward(bool anomaly, bool in_place) {
  for (std::size_t k = 0; k < g_.nodes.size(); ++k) {
    forward_step(k, in_place);
    if (anomaly) [[unlikely]]
      check_step(k);
    for (std::int32_t v : release_[k]) env_[static_cast<std::size_t>(v)].reset();
  }
}

// Step k as the first run saw it right after it ran: its kernel, and the bodies of its inputs and
// outputs (a later step may define an alias of a value, replacing its body in env_).
struct Program::Seen {
  detail::KernelCapture kernel;
  std::vector<detail::ImplPtr> in, out;
};

// The first run: every step's forward with its kernel captured, nothing released or overwritten
// (so that storage identity tells which values share a buffer), then the plan.
void Program::run_capture() {
  input_strides_.clear();
  for (std::int32_t v : g_.inputs) input_strides_.push_back(env_[static_cast<std::size_t>(v)]->strides);
  std::vector<Seen> seen(g_.nodes.size());
  for (std::size_t k = 0; k < g_.nodes.size(); ++k) {
    const GraphNode& n = g_.nodes[k];
    {
      detail::CaptureScope capture(&seen[k].kernel);
      n.forward(env_.data(), n.in.data(), n.out.data());
    }
    for (std::int32_t v : n.in) seen[k].in.push_back(env_[static_cast<std::size_t>(v)]);
    for (std::int32_t v : n.out) seen[k].out.push_back(v >= 0 ? env_[static_cast<std::size_t>(v)] : detail::ImplPtr());
  }
  prepare(seen);
  prepared_ = true;
}

namespace {

// A body over `storage` with the given dtype and layout (no AD state).
template <class S>
detail::ImplPtr body_over(S&& storage, DType dtype, Device device, const Shape& shape, const Strides& strides,
                          std::int64_t offset) {
  detail::ImplPtr t = detail::ImplPtr::adopt_new(detail::TensorImpl::create());
  t->dtype = dtype;
  t->device = device;
  t->shape = shape;
  t->strides = strides;
  t->offset = offset;
  t->storage = std::forward<S>(storage);  // a fresh storage moved in: no atomic count
  return t;
}

// Offsets in bytes: a view may have another dtype than its base (real/imag of complex values).
std::int64_t byte_offset(const detail::TensorImpl& t) {
  return t.offset * static_cast<std::int64_t>(dtype_size(t.dtype));
}
detail::ImplPtr view_over(const detail::TensorImpl& base, DType dtype, Device device, const Shape& shape,
                          const Strides& strides, std::int64_t byte_delta) {
  return body_over(base.storage, dtype, device, shape, strides,
                   (byte_offset(base) + byte_delta) / static_cast<std::int64_t>(dtype_size(dtype)));
}

bool is_plain_buffer(const detail::TensorImpl& t) { return t.offset == 0 && t.is_contiguous() && t.numel() > 0; }

// The bytes of a kernel output's buffer.
std::int64_t buffer_bytes(const Shape& buffer, DType dtype) {
  return numel_of(buffer) * static_cast<std::int64_t>(dtype_size(dtype));
}

// Best fit: the free slot of least capacity that holds `bytes`, or else a new slot of that size.
std::int32_t fit_slot(std::int64_t bytes, std::vector<std::int64_t>& capacity, std::vector<char>& is_free) {
  std::int32_t chosen = -1;
  for (std::size_t s = 0; s < capacity.size(); ++s)
    if (is_free[s] && capacity[s] >= bytes && (chosen < 0 || capacity[s] < capacity[static_cast<std::size_t>(chosen)]))
      chosen = static_cast<std::int32_t>(s);
  if (chosen < 0) {
    chosen = static_cast<std::int32_t>(capacity.size());
    capacity.push_back(bytes);
    is_free.push_back(0);
  }
  return chosen;
}

}  // namespace

// The values grouped by the storage they share after the first run (a buffer and the views of it).
struct Program::Groups {
  std::vector<std::int32_t> of;    // per value: its group, or -1 (no body)
  std::vector<std::int64_t> last;  // per group: the last step that defines or reads one of its values
  std::vector<char> pinned;        // per group: whether it gets no slot
};

// The static plan from what the first run saw: each step's kind, the groups of values sharing a
// storage, a slot per group that may have one, and the slots' storage and fixed bodies.
void Program::prepare(const std::vector<Seen>& seen) {
  // 1. What each step is.
  steps_.assign(g_.nodes.size(), Step{});
  for (std::size_t k = 0; k < steps_.size(); ++k) classify_step(k, seen[k]);
  fuse_maps(seen);
  // 2. Groups of values sharing a storage, and which of them get no slot.
  Groups groups = group_values();
  pin_groups(groups);
  // 3. Slots.
  const std::vector<std::int64_t> capacity = assign_slots(groups, seen);
  // 4. The slots' storage and the bodies that stay the same every run.
  make_slot_storage(capacity);
  make_fixed_bodies();
  // 5. What a prepared run keeps in env_, and the pointers it reads operands through.
  plan_environment();
}

// Records value v's dtype and layout as the first run left them in y.
void Program::record_layout(Out& o, std::int32_t v, const detail::TensorImpl& y) {
  o.value = v;
  o.dtype = y.dtype;
  o.device = y.device;
  o.shape = y.shape;
  o.strides = y.strides;
  o.offset = y.offset;
}

// Step k's kind: a kernel when its one captured kernel qualifies, else a view when it made one,
// else forward (also a step that defines none of its outputs, or not all of them first).
void Program::classify_step(std::size_t k, const Seen& at) {
  const GraphNode& n = g_.nodes[k];
  bool defined_here = !n.out.empty();
  for (std::int32_t v : n.out)
    defined_here = defined_here && (v < 0 || def_[static_cast<std::size_t>(v)] == static_cast<std::int64_t>(k));
  if (!defined_here) return;
  if (make_kernel_step(k, at)) return;
  make_view_step(k, at);
}

// Makes step k a kernel step when its op ran one captured kernel that wrote its outputs' fresh
// buffers and read only node inputs; whether it did.
bool Program::make_kernel_step(std::size_t k, const Seen& at) {
  const GraphNode& n = g_.nodes[k];
  const detail::KernelCapture& c = at.kernel;
  if (!((n.one_kernel || n.elementwise) && c.kernels == 1 && c.n_outs == static_cast<int>(n.out.size()))) return false;
  std::vector<Out> outs(n.out.size());
  if (!kernel_outs(k, at, outs) || !bind_operands(k, at)) return false;
  Step& st = steps_[k];
  st.kind = Step::Kind::kernel;
  st.outs = std::move(outs);
  st.fn = c.fn;
  st.n_operands = c.n_operands;
  return true;
}

// The kernel outputs of step k into outs: whether each defined output is (a view of) its own fresh
// buffer, written by the kernel and shared with no input, and each undefined one is left unwritten.
bool Program::kernel_outs(std::size_t k, const Seen& at, std::vector<Out>& outs) const {
  const GraphNode& n = g_.nodes[k];
  const detail::KernelCapture& c = at.kernel;
  for (std::size_t j = 0; j < n.out.size(); ++j) {
    const detail::TensorImpl* w = c.outs[j].get();
    const detail::TensorImpl* y = at.out[j].get();
    if (n.out[j] < 0) {
      if (w != nullptr) return false;
      continue;
    }
    bool ok = w && y && w->storage.get() == y->storage.get() && w->dtype == y->dtype && is_plain_buffer(*w);
    for (std::size_t i = 0; i < j && ok; ++i) ok = !at.out[i] || at.out[i]->storage.get() != y->storage.get();
    for (const detail::ImplPtr& x : at.in) ok = ok && x->storage.get() != y->storage.get();
    if (!ok) return false;
    record_layout(outs[j], n.out[j], *y);
    outs[j].buffer = w->shape;
    outs[j].is_buffer = w == y;
  }
  return true;
}

// Ties each operand of step k's captured kernel to the node input it was; whether all are one.
bool Program::bind_operands(std::size_t k, const Seen& at) {
  const GraphNode& n = g_.nodes[k];
  const detail::KernelCapture& c = at.kernel;
  for (int j = 0; j < c.n_operands; ++j) {
    std::int32_t found = -1;
    for (std::size_t i = 0; i < n.in.size(); ++i)
      if (at.in[i].get() == c.operands[static_cast<std::size_t>(j)].get()) found = n.in[i];
    steps_[k].operands[static_cast<std::size_t>(j)] = found;
    if (found < 0) return false;
  }
  return true;
}

// Makes step k a view step when its one output shares its storage with one of its inputs.
void Program::make_view_step(std::size_t k, const Seen& at) {
  const GraphNode& n = g_.nodes[k];
  Step& st = steps_[k];
  const detail::TensorImpl* y = n.out.size() == 1 ? at.out[0].get() : nullptr;
  if (y == nullptr) return;
  for (std::size_t i = 0; i < n.in.size(); ++i)
    if (at.in[i]->storage.get() == y->storage.get()) {
      st.kind = Step::Kind::view;
      st.outs.assign(1, Out{});
      record_layout(st.outs[0], n.out[0], *y);
      st.base = n.in[i];
      st.outs[0].offset = byte_offset(*y) - byte_offset(*at.in[i]);
      break;
    }
}

// The values grouped by storage, numbered in value order, and each group's last step.
Program::Groups Program::group_values() const {
  const std::size_t nv = g_.values.size();
  auto storage_of = [&](std::int32_t v) -> const void* {
    const detail::TensorImpl* t = env_[static_cast<std::size_t>(v)].get();
    return t ? static_cast<const void*>(t->storage.get()) : nullptr;
  };
  Groups groups;
  std::unordered_map<const void*, std::int32_t> group_of_storage;
  std::vector<std::int32_t>& group = groups.of;
  group.assign(nv, -1);
  for (std::size_t v = 0; v < nv; ++v)
    if (const void* s = storage_of(static_cast<std::int32_t>(v)))
      group[v] = group_of_storage.emplace(s, static_cast<std::int32_t>(group_of_storage.size())).first->second;
  groups.last.assign(group_of_storage.size(), -1);
  for (std::size_t v = 0; v < nv; ++v)
    if (group[v] >= 0)
      groups.last[static_cast<std::size_t>(group[v])] =
          std::max({groups.last[static_cast<std::size_t>(group[v])], last_[v], def_[v]});
  // A fused chain reads and writes its memory operands block by block over all its steps, so each
  // lives to the chain's last step: no slot is handed on inside a chain.
  for (const Fusion& f : fusions_)
    for (const Fusion::Map& m : f.maps)
      for (int j = 0; j < m.n; ++j)
        if (const Fusion::Operand& u = m.op[static_cast<std::size_t>(j)]; u.reg < 0 || u.gather >= 0)
          if (const std::int32_t gk = group[static_cast<std::size_t>(u.value)]; gk >= 0)
            groups.last[static_cast<std::size_t>(gk)] =
                std::max(groups.last[static_cast<std::size_t>(gk)], static_cast<std::int64_t>(f.last));
  return groups;
}

// Pins the groups that get no slot: those of a program input, output or constant, and those whose
// buffer no kernel step writes, or more than one does, or a kernel step off the CPU.
void Program::pin_groups(Groups& groups) const {
  const std::size_t ng = groups.last.size();
  const std::vector<std::int32_t>& group = groups.of;
  std::vector<char>& pinned = groups.pinned;
  std::vector<std::int32_t> root(ng, -1);  // the kernel step writing the group's buffer
  pinned.assign(ng, 0);
  for (std::int32_t v : g_.inputs) pinned[static_cast<std::size_t>(group[static_cast<std::size_t>(v)])] = 1;
  for (std::int32_t v : g_.outputs) pinned[static_cast<std::size_t>(group[static_cast<std::size_t>(v)])] = 1;
  for (std::int32_t v : g_.constant_ids) pinned[static_cast<std::size_t>(group[static_cast<std::size_t>(v)])] = 1;
  for (std::size_t k = 0; k < steps_.size(); ++k)
    if (steps_[k].kind == Step::Kind::kernel)
      for (const Out& o : steps_[k].outs) {
        if (o.value < 0) continue;
        const auto gk = static_cast<std::size_t>(group[static_cast<std::size_t>(o.value)]);
        if (root[gk] >= 0 || !o.device.is_cpu() || o.in_register) pinned[gk] = 1;
        root[gk] = static_cast<std::int32_t>(k);
      }
  for (std::size_t gk = 0; gk < ng; ++gk)
    if (root[gk] < 0) pinned[gk] = 1;
}

// Gives each kernel output of an unpinned group a slot, in step order: the slot of an operand
// whose group ends at the step (in place), else the best fit among the free ones; a slot is free
// again after its group's last step. Outputs of pinned groups may take a dying operand's body.
// Returns the slots' capacities.
std::vector<std::int64_t> Program::assign_slots(const Groups& groups, const std::vector<Seen>& seen) {
  const std::size_t ns = steps_.size(), ng = groups.last.size();
  const std::vector<std::int32_t>& group = groups.of;
  const std::vector<char>& pinned = groups.pinned;
  std::vector<std::vector<std::int32_t>> ends(ns);
  for (std::size_t gk = 0; gk < ng; ++gk)
    if (!pinned[gk]) ends[static_cast<std::size_t>(groups.last[gk])].push_back(static_cast<std::int32_t>(gk));
  std::vector<std::int32_t> slot_of(ng, -1);
  std::vector<std::int64_t> capacity;
  std::vector<char> is_free;
  for (std::size_t k = 0; k < ns; ++k) {
    Step& st = steps_[k];
    const bool elementwise = g_.nodes[k].elementwise && st.outs.size() == 1 && st.fused < 0;
    for (Out& o : st.outs) {
      if (st.kind != Step::Kind::kernel || o.value < 0 || o.in_register) continue;
      const auto gk = static_cast<std::size_t>(group[static_cast<std::size_t>(o.value)]);
      if (!pinned[gk]) {
        std::int32_t chosen = elementwise ? take_operand_slot(k, o, groups, slot_of) : -1;
        if (chosen < 0) chosen = fit_slot(buffer_bytes(o.buffer, o.dtype), capacity, is_free);
        is_free[static_cast<std::size_t>(chosen)] = 0;
        slot_of[gk] = chosen;
        o.slot = chosen;
      } else if (elementwise && in_place_[k] >= 0 &&
                 pinned[static_cast<std::size_t>(group[static_cast<std::size_t>(in_place_[k])])]) {
        offer_operand_body(k, o, seen[k]);
      }
    }
    for (std::int32_t gk : ends[k])
      if (const std::int32_t s = slot_of[static_cast<std::size_t>(gk)]; s >= 0)
        is_free[static_cast<std::size_t>(s)] = 1;
  }
  return capacity;
}

// In place for elementwise step k's output o: the slot of an operand whose group ends at step k,
// when that operand is the group's whole buffer, of o's layout, and no other operand reads the
// group. The slot is handed over (not freed at the group's end); -1 when there is none.
std::int32_t Program::take_operand_slot(std::size_t k, const Out& o, const Groups& groups,
                                        std::vector<std::int32_t>& slot_of) {
  Step& st = steps_[k];
  const std::vector<std::int32_t>& group = groups.of;
  std::int32_t chosen = -1;
  for (int j = 0; j < st.n_operands && chosen < 0; ++j) {
    const std::int32_t u = st.operands[static_cast<std::size_t>(j)];
    const std::int32_t gu = group[static_cast<std::size_t>(u)];
    if (groups.pinned[static_cast<std::size_t>(gu)] ||
        groups.last[static_cast<std::size_t>(gu)] != static_cast<std::int64_t>(k))
      continue;
    const Step& su = steps_[static_cast<std::size_t>(def_[static_cast<std::size_t>(u)])];
    bool alone = su.kind == Step::Kind::kernel && su.outs.size() == 1 && su.outs[0].value == u &&
                 su.outs[0].is_buffer && su.outs[0].buffer == o.buffer && su.outs[0].dtype == o.dtype;
    for (int i = 0; i < st.n_operands; ++i) {
      const std::int32_t w = st.operands[static_cast<std::size_t>(i)];
      alone = alone && (w == u || group[static_cast<std::size_t>(w)] != gu);
    }
    if (alone) {
      st.took = u;
      chosen = slot_of[static_cast<std::size_t>(gu)];
      slot_of[static_cast<std::size_t>(gu)] = -1;  // handed over, not freed at its end
    }
  }
  return chosen;
}

// A pool buffer per run for elementwise step k's output o; it may take the body of the input the
// liveness plan lets it overwrite, when that input is a plain buffer of the same layout (checked at
// run time by reference counts, as in run_forward; never a slot-backed input, which the plan itself
// holds).
void Program::offer_operand_body(std::size_t k, const Out& o, const Seen& at) {
  Step& st = steps_[k];
  const detail::TensorImpl* u = nullptr;
  for (std::size_t i = 0; i < g_.nodes[k].in.size(); ++i)
    if (g_.nodes[k].in[i] == in_place_[k]) u = at.in[i].get();
  for (int j = 0; j < st.n_operands; ++j)
    if (st.operands[static_cast<std::size_t>(j)] == in_place_[k] && u && is_plain_buffer(*u) && u->shape == o.buffer &&
        u->dtype == o.dtype && o.is_buffer)
      st.reuse = in_place_[k];
}

// One CPU storage per slot, of its capacity.
void Program::make_slot_storage(const std::vector<std::int64_t>& capacity) {
  slots_.clear();
  for (std::int64_t c : capacity) slots_.push_back(detail::make_storage(static_cast<std::size_t>(c), Device::cpu()));
}

// The bodies that stay the same every run: slot-backed kernel outputs, and views of them.
void Program::make_fixed_bodies() {
  fixed_values_.clear();
  borrowed_.assign(env_.size(), 0);
  for (Step& st : steps_) {
    if (st.kind == Step::Kind::kernel) {
      for (Out& o : st.outs)
        if (o.value >= 0 && o.slot >= 0)
          o.fixed =
              body_over(slots_[static_cast<std::size_t>(o.slot)], o.dtype, o.device, o.shape, o.strides, o.offset);
    } else if (st.kind == Step::Kind::view) {
      Out& o = st.outs[0];
      if (const Out& b = out_of(st.base); b.fixed)
        o.fixed = view_over(*b.fixed, o.dtype, o.device, o.shape, o.strides, o.offset);
    }
    for (const Out& o : st.outs)
      if (o.value >= 0 && o.fixed) {
        fixed_values_.push_back(o.value);
        borrowed_[static_cast<std::size_t>(o.value)] = 1;
      }
    // A program output this step writes into a pool buffer (not a slot), handed out once per run:
    // kept for the next run (run_prepared), when it is small.
    if (st.kind == Step::Kind::kernel && st.fused < 0)
      for (Out& o : st.outs)
        if (o.value >= 0 && !o.fixed && o.device.is_cpu() && buffer_bytes(o.buffer, o.dtype) <= kRecycleMaxBytes)
          for (std::size_t k = 0; k < g_.outputs.size(); ++k)
            if (g_.outputs[k] == o.value && move_out_[k]) o.recycle = true;
    st.fixed_out = st.kind == Step::Kind::kernel && st.outs.size() == 1 && st.outs[0].value >= 0 && st.outs[0].fixed
                       ? static_cast<char*>(st.outs[0].fixed->storage->data)
                       : nullptr;
  }
}

namespace {

// Whether byte strides over `shape` walk its elements in order, es bytes apart.
bool in_element_order(const Shape& shape, const Strides& strides, std::int64_t es) {
  for (int d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (strides[d] != es) return false;
    es *= shape[d];
  }
  return true;
}

// Copies elements [b, b + n) of a strided operand (element order over `shape`, byte strides
// `strides`, first element at `base`) into dst: runs along dimension 0, then the next index.
template <class E>
void gather_runs(const Shape& shape, const Strides& strides, const char* base, std::int64_t b, std::int64_t n, E* dst) {
  std::int64_t idx[kMaxRank] = {};
  std::int64_t off = 0, rest = b;
  for (int d = 0; d < shape.size(); ++d) {
    idx[d] = rest % shape[d];
    rest /= shape[d];
    off += idx[d] * strides[d];
  }
  const std::int64_t s0 = shape.size() > 0 ? strides[0] : 0, e0 = shape.size() > 0 ? shape[0] : 1;
  for (std::int64_t i = 0; i < n;) {
    const std::int64_t run = std::min(n - i, e0 - idx[0]);
    const char* q = base + off;
    for (std::int64_t r = 0; r < run; ++r) dst[i + r] = *reinterpret_cast<const E*>(q + r * s0);
    i += run;
    off += run * s0;
    idx[0] += run;
    for (int d = 0; d + 1 < shape.size() && idx[d] == shape[d]; ++d) {  // carry
      off -= shape[d] * strides[d];
      idx[d] = 0;
      ++idx[d + 1];
      off += strides[d + 1];
    }
  }
}

struct Bytes16 {
  std::uint64_t lo, hi;
};

void gather(const Shape& shape, const Strides& strides, std::int64_t es, const char* base, std::int64_t b,
            std::int64_t n, char* dst) {
  switch (es) {
    case 1:
      return gather_runs(shape, strides, base, b, n, reinterpret_cast<std::uint8_t*>(dst));
    case 2:
      return gather_runs(shape, strides, base, b, n, reinterpret_cast<std::uint16_t*>(dst));
    case 4:
      return gather_runs(shape, strides, base, b, n, reinterpret_cast<std::uint32_t*>(dst));
    case 8:
      return gather_runs(shape, strides, base, b, n, reinterpret_cast<std::uint64_t*>(dst));
    default:
      return gather_runs(shape, strides, base, b, n, reinterpret_cast<Bytes16*>(dst));
  }
}

}  // namespace

// Whether step k may join a chain of maps: a kernel step that ran one CPU map (an elementwise op,
// a cast or copy) into a fresh buffer of the map's shape. Its operands may have any layout: one not
// read in element order is gathered block by block (Fusion::Operand::gather).
bool Program::fusible(std::size_t k, const Seen& at) const {
  const Step& st = steps_[k];
  const detail::KernelCapture& c = at.kernel;
  if (st.kind != Step::Kind::kernel || st.outs.size() != 1 || !c.line) return false;
  const Out& o = st.outs[0];
  return o.value >= 0 && o.is_buffer && o.device.is_cpu() && o.shape == c.line_shape && numel_of(o.shape) > 0 &&
         in_element_order(o.shape, c.line_strides[0], static_cast<std::int64_t>(dtype_size(o.dtype)));
}

// Chains of consecutive fusible steps of one shape, each as long as its registers allow.
void Program::fuse_maps(const std::vector<Seen>& seen) {
  fusions_.clear();
  std::size_t k = 0;
  while (k < steps_.size()) {
    if (!fusible(k, seen[k])) {
      ++k;
      continue;
    }
    std::size_t end = k + 1;
    while (end < steps_.size() && fusible(end, seen[end]) && steps_[end].outs[0].shape == steps_[k].outs[0].shape)
      ++end;
    if (end - k < kFuseMinSteps && numel_of(steps_[k].outs[0].shape) < kFuseMinElements) {
      k = end;  // short and in cache: the steps' own kernels are as fast (measured on the mlp)
      continue;
    }
    std::size_t last = end - 1;
    // A full sum of the chain's last value ends it when it can (one step more).
    if (end < steps_.size() && sums_chain(end, end - 1, seen[end]) && make_fusion(k, end, true, seen)) {
      k = end + 1;
      continue;
    }
    while (last > k && !make_fusion(k, last, false, seen)) --last;
    k = last + 1;
  }
}

// Whether step k is a full sum (the CPU reduction's, recorded with its pieces) of the output of
// map step last_map, over the same elements in their order, on the CPU.
bool Program::sums_chain(std::size_t k, std::size_t last_map, const Seen& at) const {
  static_assert(kFuseBlock % detail::kSumLanes == 0, "a block holds whole groups of the sum's lanes");
  const Step& st = steps_[k];
  const detail::SumPieces& sp = at.kernel.sum;
  if (st.kind != Step::Kind::kernel || st.fused >= 0 || st.outs.size() != 1 || st.n_operands != 1 || !sp.feed)
    return false;
  const Out& o = st.outs[0];
  const Out& x = steps_[last_map].outs[0];
  return o.value >= 0 && o.device.is_cpu() && st.operands[0] == x.value && sp.numel == numel_of(x.shape) &&
         sp.elem_size == static_cast<std::int64_t>(dtype_size(x.dtype)) && o.dtype == x.dtype &&
         sp.block % kFuseBlock == 0;
}

// Makes steps first..last one fused chain when their registers fit; whether it did. A value the
// chain defines and only the chain reads (not a program output) lives in a register, from its step
// to its last reader's; the others are read and written in memory.
bool Program::make_fusion(std::size_t first, std::size_t last, bool with_sum, const std::vector<Seen>& seen) {
  Fusion f;
  f.first = first;
  f.last = last;  // with a sum: the sum's step (the maps end one step before)
  const std::size_t last_map = with_sum ? last - 1 : last;
  f.shape = steps_[first].outs[0].shape;
  f.numel = numel_of(f.shape);
  std::unordered_map<std::int32_t, std::int32_t> reg_of;
  std::vector<std::int32_t> free_regs;
  auto take_register = [&]() -> std::int32_t {
    if (free_regs.empty()) {
      if (f.registers == kFuseRegisters) return -1;
      return f.registers++;
    }
    const std::int32_t r = free_regs.back();
    free_regs.pop_back();
    return r;
  };
  auto size_of = [&](std::int32_t v) {
    return static_cast<std::int64_t>(dtype_size(g_.values[static_cast<std::size_t>(v)].dtype));
  };
  for (std::size_t k = first; k <= last_map; ++k) {
    const Step& st = steps_[k];
    const detail::KernelCapture& c = seen[k].kernel;
    Fusion::Map m;
    m.line = c.line;
    m.n = 1 + st.n_operands;
    for (int j = 0; j < st.n_operands; ++j) {
      Fusion::Operand& u = m.op[static_cast<std::size_t>(j + 1)];
      u.value = st.operands[static_cast<std::size_t>(j)];
      u.stride = size_of(u.value);
      if (const auto r = reg_of.find(u.value); r != reg_of.end()) {
        u.reg = r->second;
      } else if (const Strides& sj = c.line_strides[static_cast<std::size_t>(j + 1)];
                 !in_element_order(f.shape, sj, u.stride)) {
        u.gather = static_cast<std::int32_t>(f.gathers.size());
        f.gathers.push_back(sj);
        if ((u.reg = take_register()) < 0) return false;
      }
    }
    Fusion::Operand& y = m.op[0];
    y.value = st.outs[0].value;
    y.stride = size_of(y.value);
    const bool output = std::find(g_.outputs.begin(), g_.outputs.end(), y.value) != g_.outputs.end();
    if (!output && last_[static_cast<std::size_t>(y.value)] <= static_cast<std::int64_t>(last)) {
      if ((y.reg = take_register()) < 0) return false;
      reg_of[y.value] = y.reg;
    }
    // Gather registers, and registers whose value this step reads last, are free for the next steps.
    for (int j = 1; j < m.n; ++j)
      if (const Fusion::Operand& u = m.op[static_cast<std::size_t>(j)];
          u.reg >= 0 && (u.gather >= 0 || last_[static_cast<std::size_t>(u.value)] == static_cast<std::int64_t>(k)) &&
          std::find(free_regs.begin(), free_regs.end(), u.reg) == free_regs.end())
        free_regs.push_back(u.reg);
    f.maps.push_back(std::move(m));
  }
  if (with_sum) {  // the sum reads the last map's output where that map wrote it
    f.sum = seen[last].kernel.sum;
    f.sum_in = f.maps.back().op[0];
    if (f.numel >= f.sum.block_from)
      f.partials.resize(static_cast<std::size_t>((f.numel + f.sum.block - 1) / f.sum.block * f.sum.elem_size));
  }
  const auto index = static_cast<std::int32_t>(fusions_.size());
  for (std::size_t k = first; k <= last; ++k) {
    steps_[k].fused = index;
    steps_[k].outs[0].in_register = k <= last_map && f.maps[k - first].op[0].reg >= 0;
  }
  fusions_.push_back(std::move(f));
  return true;
}

// A value made by this run (a pool buffer, a view cut per run): its body into env_ and its first
// element into ptr_.
void Program::define(std::int32_t v, detail::ImplPtr&& body) {
  ptr_[static_cast<std::size_t>(v)] = static_cast<char*>(body->data());
  env_[static_cast<std::size_t>(v)] = std::move(body);
}

// A fused chain: its memory outputs made (a slot-backed one borrowed into env_ where read there, a
// per-run one from the pool), then every map's element loop on each block in step order, and the
// sum that ends the chain fed with the block; the blocks spread over the pool when the chain is
// large (each element is computed once, the same way, whatever the split; with a sum, the split
// falls between the sum's runs, whose partial sums then fold in order).
void Program::run_fused(Fusion& f) {
  char* sum_out = nullptr;  // the sum's output buffer
  for (std::size_t k = f.first; k <= f.last; ++k) {
    const Out& o = steps_[k].outs[0];
    if (o.in_register) continue;
    const auto v = static_cast<std::size_t>(o.value);
    const bool is_sum = f.sum.feed && k == f.last;
    if (o.fixed) {
      if (keep_env_[v]) env_[v] = detail::ImplPtr::borrow(o.fixed.get());
      if (is_sum) sum_out = static_cast<char*>(o.fixed->storage->data);
    } else if (o.is_buffer) {
      define(o.value, detail::make_impl(o.dtype, o.buffer, o.device));
      if (is_sum) sum_out = static_cast<char*>(env_[v]->storage->data);
    } else {  // the sum's output, a view of its buffer
      define(o.value,
             body_over(detail::make_storage(static_cast<std::size_t>(buffer_bytes(o.buffer, o.dtype)), o.device),
                       o.dtype, o.device, o.shape, o.strides, o.offset));
      sum_out = static_cast<char*>(env_[v]->storage->data);
    }
  }
  const detail::SumPieces& sp = f.sum;
  const bool blocked = sp.feed && f.numel >= sp.block_from;
  const std::int64_t run = !sp.feed ? 0 : blocked ? sp.block : f.numel;  // inputs per summed run
  auto blocks = [&](std::int64_t i0, std::int64_t i1) {
    alignas(64) char reg[kFuseRegisters][kFuseBlock * 16];
    alignas(64) char lanes[detail::kSumLanes * 16];
    char* p[detail::kMaxKernelOperands + 1];
    std::int64_t s[detail::kMaxKernelOperands + 1];
    for (std::int64_t b = i0; b < i1; b += kFuseBlock) {
      const std::int64_t n = std::min(kFuseBlock, i1 - b);
      for (const Fusion::Map& m : f.maps) {
        for (int j = 0; j < m.n; ++j) {
          const Fusion::Operand& u = m.op[static_cast<std::size_t>(j)];
          if (u.gather >= 0) [[unlikely]]
            gather(f.shape, f.gathers[static_cast<std::size_t>(u.gather)], u.stride,
                   ptr_[static_cast<std::size_t>(u.value)], b, n, reg[u.reg]);
          p[j] = u.reg >= 0 ? reg[u.reg] : ptr_[static_cast<std::size_t>(u.value)] + b * u.stride;
          s[j] = u.stride;
        }
        m.line(p, s, n);
      }
      if (!sp.feed) continue;
      // The sum: blocks start at multiples of kFuseBlock from the start of a run, and runs at
      // multiples of `run`, so the run's last block holds its last n % kSumLanes inputs.
      const Fusion::Operand& u = f.sum_in;
      const char* x = u.reg >= 0 ? reg[u.reg] : ptr_[static_cast<std::size_t>(u.value)] + b * u.stride;
      const std::int64_t r0 = b - b % run, rn = std::min(run, f.numel - r0);
      char* out = blocked ? f.partials.data() + r0 / run * sp.elem_size : sum_out;
      if (rn < sp.lanes_from) {
        sp.small(out, x, n);  // the whole run: fewer inputs than a block
        continue;
      }
      if (b == r0) sp.start(lanes);
      const std::int64_t tail = b + n == r0 + rn ? n % detail::kSumLanes : 0;
      sp.feed(lanes, x, n - tail);
      if (b + n == r0 + rn) sp.end(out, lanes, x + (n - tail) * sp.elem_size, tail);
    }
  };
  const std::int64_t parts = cpu::useful_parts(f.numel, cpu::parallel_threads());
  if (!sp.feed) {
    if (parts <= 1) return blocks(0, f.numel);
    cpu::parallel_for(parts, [&](std::int64_t c) { blocks(f.numel * c / parts, f.numel * (c + 1) / parts); });
    return;
  }
  const std::int64_t runs = (f.numel + run - 1) / run, rparts = std::min(parts, runs);
  if (rparts <= 1)
    blocks(0, f.numel);
  else
    cpu::parallel_for(rparts, [&](std::int64_t c) {
      blocks(std::min(f.numel, runs * c / rparts * run), std::min(f.numel, runs * (c + 1) / rparts * run));
    });
  if (blocked) sp.fold(sum_out, f.partials.data(), runs);
}

// Which values a prepared run holds in env_ and which it only reads through ptr_. A value needs
// an env_ entry when a forward step reads it, it is a program output, or a view made per run is
// cut from it; a value whose body a run makes (a pool buffer, a forward step's output) holds it
// there too. A slot-backed value (fixed body) needs none otherwise, nor does a view of memory that
// outlives the run's releases (an input, a constant, a slot) that nothing reads through env_:
// kernel steps read it through ptr_. The fixed pointers (constants, slot-backed values) are set
// here once; the others each run.
void Program::plan_environment() {
  const std::size_t nv = env_.size();
  std::vector<char> persists(nv, 0);  // memory that outlives the run's releases
  for (std::int32_t v : g_.inputs) persists[static_cast<std::size_t>(v)] = 1;
  for (std::int32_t v : g_.constant_ids) persists[static_cast<std::size_t>(v)] = 1;
  keep_env_.assign(nv, 0);
  for (std::size_t k = 0; k < steps_.size(); ++k) {
    const Step& st = steps_[k];
    if (st.kind == Step::Kind::forward) {
      for (std::int32_t v : g_.nodes[k].in) keep_env_[static_cast<std::size_t>(v)] = 1;
      for (std::int32_t v : g_.nodes[k].out)
        if (v >= 0) keep_env_[static_cast<std::size_t>(v)] = 1;
      continue;
    }
    for (const Out& o : st.outs) {
      if (o.value < 0) continue;
      const auto v = static_cast<std::size_t>(o.value);
      if (o.fixed)
        persists[v] = 1;
      else if (st.kind == Step::Kind::view)
        persists[v] = persists[static_cast<std::size_t>(st.base)];
      else if (!o.in_register)
        keep_env_[v] = 1;
    }
  }
  for (std::int32_t v : g_.outputs) keep_env_[static_cast<std::size_t>(v)] = 1;
  for (std::size_t k = steps_.size(); k-- > 0;) {
    const Step& st = steps_[k];
    if (st.kind != Step::Kind::view || st.outs[0].fixed) continue;
    const auto v = static_cast<std::size_t>(st.outs[0].value);
    if (keep_env_[v] || !persists[v]) keep_env_[v] = keep_env_[static_cast<std::size_t>(st.base)] = 1;
  }
  ptr_.assign(nv, nullptr);
  for (std::int32_t v : g_.constant_ids)
    ptr_[static_cast<std::size_t>(v)] = static_cast<char*>(env_[static_cast<std::size_t>(v)]->data());
  for (const Step& st : steps_)
    for (const Out& o : st.outs)
      if (o.value >= 0 && o.fixed) ptr_[static_cast<std::size_t>(o.value)] = static_cast<char*>(o.fixed->data());
  release_run_.assign(steps_.size(), {});
  for (std::size_t k = 0; k < steps_.size(); ++k)
    for (std::int32_t v : release_[k])
      if (keep_env_[static_cast<std::size_t>(v)]) release_run_[k].push_back(v);
}

// The prepared output record of value v (an empty record for inputs, constants and values of
// forward steps, whose bodies are made per run).
const Program::Out& Program::out_of(std::int32_t v) const {
  static const Out none;
  const std::int64_t k = def_[static_cast<std::size_t>(v)];
  if (k < 0) return none;
  for (const Out& o : steps_[static_cast<std::size_t>(k)].outs)
    if (o.value == v) return o;
  return none;
}

void Program::run_prepared() {
  using Kind = Step::Kind;
  // The slot-backed bodies env_ holds are borrowed (no atomic count each way): given up at their
  // release, and here for any still held when the run ends or a step throws.
  struct GiveBack {
    Program& p;
    ~GiveBack() {
      for (std::int32_t v : p.fixed_values_) p.env_[static_cast<std::size_t>(v)].detach();
    }
  } give_back{*this};
  for (std::int32_t v : g_.inputs)
    ptr_[static_cast<std::size_t>(v)] = static_cast<char*>(env_[static_cast<std::size_t>(v)]->data());
  // Puts a kept output body the caller has let go in o.kept[0] (the older one first, which the
  // caller of `y = run(x)` no longer holds); false when neither is free.
  auto take_kept = [](Out& o) {
    if (recyclable(o.kept[1].get())) {
      std::swap(o.kept[0], o.kept[1]);
      return true;
    }
    return recyclable(o.kept[0].get());
  };
  // The values whose last reader is step k: borrowed bodies given up, owned ones released.
  auto release = [&](std::size_t k) {
    for (std::int32_t v : release_run_[k]) {
      detail::ImplPtr& e = env_[static_cast<std::size_t>(v)];
      if (borrowed_[static_cast<std::size_t>(v)])
        e.detach();
      else
        e.reset();
    }
  };
  for (std::size_t k = 0; k < g_.nodes.size(); ++k) {
    Step& st = steps_[k];
    switch (st.kind) {
      case Kind::forward: {
        forward_step(k, true, true);
        for (std::int32_t v : g_.nodes[k].out)
          if (v >= 0 && env_[static_cast<std::size_t>(v)])
            ptr_[static_cast<std::size_t>(v)] = static_cast<char*>(env_[static_cast<std::size_t>(v)]->data());
        break;
      }
      case Kind::kernel: {
        if (st.fused >= 0) {  // a chain of maps: one loop, then on past its steps
          Fusion& f = fusions_[static_cast<std::size_t>(st.fused)];
          run_fused(f);
          for (; k < f.last; ++k) release(k);
          break;
        }
        if (st.fixed_out) {  // the common small step: one slot-backed output
          char* p[1 + detail::kMaxKernelOperands];
          p[0] = st.fixed_out;
          for (int j = 0; j < st.n_operands; ++j)
            p[1 + j] = ptr_[static_cast<std::size_t>(st.operands[static_cast<std::size_t>(j)])];
          st.fn(p);
          if (const std::int32_t v = st.outs[0].value; keep_env_[static_cast<std::size_t>(v)])
            env_[static_cast<std::size_t>(v)] = detail::ImplPtr::borrow(st.outs[0].fixed.get());
          break;
        }
        // Pointers: the outputs' buffers, then the operands' data.
        const std::size_t no = st.outs.size();
        char* p[detail::kMaxKernelOutputs + detail::kMaxKernelOperands];
        detail::ImplPtr buf[detail::kMaxKernelOutputs];
        bool final_body[detail::kMaxKernelOutputs];  // buf[j] is the output's own body already
        for (int j = 0; j < st.n_operands; ++j)
          p[no + static_cast<std::size_t>(j)] =
              ptr_[static_cast<std::size_t>(st.operands[static_cast<std::size_t>(j)])];
        for (std::size_t j = 0; j < no; ++j) {
          const Out& o = st.outs[j];
          if (o.value < 0) {
            p[j] = nullptr;
          } else if (o.fixed) {
            p[j] = static_cast<char*>(o.fixed->storage->data);
          } else if (o.recycle && take_kept(st.outs[j])) {  // an earlier run's output, let go
            buf[j] = o.kept[0];
            final_body[j] = true;
            p[j] = static_cast<char*>(buf[j]->storage->data);
          } else {
            if (st.reuse >= 0) {
              detail::ImplPtr& u = env_[static_cast<std::size_t>(st.reuse)];
              if (!borrowed_[static_cast<std::size_t>(st.reuse)] && sole_owner(u.get())) buf[j] = std::move(u);
            }
            final_body[j] = !buf[j] || o.is_buffer;
            // A fresh buffer: the output's body over it at once (one body, not a buffer's and then
            // the output's view of it).
            if (!buf[j])
              buf[j] = o.is_buffer ? detail::make_impl(o.dtype, o.buffer, o.device)
                                   : body_over(detail::make_storage(
                                                   static_cast<std::size_t>(buffer_bytes(o.buffer, o.dtype)), o.device),
                                               o.dtype, o.device, o.shape, o.strides, o.offset);
            p[j] = static_cast<char*>(buf[j]->storage->data);
          }
        }
        st.fn(p);
        for (std::size_t j = 0; j < no; ++j) {
          const Out& o = st.outs[j];
          if (o.value < 0) continue;
          if (o.fixed) {
            if (keep_env_[static_cast<std::size_t>(o.value)])
              env_[static_cast<std::size_t>(o.value)] = detail::ImplPtr::borrow(o.fixed.get());
          } else {
            define(o.value, final_body[j]
                                ? std::move(buf[j])
                                : body_over(buf[j]->storage, o.dtype, o.device, o.shape, o.strides, o.offset));
            if (o.recycle && o.kept[0].get() != env_[static_cast<std::size_t>(o.value)].get()) {
              Out& w = st.outs[j];
              w.kept[1] = std::move(w.kept[0]);
              w.kept[0] = env_[static_cast<std::size_t>(o.value)];
            }
          }
        }
        break;
      }
      case Kind::view: {
        const Out& o = st.outs[0];
        const auto v = static_cast<std::size_t>(o.value);
        if (o.fixed) {
          if (keep_env_[v]) env_[v] = detail::ImplPtr::borrow(o.fixed.get());
        } else if (keep_env_[v]) {
          define(o.value,
                 view_over(*env_[static_cast<std::size_t>(st.base)], o.dtype, o.device, o.shape, o.strides, o.offset));
        } else {  // read only by kernel steps, through its first element
          ptr_[v] = ptr_[static_cast<std::size_t>(st.base)] + o.offset;
        }
        break;
      }
    }
    release(k);
  }
}

std::size_t Program::kernel_steps() const {
  std::size_t c = 0;
  for (const Step& s : steps_) c += s.kind == Step::Kind::kernel;
  return c;
}

std::size_t Program::view_steps() const {
  std::size_t c = 0;
  for (const Step& s : steps_) c += s.kind == Step::Kind::view;
  return c;
}

std::int64_t Program::slot_bytes() const {
  std::int64_t b = 0;
  for (const detail::Storage& s : slots_) b += static_cast<std::int64_t>(s->bytes);
  return b;
}

void Program::check_step(std::size_t k) const {
  const GraphNode& n = g_.nodes[k];
  std::vector<detail::ImplPtr> outs, ins;
  for (std::int32_t v : n.out) outs.push_back(v >= 0 ? env_[static_cast<std::size_t>(v)] : detail::ImplPtr());
  for (std::int32_t v : n.in) ins.push_back(env_[static_cast<std::size_t>(v)]);
  const std::string where = "compiled step " + std::to_string(k) + ",";
  detail::check_anomaly(where.c_str(), n.name, outs.data(), outs.size(), ins.data(), ins.size(), nullptr);
}

std::string Program::str() const {
  std::ostringstream o;
  o << "program: " << g_.nodes.size() << " step(s) (traced " << traced_nodes_ << ", " << cse_merged_
    << " merged by CSE, " << dce_removed_ << " removed as dead, " << joined_ << " pair(s) joined), plan peak "
    << peak_bytes_ << " bytes\n";
  if (prepared_)
    o << "  prepared: " << kernel_steps() << " kernel step(s), " << view_steps() << " view step(s), "
      << g_.nodes.size() - kernel_steps() - view_steps() << " forward step(s); static plan " << slots_.size()
      << " slot(s), " << slot_bytes() << " bytes\n";
  else
    o << "  not prepared yet (the first run captures the kernels and makes the static plan)\n";
  for (std::size_t k = 0; k < g_.inputs.size(); ++k)
    o << "  %" << g_.inputs[k] << " = input " << k << " : " << g_.values[static_cast<std::size_t>(g_.inputs[k])].str()
      << '\n';
  for (std::int32_t c : g_.constant_ids)
    o << "  %" << c << " = constant : " << g_.values[static_cast<std::size_t>(c)].str() << '\n';
  for (std::size_t k = 0; k < g_.nodes.size(); ++k) {
    const GraphNode& n = g_.nodes[k];
    o << "  [" << k << "] ";
    for (std::size_t j = 0; j < n.out.size(); ++j) {
      o << (j ? ", " : "");
      if (n.out[j] < 0)
        o << '_';
      else
        o << '%' << n.out[j];
    }
    o << " = " << n.name << '(';
    for (std::size_t j = 0; j < n.in.size(); ++j) o << (j ? ", " : "") << '%' << n.in[j];
    o << ") :";
    for (std::int32_t v : n.out)
      if (v >= 0)
        o << ' ' << g_.values[static_cast<std::size_t>(v)].str() << " ("
          << bytes_of(g_.values[static_cast<std::size_t>(v)]) << " B)";
    if (prepared_) {
      const Step& st = steps_[k];
      if (st.kind == Step::Kind::kernel && st.fused >= 0) {
        const Fusion& f = fusions_[static_cast<std::size_t>(st.fused)];
        o << "  [kernel, fused " << f.first << ".." << f.last;
        if (st.outs[0].in_register)
          o << ", register";
        else if (st.outs[0].slot >= 0)
          o << ", slot " << st.outs[0].slot;
        o << ']';
      } else if (st.kind == Step::Kind::kernel) {
        o << "  [kernel";
        if (st.outs.size() == 1 && st.outs[0].slot >= 0) o << ", slot " << st.outs[0].slot;
        if (st.outs.size() > 1) {
          o << ", slots";
          for (const Out& u : st.outs) {
            o << ' ';
            if (u.value < 0)
              o << '_';
            else if (u.slot >= 0)
              o << u.slot;
            else
              o << "pool";
          }
        }
        o << ']';
      } else if (st.kind == Step::Kind::view) {
        o << "  [view of %" << st.base << ']';
      } else {
        o << "  [forward]";
      }
    }
    // In place: before the first run, what the liveness plan allows; after it, what the plan does
    // (a slot taken over, or a dying operand's body taken when nothing else holds it).
    const std::int32_t over = !prepared_                              ? in_place_[k]
                              : steps_[k].kind == Step::Kind::forward ? in_place_[k]
                              : steps_[k].kind == Step::Kind::kernel  ? std::max(steps_[k].took, steps_[k].reuse)
                                                                      : -1;
    if (over >= 0) o << "  in place of %" << over;
    if (!release_[k].empty()) {
      o << "  free";
      for (std::int32_t v : release_[k]) o << " %" << v;
    }
    o << '\n';
  }
  o << "  return";
  for (std::int32_t v : g_.outputs) o << " %" << v;
  o << '\n';
  return o.str();
}

}  // namespace tenax::ir
