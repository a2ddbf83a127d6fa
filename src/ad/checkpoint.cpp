// checkpoint's guard against closures over tensors that require grad (ad/checkpoint.hpp).
#include "tenax/ad/checkpoint.hpp"

#include <string>
#include <unordered_set>
#include <vector>

namespace tenax::detail {

void check_checkpoint_closure(const std::vector<ImplPtr>& outs, const std::vector<const Node*>& stops,
                              std::uint64_t first_seq) {
  std::unordered_set<const Node*> seen(stops.begin(), stops.end());
  std::vector<std::pair<const Node*, const Node*>> todo;  // (node, the node that reached it)
  for (const ImplPtr& o : outs)
    if (o && o->grad_fn) todo.emplace_back(o->grad_fn.get(), nullptr);
  while (!todo.empty()) {
    const auto [n, from] = todo.back();
    todo.pop_back();
    if (!seen.insert(n).second) continue;
    TENAX_CHECK(!n->is_leaf() && n->seq >= first_seq, "checkpoint",
                "the function reads a tensor that requires grad and is not one of its arguments (",
                n->is_leaf() ? std::string("a leaf") : std::string("an output of ") + n->name(), ", used by ",
                from ? from->name() : "the result",
                "): it would receive no gradient through the checkpoint; pass it as an argument");
    for (const Edge& e : n->next)
      if (e.node) todo.emplace_back(e.node.get(), n);
  }
}

}  // namespace tenax::detail
