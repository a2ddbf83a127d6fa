#pragma once
// Tape nodes: one per recorded op application. A node holds the edges to the producers of its
// inputs and whatever its rule saved; the engine (engine.hpp) walks nodes in reverse topological
// order. Nodes come from the pooled allocator and are destroyed iteratively (deep graphs never
// recurse).
#include <atomic>
#include <cstdint>
#include <span>

#include "tenax/core/small_vec.hpp"
#include "tenax/core/tensor_impl.hpp"

namespace tenax::detail {

struct Edge {
  Ref<Node> node;  // null: this input needs no gradient
  std::uint32_t output_nr = 0;
};

using GradList = SmallVec<ImplPtr, 4>;

struct CallStack;

class Node {
 public:
  std::atomic<int> refs_{0};
  SmallVec<Edge, 3> next;  // one per input
  std::uint32_t num_outputs = 1;
  std::uint64_t seq = 0;  // creation order

  // Engine scratch, valid during one backward pass.
  GradList buffer;           // accumulated cotangent per output
  std::int32_t pending = 0;  // unprocessed consumers
  std::uint64_t visit = 0;   // pass id of the last visit
  bool needed = false;
  CallStack* origin = nullptr;  // anomaly mode: where the forward ran (ad/anomaly.hpp); owned

  virtual ~Node();
  virtual const char* name() const = 0;
  // Maps output cotangents (null = zero) to input cotangents (null = zero), one per `next` edge.
  virtual void apply(GradList& grad_outputs, GradList& grad_inputs) = 0;
  // True for the accumulator node of a leaf tensor.
  virtual bool is_leaf() const { return false; }
  // Whether the rule takes batched cotangents (ad/apply.hpp, tangent_shape); raises rank and numel to
  // the highest rank and the most elements of the values it keeps (its inputs and saved outputs).
  virtual bool batches_cotangents() const { return false; }
  virtual void value_extent(int& rank, std::int64_t& numel) const {
    (void)rank;
    (void)numel;
  }

  template <class N, class... A>
  static N* create(A&&... a) {
    void* raw = small_alloc(sizeof(N));
    N* n = new (raw) N(std::forward<A>(a)...);
    n->alloc_size_ = sizeof(N);
    return n;
  }
  static void destroy(Node* n);

 private:
  std::size_t alloc_size_ = 0;
};

using NodePtr = Ref<Node>;

// The accumulator of a leaf tensor that requires grad: holds its .grad().
class LeafNode final : public Node {
 public:
  LeafNode() { num_outputs = 1; }
  const char* name() const override { return "leaf"; }
  void apply(GradList& gout, GradList&) override;
  bool is_leaf() const override { return true; }
  bool batches_cotangents() const override { return true; }
  ImplPtr grad;
};

}  // namespace tenax::detail
