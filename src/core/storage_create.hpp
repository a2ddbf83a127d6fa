#pragma once
// StorageBlock::create (core/storage.hpp): where a block's header and data live on each device.
// Inline for the library's two callers of make_storage (src/core/tensor_impl.cpp, every tensor's
// allocation, and src/trace/program.cpp): a call per allocation measured 5-8% on the small linalg
// rows whose forwards allocate a few hundred tensors (matrix_exp's JVP).
#include <new>

#include "tenax/core/storage.hpp"

namespace tenax::detail {

// On the CPU the header and the data share one pooled block (data 64 bytes in, so it stays 64-byte
// aligned, and destroy knows it by alloc == nullptr); on a device the header is a small host block
// and the data comes from the device's allocator.
inline StorageBlock* StorageBlock::create(std::size_t bytes, Device dev) {
  if (dev.is_cpu()) {
    void* raw = cpu_allocator().allocate(kHeader + bytes);
    auto* s = new (raw) StorageBlock;
    s->data = static_cast<char*>(raw) + kHeader;
    s->bytes = bytes;
    s->device = dev;
    return s;
  }
  Allocator& a = allocator_for(dev);
  void* raw = small_alloc(kHeader);
  auto* s = new (raw) StorageBlock;
  s->alloc = &a;
  s->device = dev;
  s->bytes = bytes;
  try {
    s->data = a.allocate(bytes);
  } catch (...) {
    small_free(raw, kHeader);
    throw;
  }
  return s;
}

}  // namespace tenax::detail
