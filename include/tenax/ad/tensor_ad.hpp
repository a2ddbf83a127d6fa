#pragma once
// The AD members of Tensor<T>: requires_grad, grad, backward, detach.
#include "tenax/ad/engine.hpp"
#include "tenax/ad/mode.hpp"
#include "tenax/ad/node.hpp"
#include "tenax/core/tensor.hpp"

namespace tenax {
namespace detail {
// detach() while a function is traced (src/trace/graph.cpp): the same view as a new value, defined
// by a "detach" node that no derivative passes.
ImplPtr traced_detach(const TensorImpl& x);
}  // namespace detail

template <Scalar T>
Tensor<T> Tensor<T>::requires_grad(bool on) const {
  TENAX_CHECK(defined(), "requires_grad", "undefined tensor");
  detail::ImplPtr p = detail::shallow_copy(*impl_);
  p->tangent = impl_->tangent;
  if (on) {
    TENAX_CHECK(dtype_traits<T>::is_floating, "requires_grad", "only floating tensors can require grad, got ",
                dtype_traits<T>::name);
    p->requires_grad = true;
    p->grad_fn = detail::NodePtr(detail::Node::create<detail::LeafNode>());
    p->output_nr = 0;
  }
  return Tensor(std::move(p));
}

template <Scalar T>
bool Tensor<T>::is_leaf() const {
  return !impl_ || !impl_->grad_fn || impl_->grad_fn->is_leaf();
}

template <Scalar T>
Tensor<T> Tensor<T>::grad() const {
  if (!impl_ || !impl_->grad_fn || !impl_->grad_fn->is_leaf()) return Tensor();
  const auto* leaf = static_cast<const detail::LeafNode*>(impl_->grad_fn.get());
  const std::lock_guard<std::recursive_mutex> lock(detail::engine_mutex());  // a pass may be writing it
  return leaf->grad ? Tensor(leaf->grad) : Tensor();
}

template <Scalar T>
void Tensor<T>::zero_grad() const {
  if (impl_ && impl_->grad_fn && impl_->grad_fn->is_leaf()) {
    const std::lock_guard<std::recursive_mutex> lock(detail::engine_mutex());
    static_cast<detail::LeafNode*>(impl_->grad_fn.get())->grad.reset();
  }
}

template <Scalar T>
void Tensor<T>::backward() const {
  TENAX_CHECK(defined() && numel() == 1, "backward", "implicit cotangent needs a one-element tensor, got shape ",
              detail::shape_or_undefined(*this));
  backward(Tensor::ones(shape(), device()));
}

template <Scalar T>
void Tensor<T>::backward(const Tensor& cotangent, bool create_graph) const {
  TENAX_CHECK(defined() && cotangent.defined() && cotangent.shape() == shape(), "backward", "cotangent of shape ",
              detail::shape_or_undefined(cotangent), " for a tensor of shape ", detail::shape_or_undefined(*this));
  const detail::ImplPtr roots[] = {impl_};
  const detail::ImplPtr grads[] = {cotangent.impl()};
  detail::run_backward({roots, grads, {}, create_graph});
}

template <Scalar T>
Tensor<T> Tensor<T>::detach() const {
  if (!defined()) return Tensor();
  if (detail::mode().tracer) [[unlikely]]
    return Tensor(detail::traced_detach(*impl_));
  return Tensor(detail::shallow_copy(*impl_));
}

// x's value cut off from differentiation (JAX's stop_gradient): no gradient flows back through it and
// it carries no tangent. The same as x.detach().
template <Scalar T>
Tensor<T> stop_gradient(const Tensor<T>& x) {
  return x.detach();
}

}  // namespace tenax
