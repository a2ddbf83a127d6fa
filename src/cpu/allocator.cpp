// The CPU pooled allocator: power-of-two size classes with free lists. A thread-local cache in
// front of a locked global pool keeps the common path lock-free; the only atomic read-modify-write
// on that path is the live-bytes counter (pool hits are counted per thread and summed on query).
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

#include "../core/size_classes.hpp"
#include "tenax/core/allocator.hpp"
#include "tenax/core/error.hpp"

namespace tenax {
namespace detail {
namespace {

using Classes = SizeClasses<6, 40>;  // 64 bytes to 1 TiB
constexpr int kClasses = Classes::kCount;
constexpr std::size_t kLocalBytes = std::size_t{1} << 20;  // per class per thread, at least 64 blocks

int size_class(std::size_t bytes) { return Classes::of(bytes); }
constexpr std::size_t class_bytes(int c) { return Classes::bytes(c); }
constexpr std::size_t local_cap(int c) { return std::max<std::size_t>(64, kLocalBytes / class_bytes(c)); }

struct FreeBlock {
  FreeBlock* next;
};

class CpuPool;
CpuPool& pool();

// Per-thread cache. `hits` is written only by its thread (relaxed load + store, no lock) and read
// by stats().
struct Local {
  std::array<FreeBlock*, kClasses> head{};
  std::array<std::size_t, kClasses> count{};
  std::atomic<std::int64_t> hits{0};
  bool alive = true;
  Local();
  ~Local();
};

class CpuPool final : public Allocator {
 public:
  void* allocate(std::size_t bytes) override {
    if (bytes == 0) bytes = 1;
    TENAX_CHECK(bytes <= class_bytes(kClasses - 1), "allocator", "request of ", bytes,
                " bytes exceeds the pool's largest class");
    const int c = size_class(bytes);
    const std::size_t cb = class_bytes(c);
    // A block is counted live only once it is counted in sys_bytes_, so a concurrent stats() never
    // sees more live bytes than the pool holds (bytes_cached = sys - live >= 0).
    Local& l = local();
    if (FreeBlock* b = l.head[c]) {
      l.head[c] = b->next;
      --l.count[c];
      l.hits.store(l.hits.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      note_live(static_cast<std::int64_t>(cb));
      return b;
    }
    {
      std::lock_guard<std::mutex> g(mu_);
      if (FreeBlock* b = global_[c]) {
        global_[c] = b->next;
        ++global_hits_;
        note_live(static_cast<std::int64_t>(cb));
        return b;
      }
    }
    misses_.fetch_add(1, std::memory_order_relaxed);
    void* p = std::aligned_alloc(64, cb);
    if (!p) {
      release_cached();
      p = std::aligned_alloc(64, cb);
      if (!p) fail("allocator", "out of memory allocating ", cb, " bytes");
    }
    sys_allocs_.fetch_add(1, std::memory_order_relaxed);
    sys_bytes_.fetch_add(static_cast<std::int64_t>(cb), std::memory_order_relaxed);
    note_live(static_cast<std::int64_t>(cb));
    return p;
  }

  void deallocate(void* p, std::size_t bytes) override {
    if (!p) return;
    if (bytes == 0) bytes = 1;
    const int c = size_class(bytes);
    live_.fetch_sub(static_cast<std::int64_t>(class_bytes(c)), std::memory_order_relaxed);
    auto* b = static_cast<FreeBlock*>(p);
    Local& l = local();
    if (l.alive && l.count[c] < local_cap(c)) {
      b->next = l.head[c];
      l.head[c] = b;
      ++l.count[c];
      return;
    }
    std::lock_guard<std::mutex> g(mu_);
    b->next = global_[c];
    global_[c] = b;
  }

  AllocatorStats stats() const override {
    AllocatorStats s;
    s.bytes_live = live_.load();
    s.bytes_peak = std::max(peak_.load(), s.bytes_live);
    s.bytes_cached = sys_bytes_.load() - s.bytes_live;
    s.system_allocs = sys_allocs_.load();
    s.system_frees = sys_frees_.load();
    s.pool_misses = misses_.load();
    std::lock_guard<std::mutex> g(mu_);
    s.pool_hits = global_hits_ + dead_hits_;
    for (const Local* l : threads_) s.pool_hits += l->hits.load(std::memory_order_relaxed);
    return s;
  }

  void reset_stats() override {
    peak_.store(live_.load());
    misses_ = 0;
    sys_allocs_ = 0;
    sys_frees_ = 0;
    std::lock_guard<std::mutex> g(mu_);
    global_hits_ = 0;
    dead_hits_ = 0;
    for (Local* l : threads_) l->hits.store(0, std::memory_order_relaxed);
  }

  void release_cached() override {
    Local& l = local();
    std::lock_guard<std::mutex> g(mu_);
    for (int c = 0; c < kClasses; ++c) {
      drain(l.head[c], c);
      l.count[c] = 0;
      drain(global_[c], c);
    }
  }

  void attach(Local* l) {
    std::lock_guard<std::mutex> g(mu_);
    threads_.push_back(l);
  }
  // Thread exit: hand the thread's cache and counters to the global pool.
  void detach(Local* l) {
    std::lock_guard<std::mutex> g(mu_);
    for (int c = 0; c < kClasses; ++c) {
      while (FreeBlock* b = l->head[c]) {
        l->head[c] = b->next;
        b->next = global_[c];
        global_[c] = b;
      }
      l->count[c] = 0;
    }
    dead_hits_ += l->hits.load(std::memory_order_relaxed);
    threads_.erase(std::find(threads_.begin(), threads_.end(), l));
  }

 private:
  static Local& local() {
    thread_local Local l;
    return l;
  }
  void note_live(std::int64_t add) {
    const std::int64_t now = live_.fetch_add(add, std::memory_order_relaxed) + add;
    std::int64_t p = peak_.load(std::memory_order_relaxed);
    while (now > p && !peak_.compare_exchange_weak(p, now, std::memory_order_relaxed)) {
    }
  }
  void drain(FreeBlock*& head, int c) {
    while (FreeBlock* b = head) {
      head = b->next;
      std::free(b);
      sys_bytes_.fetch_sub(static_cast<std::int64_t>(class_bytes(c)), std::memory_order_relaxed);
      sys_frees_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  mutable std::mutex mu_;
  std::array<FreeBlock*, kClasses> global_{};
  std::vector<Local*> threads_;
  std::int64_t global_hits_ = 0, dead_hits_ = 0;
  std::atomic<std::int64_t> live_{0}, peak_{0}, sys_bytes_{0}, sys_allocs_{0}, sys_frees_{0}, misses_{0};
};

CpuPool& pool() {
  // Never destroyed: blocks may be returned during static destruction.
  static CpuPool* p = new CpuPool;
  return *p;
}

Local::Local() { pool().attach(this); }
Local::~Local() {
  alive = false;
  pool().detach(this);
}

}  // namespace

Allocator& cpu_allocator() { return pool(); }

}  // namespace detail

AllocatorStats allocator_stats(Device d) { return detail::allocator_for(d).stats(); }
void reset_allocator_stats(Device d) { detail::allocator_for(d).reset_stats(); }
void release_cached_memory(Device d) { detail::allocator_for(d).release_cached(); }

}  // namespace tenax
