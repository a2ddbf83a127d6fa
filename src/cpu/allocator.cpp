// The CPU pooled allocator: power-of-two size classes with free lists. A thread-local cache in
// front of a locked global pool keeps the common path lock-free. The live bytes are two counters:
// the first thread that allocates (the owner: in most programs the only one) keeps its own with a
// plain load and store, the others share an atomic one; pool hits are counted per thread and
// summed on query. So the owner's common path has no atomic read-modify-write at all (a `lock`
// instruction per allocation and per free was a fifth of an eager op's time on one element).
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
  bool owner = false;  // this thread's live bytes go to CpuPool::owner_live_
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
      note_live(static_cast<std::int64_t>(cb), l);
      return b;
    }
    {
      std::lock_guard<std::mutex> g(mu_);
      if (FreeBlock* b = global_[c]) {
        global_[c] = b->next;
        ++global_hits_;
        note_live(static_cast<std::int64_t>(cb), l);
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
    note_live(static_cast<std::int64_t>(cb), l);
    return p;
  }

  void deallocate(void* p, std::size_t bytes) override {
    if (!p) return;
    if (bytes == 0) bytes = 1;
    const int c = size_class(bytes);
    auto* b = static_cast<FreeBlock*>(p);
    Local& l = local();
    note_free(static_cast<std::int64_t>(class_bytes(c)), l);
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
    s.bytes_live = live();
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
    peak_.store(live());
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
  // The live bytes: read before sys_bytes_ in stats(), and each counted block was counted in
  // sys_bytes_ before it was counted live (release here, acquire there).
  std::int64_t live() const {
    return owner_live_.load(std::memory_order_acquire) + others_live_.load(std::memory_order_acquire);
  }
  void note_free(std::int64_t sub, const Local& l) {
    if (l.owner)
      owner_live_.store(owner_live_.load(std::memory_order_relaxed) - sub, std::memory_order_release);
    else
      others_live_.fetch_sub(sub, std::memory_order_release);
  }
  void note_live(std::int64_t add, const Local& l) {
    std::int64_t now;
    if (l.owner) {
      now = owner_live_.load(std::memory_order_relaxed) + add;
      owner_live_.store(now, std::memory_order_release);
      now += others_live_.load(std::memory_order_relaxed);
    } else {
      now = others_live_.fetch_add(add, std::memory_order_acq_rel) + add + owner_live_.load(std::memory_order_relaxed);
    }
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
  // owner_live_: written by the owner thread only (load + store); others_live_: every other thread.
  std::atomic<std::int64_t> owner_live_{0}, others_live_{0};
  std::atomic<std::int64_t> peak_{0}, sys_bytes_{0}, sys_allocs_{0}, sys_frees_{0}, misses_{0};
};

CpuPool& pool() {
  // Never destroyed: blocks may be returned during static destruction.
  static CpuPool* p = new CpuPool;
  return *p;
}

// The first thread to allocate becomes the owner (for the life of the process).
std::atomic<bool> owner_taken{false};
Local::Local() : owner(!owner_taken.exchange(true)) { pool().attach(this); }
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
