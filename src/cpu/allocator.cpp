// The CPU pooled allocator: power-of-two size classes with free lists. A thread-local cache in
// front of a locked global pool keeps the common path lock-free.
#include <array>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

#include "tenax/core/allocator.hpp"
#include "tenax/core/error.hpp"

namespace tenax {
namespace detail {
namespace {

constexpr int kMinShift = 6;   // 64 bytes
constexpr int kMaxShift = 40;  // 1 TiB
constexpr int kClasses = kMaxShift - kMinShift + 1;
constexpr std::size_t kLocalCap = 64;  // blocks cached per class per thread

int size_class(std::size_t bytes) {
  int c = 0;
  std::size_t s = std::size_t{1} << kMinShift;
  while (s < bytes) {
    s <<= 1;
    ++c;
  }
  return c;
}
std::size_t class_bytes(int c) { return std::size_t{1} << (c + kMinShift); }

struct FreeBlock {
  FreeBlock* next;
};

class CpuPool final : public Allocator {
 public:
  void* allocate(std::size_t bytes) override {
    if (bytes == 0) bytes = 1;
    TENAX_CHECK(bytes <= class_bytes(kClasses - 1), "allocator", "request of ", bytes,
                " bytes exceeds the pool's largest class");
    int c = size_class(bytes);
    Local& l = local();
    std::size_t cb = class_bytes(c);
    live_.fetch_add(static_cast<std::int64_t>(cb), std::memory_order_relaxed);
    update_peak();
    if (FreeBlock* b = l.head[c]) {
      l.head[c] = b->next;
      --l.count[c];
      hits_.fetch_add(1, std::memory_order_relaxed);
      cached_.fetch_sub(static_cast<std::int64_t>(cb), std::memory_order_relaxed);
      return b;
    }
    {
      std::lock_guard<std::mutex> g(mu_);
      if (FreeBlock* b = global_[c]) {
        global_[c] = b->next;
        hits_.fetch_add(1, std::memory_order_relaxed);
        cached_.fetch_sub(static_cast<std::int64_t>(cb), std::memory_order_relaxed);
        return b;
      }
    }
    misses_.fetch_add(1, std::memory_order_relaxed);
    sys_allocs_.fetch_add(1, std::memory_order_relaxed);
    void* p = std::aligned_alloc(64, cb);
    if (!p) {
      live_.fetch_sub(static_cast<std::int64_t>(cb), std::memory_order_relaxed);
      release_cached();
      p = std::aligned_alloc(64, cb);
      TENAX_CHECK(p != nullptr, "allocator", "out of memory allocating ", cb, " bytes");
      live_.fetch_add(static_cast<std::int64_t>(cb), std::memory_order_relaxed);
    }
    return p;
  }

  void deallocate(void* p, std::size_t bytes) override {
    if (!p) return;
    if (bytes == 0) bytes = 1;
    int c = size_class(bytes);
    std::size_t cb = class_bytes(c);
    live_.fetch_sub(static_cast<std::int64_t>(cb), std::memory_order_relaxed);
    cached_.fetch_add(static_cast<std::int64_t>(cb), std::memory_order_relaxed);
    auto* b = static_cast<FreeBlock*>(p);
    Local& l = local();
    if (l.alive && l.count[c] < kLocalCap) {
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
    s.bytes_peak = peak_.load();
    s.bytes_cached = cached_.load();
    s.system_allocs = sys_allocs_.load();
    s.system_frees = sys_frees_.load();
    s.pool_hits = hits_.load();
    s.pool_misses = misses_.load();
    return s;
  }

  void reset_stats() override {
    peak_.store(live_.load());
    hits_ = 0;
    misses_ = 0;
    sys_allocs_ = 0;
    sys_frees_ = 0;
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

  // Thread exit: hand the thread's cache to the global pool.
  void adopt(std::array<FreeBlock*, kClasses>& head) {
    std::lock_guard<std::mutex> g(mu_);
    for (int c = 0; c < kClasses; ++c) {
      while (FreeBlock* b = head[c]) {
        head[c] = b->next;
        b->next = global_[c];
        global_[c] = b;
      }
    }
  }

 private:
  struct Local {
    std::array<FreeBlock*, kClasses> head{};
    std::array<std::size_t, kClasses> count{};
    bool alive = true;
    ~Local();
  };
  static Local& local() {
    thread_local Local l;
    return l;
  }
  void drain(FreeBlock*& head, int c) {
    while (FreeBlock* b = head) {
      head = b->next;
      std::free(b);
      cached_.fetch_sub(static_cast<std::int64_t>(class_bytes(c)), std::memory_order_relaxed);
      sys_frees_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  void update_peak() {
    std::int64_t l = live_.load(std::memory_order_relaxed), p = peak_.load(std::memory_order_relaxed);
    while (l > p && !peak_.compare_exchange_weak(p, l, std::memory_order_relaxed)) {
    }
  }

  std::mutex mu_;
  std::array<FreeBlock*, kClasses> global_{};
  std::atomic<std::int64_t> live_{0}, peak_{0}, cached_{0}, sys_allocs_{0}, sys_frees_{0}, hits_{0}, misses_{0};
};

CpuPool& pool() {
  // Never destroyed: blocks may be returned during static destruction.
  static CpuPool* p = new CpuPool;
  return *p;
}

CpuPool::Local::~Local() {
  alive = false;
  pool().adopt(head);
  count.fill(0);
}

}  // namespace

Allocator& cpu_allocator() { return pool(); }

}  // namespace detail

AllocatorStats allocator_stats(Device d) { return detail::allocator_for(d).stats(); }
void reset_allocator_stats(Device d) { detail::allocator_for(d).reset_stats(); }
void release_cached_memory(Device d) { detail::allocator_for(d).release_cached(); }

}  // namespace tenax
