// Program: CSE, DCE and the liveness plan over a traced graph, and the prepared run.
#include "tenax/trace/program.hpp"

#include <algorithm>
#include <sstream>
#include <unordered_map>

#include "tenax/ad/anomaly.hpp"
#include "tenax/ad/mode.hpp"
#include "tenax/core/error.hpp"
#include "tenax/kernels/donation.hpp"
#include "tenax/trace/recorder.hpp"

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

// Keeps the nodes some output depends on.
std::size_t eliminate_dead_code(Graph& g) {
  std::vector<char> needed(g.values.size(), 0);
  for (std::int32_t v : g.outputs) needed[static_cast<std::size_t>(v)] = 1;
  std::vector<char> keep(g.nodes.size(), 0);
  for (std::size_t k = g.nodes.size(); k-- > 0;) {
    const GraphNode& n = g.nodes[k];
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

}  // namespace

Program::Program(const Graph& g) : g_(g), traced_nodes_(g.nodes.size()) {
  cse_merged_ = eliminate_common_subexpressions(g_);
  dce_removed_ = eliminate_dead_code(g_);
  const std::size_t nv = g_.values.size();
  env_.assign(nv, detail::ImplPtr());
  is_constant_.assign(nv, 0);
  for (std::size_t k = 0; k < g_.constant_ids.size(); ++k) {
    env_[static_cast<std::size_t>(g_.constant_ids[k])] = g_.constants[k];
    is_constant_[static_cast<std::size_t>(g_.constant_ids[k])] = 1;
  }
  // Liveness: a value dies after its last reader (or right after its definition when unread);
  // inputs, constants and outputs are never released by the plan.
  std::vector<std::int64_t> last(nv, -1), def(nv, -1);
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
  const bool anomaly = detail::mode().anomaly;
  GradModeGuard no_rec(false);
  detail::ForwardOffGuard no_fw;
  detail::TracerPause no_trace;
  for (std::size_t k = 0; k < n_inputs; ++k) env_[static_cast<std::size_t>(g_.inputs[k])] = inputs[k];
  struct Clear {  // leaves only the constants behind, also when a kernel throws
    Program& p;
    ~Clear() {
      for (std::size_t v = 0; v < p.env_.size(); ++v)
        if (!p.is_constant_[v]) p.env_[v].reset();
    }
  } clear{*this};
  for (std::size_t k = 0; k < g_.nodes.size(); ++k) {
    const GraphNode& n = g_.nodes[k];
    detail::TensorImpl* give = nullptr;
    if (const std::int32_t v = in_place_[k]; v >= 0 && !anomaly) {
      // Only this program's environment may hold the body, and only the body its storage.
      detail::TensorImpl* t = env_[static_cast<std::size_t>(v)].get();
      if (t != nullptr && t->refs_.load(std::memory_order_acquire) == 1 &&
          t->storage->refs_.load(std::memory_order_acquire) == 1)
        give = t;
    }
    {
      detail::DonationScope offer(give);
      n.forward(env_.data(), n.in.data(), n.out.data());
    }
    if (anomaly) [[unlikely]]
      check_step(k);
    for (std::int32_t v : release_[k]) env_[static_cast<std::size_t>(v)].reset();
  }
  for (std::size_t k = 0; k < g_.outputs.size(); ++k) outputs[k] = env_[static_cast<std::size_t>(g_.outputs[k])];
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
    << " merged by CSE, " << dce_removed_ << " removed as dead), plan peak " << peak_bytes_ << " bytes\n";
  for (std::size_t k = 0; k < g_.inputs.size(); ++k)
    o << "  %" << g_.inputs[k] << " = input " << k << " : " << g_.values[static_cast<std::size_t>(g_.inputs[k])].str()
      << '\n';
  for (std::int32_t c : g_.constant_ids)
    o << "  %" << c << " = constant : " << g_.values[static_cast<std::size_t>(c)].str() << '\n';
  for (std::size_t k = 0; k < g_.nodes.size(); ++k) {
    const GraphNode& n = g_.nodes[k];
    o << "  [" << k << "] ";
    for (std::size_t j = 0; j < n.out.size(); ++j)
      o << (j ? ", " : "") << (n.out[j] < 0 ? std::string("_") : "%" + std::to_string(n.out[j]));
    o << " = " << n.name << '(';
    for (std::size_t j = 0; j < n.in.size(); ++j) o << (j ? ", " : "") << '%' << n.in[j];
    o << ") :";
    for (std::int32_t v : n.out)
      if (v >= 0)
        o << ' ' << g_.values[static_cast<std::size_t>(v)].str() << " ("
          << bytes_of(g_.values[static_cast<std::size_t>(v)]) << " B)";
    if (in_place_[k] >= 0) o << "  in place of %" << in_place_[k];
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
