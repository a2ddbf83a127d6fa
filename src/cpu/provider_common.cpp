// Provider call counters (shared by every provider implementation): per thread, summed on query.
#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <vector>

#include "tenax/backend/cpu_provider.hpp"

namespace tenax::cpu {
namespace {

constexpr int kRoutines = static_cast<int>(Routine::kCount);

// One thread's counts: written by that thread only (relaxed load and store, no read-modify-write),
// read by queries from any thread.
struct ThreadCounts {
  std::array<std::atomic<std::int64_t>, kRoutines> calls{};
  ThreadCounts();
  ~ThreadCounts();
};

// The live threads' counts, and the totals of threads that exited.
struct Registry {
  std::mutex mu;
  std::vector<ThreadCounts*> threads;
  std::array<std::int64_t, kRoutines> exited{};
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: threads may exit after static destruction
  return *r;
}

ThreadCounts::ThreadCounts() {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  r.threads.push_back(this);
}

ThreadCounts::~ThreadCounts() {
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  for (int k = 0; k < kRoutines; ++k)
    r.exited[static_cast<std::size_t>(k)] += calls[static_cast<std::size_t>(k)].load();
  r.threads.erase(std::find(r.threads.begin(), r.threads.end(), this));
}

}  // namespace

void count_call(Routine r) {
  thread_local ThreadCounts mine;
  std::atomic<std::int64_t>& c = mine.calls[static_cast<std::size_t>(r)];
  c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

std::int64_t provider_calls(Routine r) {
  Registry& reg = registry();
  const auto k = static_cast<std::size_t>(r);
  std::lock_guard<std::mutex> g(reg.mu);
  std::int64_t n = reg.exited[k];
  for (const ThreadCounts* t : reg.threads) n += t->calls[k].load(std::memory_order_relaxed);
  return n;
}

void reset_provider_calls() {
  Registry& reg = registry();
  std::lock_guard<std::mutex> g(reg.mu);
  reg.exited.fill(0);
  for (ThreadCounts* t : reg.threads)
    for (auto& c : t->calls) c.store(0, std::memory_order_relaxed);
}

}  // namespace tenax::cpu
