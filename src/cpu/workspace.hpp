#pragma once
// LAPACK workspaces: sizes queried once per (routine, type, shape) and cached; buffers from the
// pooled allocator, so a steady-state loop of factorizations allocates nothing from the system.
#include <array>
#include <cstdint>
#include <unordered_map>

#include "tenax/core/allocator.hpp"

namespace tenax::cpu {

// A pooled scratch buffer of n elements of T.
template <class T>
class Workspace {
 public:
  explicit Workspace(std::int64_t n) : n_(n < 1 ? 1 : n) {
    p_ = static_cast<T*>(detail::cpu_allocator().allocate(static_cast<std::size_t>(n_) * sizeof(T)));
  }
  ~Workspace() { detail::cpu_allocator().deallocate(p_, static_cast<std::size_t>(n_) * sizeof(T)); }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  T* data() const { return p_; }

 private:
  std::int64_t n_;
  T* p_;
};

// Cached workspace sizes: key = routine, type tag and up to four shape parameters.
struct WorkKey {
  int routine, type;
  std::int64_t a, b, c, d;
  bool operator==(const WorkKey&) const = default;
};
struct WorkKeyHash {
  std::size_t operator()(const WorkKey& k) const {
    std::size_t h = static_cast<std::size_t>(k.routine) * 131 + static_cast<std::size_t>(k.type);
    for (auto v : {k.a, k.b, k.c, k.d}) h = h * 1000003u ^ static_cast<std::size_t>(v);
    return h;
  }
};
using WorkSizes = std::array<std::int64_t, 3>;

// Returns the cached sizes for key, calling query() (which returns WorkSizes) the first time.
template <class Q>
WorkSizes cached_work(const WorkKey& key, Q&& query) {
  thread_local std::unordered_map<WorkKey, WorkSizes, WorkKeyHash> cache;
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  WorkSizes s = query();
  cache.emplace(key, s);
  return s;
}

}  // namespace tenax::cpu
