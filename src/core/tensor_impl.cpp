// TensorImpl and Node lifetime: pooled allocation, iterative node destruction.
#include <vector>

#include "tenax/ad/anomaly.hpp"
#include "tenax/ad/node.hpp"
#include "tenax/core/tensor_impl.hpp"

#include "storage_create.hpp"

namespace tenax::detail {

TensorImpl* TensorImpl::create() { return new (small_alloc(sizeof(TensorImpl))) TensorImpl; }

void TensorImpl::destroy(TensorImpl* t) {
  t->~TensorImpl();
  small_free(t, sizeof(TensorImpl));
}

ImplPtr make_impl(DType dtype, const Shape& shape, Device device) {
  ImplPtr t = ImplPtr::adopt_new(TensorImpl::create());
  t->dtype = dtype;
  t->device = device;
  t->shape = shape;
  set_col_major_strides(shape, t->strides);
  t->storage = make_storage(static_cast<std::size_t>(numel_of(shape)) * dtype_size(dtype), device);
  return t;
}

ImplPtr make_view_impl(const TensorImpl& src, const Shape& shape, const Strides& strides, std::int64_t offset) {
  ImplPtr t = ImplPtr::adopt_new(TensorImpl::create());
  t->dtype = src.dtype;
  t->device = src.device;
  t->shape = shape;
  t->strides = strides;
  t->offset = offset;
  t->storage = src.storage;
  // A shallow copy (same view) of a traced value stands for the same value; a different view made
  // outside an op does not (the tracer reports it when an op reads it).
  if (shape == src.shape && strides == src.strides && offset == src.offset) t->trace_id = src.trace_id;
  return t;
}

ImplPtr shallow_copy(const TensorImpl& src) { return make_view_impl(src, src.shape, src.strides, src.offset); }

namespace {

// The "allocator" of one adopted buffer: gives it back to its owner, once, and goes with it.
class ExternalOwner final : public Allocator {
 public:
  ExternalOwner(void (*release)(void*), void* ctx) : release_(release), ctx_(ctx) {}
  void* allocate(std::size_t) override { return nullptr; }  // (never asked: adopt does not allocate)
  void deallocate(void*, std::size_t) override {
    if (release_) release_(ctx_);
    delete this;
  }
  AllocatorStats stats() const override { return {}; }
  void reset_stats() override {}
  void release_cached() override {}

 private:
  void (*release_)(void*);
  void* ctx_;
};

}  // namespace

ImplPtr make_external_impl(DType dtype, const Shape& shape, const Strides& strides, Device device, void* data,
                           std::size_t bytes, void (*release)(void*), void* ctx) {
  ImplPtr t = ImplPtr::adopt_new(TensorImpl::create());
  t->dtype = dtype;
  t->device = device;
  t->shape = shape;
  t->strides = strides;
  auto* owner = new ExternalOwner(release, ctx);
  try {
    t->storage = Storage(StorageBlock::adopt(data, bytes, device, owner));
  } catch (...) {
    delete owner;  // (nothing adopted: the caller keeps the memory)
    throw;
  }
  return t;
}

Node::~Node() { delete origin; }

void Node::destroy(Node* n) {
  // Releasing a node releases its edges and saved tensors, which may release further nodes.
  // Those are queued here instead of recursing, so a graph of any depth is freed in a loop.
  thread_local std::vector<Node*> queue;
  thread_local bool active = false;
  queue.push_back(n);
  if (active) return;
  active = true;
  while (!queue.empty()) {
    Node* x = queue.back();
    queue.pop_back();
    std::size_t sz = x->alloc_size_;
    x->~Node();
    small_free(x, sz);
  }
  active = false;
}

}  // namespace tenax::detail
