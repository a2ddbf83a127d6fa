#pragma once
// The reverse-mode engine: walks the tape from one or more roots in reverse topological order,
// running each node's rule once with all its cotangents accumulated.
#include <mutex>
#include <span>
#include <vector>

#include "tenax/ad/node.hpp"

namespace tenax::detail {

struct BackwardRequest {
  std::span<const ImplPtr> roots;       // tensors to differentiate (recorded)
  std::span<const ImplPtr> root_grads;  // their cotangents (same shapes)
  // Empty: accumulate into the .grad of every reachable leaf (Tensor::backward). Otherwise: the
  // engine stops at these tensors and returns the cotangent reaching each (null: none reached).
  std::span<const ImplPtr> inputs;
  bool create_graph = false;  // record the backward pass itself (higher-order derivatives)
};

std::vector<ImplPtr> run_backward(const BackwardRequest& req);

// Whether one backward pass from `roots` to `inputs` can carry batched cotangents (ad/apply.hpp):
// the highest rank of the values of the nodes it reaches, the roots and the inputs (tangent_shape's
// P), or -1 when one of those nodes takes no batch (Node::batches_cotangents); `largest` gets the
// most elements of one of those values.
int batched_backward_rank(std::span<const ImplPtr> roots, std::span<const ImplPtr> inputs, std::int64_t& largest);

// Held by every backward pass, one at a time in the process: a pass keeps its scratch in the nodes
// and accumulates into leaves' .grad() in place. Tensor::grad() and zero_grad() take it too, so a
// thread may read or reset a shared leaf's gradient while another one differentiates. Recursive:
// grad() may be read on the thread that holds it.
std::recursive_mutex& engine_mutex();

// slot += g (slot may be null: it becomes g). Both have the same dtype and shape.
void accumulate(ImplPtr& slot, const ImplPtr& g);

}  // namespace tenax::detail
