#pragma once
// TensorImpl: the untyped body behind every Tensor<T> handle. Metadata (shape, strides, offset,
// dtype, device) plus the storage, and the AD state (producer node, tangent). Allocated from the
// CPU pool; never touches the system allocator in steady state.
#include <atomic>
#include <cstdint>

#include "tenax/core/device.hpp"
#include "tenax/core/dtype.hpp"
#include "tenax/core/ref.hpp"
#include "tenax/core/shape.hpp"
#include "tenax/core/storage.hpp"

namespace tenax::detail {

class Node;

struct TensorImpl {
  std::atomic<int> refs_{0};
  DType dtype = DType::F64;
  Device device;
  bool requires_grad = false;
  std::uint32_t output_nr = 0;  // which output of grad_fn this tensor is
  std::int64_t offset = 0;      // in elements
  Shape shape;
  Strides strides;  // in elements
  Storage storage;
  Ref<Node> grad_fn;           // producer node, or the accumulator node of a leaf
  Ref<TensorImpl> tangent;     // forward-mode tangent (same shape and dtype), may be null
  std::uint64_t trace_id = 0;  // trace mode: (trace epoch << 32) | (value index + 1); 0: none

  static TensorImpl* create();
  static void destroy(TensorImpl* t);

  std::int64_t numel() const { return numel_of(shape); }
  int rank() const { return shape.size(); }
  // Pointer to the first element (CPU address or device address).
  void* data() const {
    return static_cast<char*>(storage->data) + offset * static_cast<std::int64_t>(dtype_size(dtype));
  }
  bool is_contiguous() const {
    if (numel() == 0) return true;  // no element to lay out
    std::int64_t acc = 1;
    for (int i = 0; i < shape.size(); ++i) {
      if (shape[i] != 1 && strides[i] != acc) return false;
      acc *= shape[i];
    }
    return true;
  }
};

using ImplPtr = Ref<TensorImpl>;

// A fresh contiguous column-major tensor body with uninitialised data.
ImplPtr make_impl(DType dtype, const Shape& shape, Device device);
// A body that shares `src`'s storage with new view metadata (no AD state).
ImplPtr make_view_impl(const TensorImpl& src, const Shape& shape, const Strides& strides, std::int64_t offset);
// The same data and metadata as `src` with no AD state.
ImplPtr shallow_copy(const TensorImpl& src);
// A body over memory another library owns (DLPack import): `bytes` at `data` on `device`, viewed
// with shape and strides (in elements, offset 0). release(ctx) is called once, when the last
// tensor or view of it is gone (not when this call throws: then the caller keeps the memory). The
// storage is marked external, so a prepared program never writes an output into it.
ImplPtr make_external_impl(DType dtype, const Shape& shape, const Strides& strides, Device device, void* data,
                           std::size_t bytes, void (*release)(void*), void* ctx);

}  // namespace tenax::detail
