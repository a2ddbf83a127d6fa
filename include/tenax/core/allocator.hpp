#pragma once
// The per-device pooled allocator interface and its statistics.
#include <cstddef>
#include <cstdint>

#include "tenax/core/device.hpp"

namespace tenax {

struct AllocatorStats {
  std::int64_t bytes_live = 0;     // bytes handed out and not yet returned
  std::int64_t bytes_peak = 0;     // high-water mark of bytes_live
  std::int64_t bytes_cached = 0;   // bytes held in the pool's free lists
  std::int64_t system_allocs = 0;  // calls into the system allocator
  std::int64_t system_frees = 0;
  std::int64_t pool_hits = 0;    // requests served from a free list
  std::int64_t pool_misses = 0;  // requests that needed a system allocation
};

// Statistics of the allocator that serves `device`.
AllocatorStats allocator_stats(Device device = Device::cpu());
// Resets bytes_peak to bytes_live and the hit/miss/system counters to zero.
void reset_allocator_stats(Device device = Device::cpu());
// Returns every cached block to the system.
void release_cached_memory(Device device = Device::cpu());

namespace detail {

// A device allocator. Blocks are at least 64-byte aligned.
class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* p, std::size_t bytes) = 0;
  virtual AllocatorStats stats() const = 0;
  virtual void reset_stats() = 0;
  virtual void release_cached() = 0;
};

// The CPU pool: power-of-two size classes, 64-byte aligned, thread-safe.
Allocator& cpu_allocator();
// The allocator for `device`; throws tenax::Error when that backend is not built.
Allocator& allocator_for(Device device);
// Backends register their allocator factory here.
void register_allocator(Device::Kind kind, Allocator& (*fn)(int index));

// Small fixed-size objects (tensor metadata, tape nodes) come from the same CPU pool.
inline void* small_alloc(std::size_t bytes) { return cpu_allocator().allocate(bytes); }
inline void small_free(void* p, std::size_t bytes) { cpu_allocator().deallocate(p, bytes); }

}  // namespace detail
}  // namespace tenax
