#pragma once
// Storage: a ref-counted device buffer from the device's pooled allocator. On the CPU the header
// and the data share one pooled block (data starts 64 bytes in, so it stays 64-byte aligned).
#include <atomic>
#include <cstddef>
#include <cstring>
#include <new>

#include "tenax/core/allocator.hpp"
#include "tenax/core/device.hpp"
#include "tenax/core/ref.hpp"

namespace tenax::detail {

struct StorageBlock {
  std::atomic<int> refs_{0};
  void* data = nullptr;
  std::size_t bytes = 0;
  Device device;
  Allocator* alloc = nullptr;
  bool external = false;  // memory owned by another library (adopt): never reused for an output

  static constexpr std::size_t kHeader = 64;
  static_assert(sizeof(std::atomic<int>) + sizeof(void*) * 3 + sizeof(Device) + sizeof(bool) <= kHeader);

  // A block of `bytes` on dev from its device's allocator (src/core/storage_create.hpp).
  static StorageBlock* create(std::size_t bytes, Device dev);
  // Memory that another library owns (DLPack import): `owner` is called with (data, bytes) when the
  // last reference goes, and must free itself then (an Allocator whose deallocate releases the
  // memory to its owner).
  static StorageBlock* adopt(void* data, std::size_t bytes, Device dev, Allocator* owner) {
    void* raw = small_alloc(kHeader);
    auto* s = new (raw) StorageBlock;
    s->data = data;
    s->bytes = bytes;
    s->device = dev;
    s->alloc = owner;
    s->external = true;
    return s;
  }
  static void destroy(StorageBlock* s) {
    if (s->alloc) {
      s->alloc->deallocate(s->data, s->bytes);
      std::size_t b = kHeader;
      s->~StorageBlock();
      small_free(s, b);
    } else {
      std::size_t b = kHeader + s->bytes;
      s->~StorageBlock();
      cpu_allocator().deallocate(s, b);
    }
  }
};

using Storage = Ref<StorageBlock>;

inline Storage make_storage(std::size_t bytes, Device dev) { return make_ref<StorageBlock>(bytes, dev); }

}  // namespace tenax::detail
