#pragma once
// Graph: what trace() records. Values (numbered %0, %1, ...) carry dtype, shape and device; each
// node is one op application (the op struct with its parameters, type-erased) reading values and
// defining values. Inputs are values the caller supplies, constants are tensors the traced function
// read that do not depend on its inputs (held by the graph).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tenax/core/device.hpp"
#include "tenax/core/dtype.hpp"
#include "tenax/core/shape.hpp"
#include "tenax/core/tensor_impl.hpp"

namespace tenax::ir {

struct ValueInfo {
  DType dtype = DType::F64;
  Shape shape;
  Device device;
  std::string str() const;  // "f64[8, 16]" (plus "@cuda:0" off the CPU)
};

// Runs one node on an environment of values: reads env[in[i]], writes env[out[i]] (-1: an output
// the op leaves undefined).
using NodeFn = std::function<void(detail::ImplPtr* env, const std::int32_t* in, const std::int32_t* out)>;

struct GraphNode {
  const char* name = "";
  std::vector<std::int32_t> in, out;
  NodeFn forward;  // the op's forward kernel alone (a prepared run)
  NodeFn call;     // through detail::apply (re-executing a graph under AD, or tracing it again)
  // Common-subexpression key: the op's type and parameter bytes; empty when the parameters are not
  // comparable bytewise (such nodes are never merged).
  std::string cse_key;
  // The op's forward is one elementwise map (Op::elementwise): a prepared run may let it write
  // into the buffer of an input that dies at this node (kernels/donation.hpp).
  bool elementwise = false;
  // The op's forward is one captured kernel call (kernels/capture.hpp) into a fresh buffer returned
  // as is or as a view of it (Op::one_kernel, or elementwise): the first run of a program may
  // capture that kernel (trace/program.hpp).
  bool one_kernel = false;
  // The op acts through its forward alone (an info check that raises): kept by dead-code
  // elimination although no output depends on it (Op::effect).
  bool effect = false;
  // A joint form (Op::joins, Op::joined_name, Op::forward_joined): forward_joined writes the op's
  // outputs and then those of the op named `joins` applied to the node's first inputs, the same
  // bits as that op's forward. A program runs such a pair as one step (trace/program.hpp).
  const char* joins = nullptr;
  const char* joined_name = nullptr;
  NodeFn forward_joined;
};

class Graph {
 public:
  std::vector<ValueInfo> values;
  std::vector<GraphNode> nodes;  // in execution order
  std::vector<std::int32_t> inputs, outputs;
  std::vector<std::int32_t> constant_ids;
  std::vector<detail::ImplPtr> constants;  // parallel to constant_ids

  std::int32_t add_value(const detail::TensorImpl& t);
  // Readable listing: one line per input, constant and node, and the returned values.
  std::string str() const;
};

}  // namespace tenax::ir
