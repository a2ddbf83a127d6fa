// Graph bookkeeping and its text dump; the Tracer's value naming.
#include "tenax/trace/graph.hpp"

#include <atomic>
#include <sstream>

#include "tenax/ad/tensor_ad.hpp"
#include "tenax/core/error.hpp"
#include "tenax/trace/recorder.hpp"

namespace tenax::ir {

std::string ValueInfo::str() const {
  std::ostringstream o;
  o << dtype_name(dtype) << shape;
  if (!device.is_cpu()) o << '@' << device.str();
  return o.str();
}

std::int32_t Graph::add_value(const detail::TensorImpl& t) {
  values.push_back({t.dtype, t.shape, t.device});
  return static_cast<std::int32_t>(values.size() - 1);
}

namespace {
void list_values(std::ostringstream& o, const std::vector<std::int32_t>& ids) {
  for (std::size_t k = 0; k < ids.size(); ++k) {
    o << (k ? ", " : "");
    if (ids[k] < 0)
      o << '_';
    else
      o << '%' << ids[k];
  }
}
}  // namespace

std::string Graph::str() const {
  std::ostringstream o;
  o << "graph: " << inputs.size() << " input(s), " << constants.size() << " constant(s), " << nodes.size()
    << " node(s), " << outputs.size() << " output(s)\n";
  for (std::size_t k = 0; k < inputs.size(); ++k)
    o << "  %" << inputs[k] << " = input " << k << " : " << values[static_cast<std::size_t>(inputs[k])].str() << '\n';
  for (std::int32_t c : constant_ids)
    o << "  %" << c << " = constant : " << values[static_cast<std::size_t>(c)].str() << '\n';
  for (const GraphNode& n : nodes) {
    o << "  ";
    list_values(o, n.out);
    o << " = " << n.name << '(';
    list_values(o, n.in);
    o << ") :";
    for (std::int32_t v : n.out) o << ' ' << (v < 0 ? std::string("_") : values[static_cast<std::size_t>(v)].str());
    o << '\n';
  }
  o << "  return ";
  list_values(o, outputs);
  o << '\n';
  return o.str();
}

}  // namespace tenax::ir

namespace tenax::detail {

namespace {
std::atomic<std::uint32_t> next_epoch{1};
}

Tracer::Tracer(ir::Graph& g)
    : graph(g), epoch_(next_epoch.fetch_add(1)), grad_at_start_(mode().grad_enabled || mode().in_backward) {}

std::int32_t Tracer::add_input(TensorImpl& t) {
  const std::int32_t id = define(t);
  graph.inputs.push_back(id);
  return id;
}

std::int32_t Tracer::use(const char* op, const TensorImpl& t) {
  if (is_value(t)) return static_cast<std::int32_t>((t.trace_id & 0xffffffffu) - 1);
  const auto it = const_ids_.find(&t);
  if (it != const_ids_.end()) return it->second;
  TENAX_CHECK(!t.storage || !traced_storage_.contains(t.storage.get()), "trace", "op ", op, " reads a ",
              dtype_name(t.dtype), t.shape,
              " tensor that views traced data but was not made by a tenax op (a raw view or copy), so the graph "
              "cannot follow it");
  const std::int32_t id = graph.add_value(t);
  graph.constant_ids.push_back(id);
  graph.constants.push_back(ImplPtr(const_cast<TensorImpl*>(&t)));
  const_ids_.emplace(&t, id);
  return id;
}

ImplPtr traced_detach(const TensorImpl& x) {
  // A view of x's storage with x's geometry, no tape node and no tangent; a new value (a shallow
  // copy would stand for x itself, and graph transforms would differentiate through it).
  const auto view = [](const TensorImpl& s) {
    ImplPtr v = make_view_impl(s, s.shape, s.strides, s.offset);
    v->trace_id = 0;
    return v;
  };
  ImplPtr y = view(x);
  auto& t = *static_cast<Tracer*>(mode().tracer);
  if (!t.is_value(x)) return y;  // x is a constant of the trace: so is y
  ir::GraphNode n;
  n.name = "detach";
  n.in = {t.use("detach", x)};
  n.out = {t.define(*y)};
  n.forward = [view](ImplPtr* env, const std::int32_t* i, const std::int32_t* o) { env[o[0]] = view(*env[i[0]]); };
  // (re-executed while another trace records, as under a graph transform: recorded there too)
  n.call = [view](ImplPtr* env, const std::int32_t* i, const std::int32_t* o) {
    env[o[0]] = mode().tracer ? traced_detach(*env[i[0]]) : view(*env[i[0]]);
  };
  n.cse_key = "detach";
  t.graph.nodes.push_back(std::move(n));
  return y;
}

std::int32_t Tracer::define(TensorImpl& t) {
  if (is_value(t)) return static_cast<std::int32_t>((t.trace_id & 0xffffffffu) - 1);  // an alias
  const std::int32_t id = graph.add_value(t);
  t.trace_id = (epoch_ << 32) | static_cast<std::uint64_t>(id + 1);
  if (t.storage && traced_storage_.insert(t.storage.get()).second) keep_.push_back(t.storage);
  return id;
}

}  // namespace tenax::detail
