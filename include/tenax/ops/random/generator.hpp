#pragma once
// tenax::Generator: the state of a counter-based random stream (Philox4x32-10, ops/random/philox.hpp):
// a 64-bit seed (the key) and a 64-bit offset (the next unused counter). Each random op reserves
// one counter per element, so a call's numbers depend only on (seed, offset at the call, element
// index): the same on every device and at every thread count, and reproducible by restoring the
// state (seed(), offset(), set_offset()). Thread-safe: concurrent calls reserve disjoint ranges.
#include <cstdint>
#include <mutex>

#include "tenax/core/shared_state.hpp"
#include "tenax/ops/random/philox.hpp"

namespace tenax {

class Generator {
 public:
  // PyTorch's default seed.
  static constexpr std::uint64_t kDefaultSeed = 67280421310721ull;

  explicit Generator(std::uint64_t seed = kDefaultSeed) : seed_(seed) {}
  Generator(const Generator& o) {
    const std::lock_guard<std::mutex> l(o.m_);
    seed_ = o.seed_;
    offset_ = o.offset_;
  }
  Generator& operator=(const Generator& o) {
    if (this == &o) return *this;
    std::uint64_t s, f;
    {
      const std::lock_guard<std::mutex> l(o.m_);
      s = o.seed_;
      f = o.offset_;
    }
    const std::lock_guard<std::mutex> l(m_);
    seed_ = s;
    offset_ = f;
    return *this;
  }

  // A new seed, and the stream restarted at offset 0.
  void manual_seed(std::uint64_t seed) {
    const std::lock_guard<std::mutex> l(m_);
    seed_ = seed;
    offset_ = 0;
  }
  std::uint64_t seed() const {
    const std::lock_guard<std::mutex> l(m_);
    return seed_;
  }
  std::uint64_t offset() const {
    const std::lock_guard<std::mutex> l(m_);
    return offset_;
  }
  void set_offset(std::uint64_t offset) {
    const std::lock_guard<std::mutex> l(m_);
    offset_ = offset;
  }
  // The stream of a call drawing n elements: the current state; the offset moves past them.
  fn::PhiloxStream reserve(std::uint64_t n) {
    const std::lock_guard<std::mutex> l(m_);
    const fn::PhiloxStream s{seed_, offset_};
    offset_ += n;
    return s;
  }

 private:
  mutable std::mutex m_;
  std::uint64_t seed_ = kDefaultSeed;
  std::uint64_t offset_ = 0;
};

// The generator the random ops use when none is given: one per process (shared by a program and a
// shared tenax), seeded with Generator::kDefaultSeed.
TENAX_SHARED_STATE inline Generator& default_generator() {
  static Generator g;
  return g;
}
// Reseeds the default generator (and restarts its stream).
inline void manual_seed(std::uint64_t seed) { default_generator().manual_seed(seed); }

}  // namespace tenax
