#pragma once
// Program: a graph prepared for repeated runs. compile() applies, in order:
//   - common-subexpression elimination (same op, same parameter bytes, same inputs),
//   - dead-code elimination (only what the outputs need survives),
//   - a memory plan by liveness: each value is released right after its last reader, so its
//     buffer goes back to the size-class pool and the next allocation of that class reuses it; the
//     plan's peak live bytes are reported by str();
//   - in place where safe: an elementwise step (one map) whose input of the output's dtype and
//     shape dies at that step writes its output into that input's buffer, when at run time
//     nothing else holds the input or its storage (no view, not an input or constant of the
//     program); str() marks such steps "in place of %v". Off in anomaly mode, whose checks read
//     a step's inputs after it ran.
// Constant folding happens while tracing (input-independent ops are not recorded). LAPACK
// workspaces are queried once per shape by the provider layer and pooled, so after the first run a
// prepared run makes no system allocation and no pool miss (tests/trace checks it).
// run() checks dtypes, shapes and devices against the compiled signature, then executes the
// forward kernels in order with recording, tangents and tracing off (in anomaly mode each step's
// outputs are checked for NaN/Inf, ad/anomaly.hpp). A Program is not reentrant:
// use one per thread.
#include <cstdint>
#include <string>
#include <vector>

#include "tenax/trace/graph.hpp"

namespace tenax::ir {

class Program {
 public:
  explicit Program(const Graph& g);

  // inputs: one per graph input; outputs: room for one per graph output.
  void run(const detail::ImplPtr* inputs, std::size_t n_inputs, detail::ImplPtr* outputs);

  const Graph& graph() const { return g_; }
  std::size_t traced_nodes() const { return traced_nodes_; }
  std::size_t cse_merged() const { return cse_merged_; }
  std::size_t dce_removed() const { return dce_removed_; }
  std::int64_t plan_peak_bytes() const { return peak_bytes_; }
  // The prepared steps: op, inputs, outputs with dtype/shape, values released after each step.
  std::string str() const;

 private:
  void check_step(std::size_t k) const;  // anomaly mode
  Graph g_;
  std::vector<std::vector<std::int32_t>> release_;  // per node: values dead after it
  std::vector<std::int32_t> in_place_;              // per node: the input it may overwrite, or -1
  std::vector<detail::ImplPtr> env_;
  std::vector<char> is_constant_;
  std::size_t traced_nodes_ = 0, cse_merged_ = 0, dce_removed_ = 0;
  std::int64_t peak_bytes_ = 0;
};

}  // namespace tenax::ir
