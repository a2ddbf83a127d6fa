#pragma once
// The CPU strided loop every elementwise and reduction kernel runs on: drops size-1 dimensions,
// merges dimensions that are contiguous for every operand, then calls an inner loop over the
// first remaining dimension. A loop nest can be cut along one dimension into independent slices,
// which is how kernels spread over the worker pool (kernels/parallel.hpp).
#include <array>
#include <cstdint>

#include "tenax/core/shape.hpp"

namespace tenax::cpu {

// A merged loop nest over N operands; strides in bytes. `empty` when some extent is 0.
template <std::size_t N>
struct LoopNest {
  Shape shape;
  std::array<Strides, N> strides;
  bool empty = false;

  std::int64_t numel() const {
    std::int64_t n = 1;
    for (auto e : shape) n *= e;
    return n;
  }
};

template <std::size_t N>
LoopNest<N> merge_loops(const Shape& shape, const std::array<Strides, N>& strides) {
  LoopNest<N> nest;
  Shape& sh = nest.shape;
  std::array<Strides, N>& st = nest.strides;
  for (int d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) {
      nest.empty = true;
      return nest;
    }
    if (shape[d] == 1) continue;
    int nd = sh.size();
    bool merge = nd > 0;
    for (std::size_t k = 0; k < N && merge; ++k) merge = st[k][nd - 1] * sh[nd - 1] == strides[k][d];
    if (merge) {
      sh[nd - 1] *= shape[d];
    } else {
      sh.push_back(shape[d]);
      for (std::size_t k = 0; k < N; ++k) st[k].push_back(strides[k][d]);
    }
  }
  return nest;
}

// Runs the nest from pointers p: inner(ptrs, inner_strides, n) processes n elements.
template <std::size_t N, class Inner>
void run_loops(const LoopNest<N>& nest, std::array<char*, N> p, Inner&& inner) {
  if (nest.empty) return;
  const Shape& sh = nest.shape;
  const std::array<Strides, N>& st = nest.strides;
  std::array<std::int64_t, N> s0{};
  if (sh.size() == 0) {
    inner(p, s0, std::int64_t{1});
    return;
  }
  for (std::size_t k = 0; k < N; ++k) s0[k] = st[k][0];
  const int nd = sh.size();
  std::int64_t idx[kMaxRank] = {};
  for (;;) {
    inner(p, s0, sh[0]);
    int d = 1;
    for (; d < nd; ++d) {
      for (std::size_t k = 0; k < N; ++k) p[k] += st[k][d];
      if (++idx[d] < sh[d]) break;
      for (std::size_t k = 0; k < N; ++k) p[k] -= st[k][d] * sh[d];
      idx[d] = 0;
    }
    if (d == nd) return;
  }
}

// The slice [lo, hi) of dimension d of the nest: shrinks the nest and moves the pointers.
template <std::size_t N>
LoopNest<N> slice_loops(LoopNest<N> nest, int d, std::int64_t lo, std::int64_t hi, std::array<char*, N>& p) {
  for (std::size_t k = 0; k < N; ++k) p[k] += lo * nest.strides[k][d];
  nest.shape[d] = hi - lo;
  return nest;
}

// strides are in bytes. inner(ptrs, inner_strides, n) processes n elements.
template <std::size_t N, class Inner>
void strided_loop(const Shape& shape, const std::array<Strides, N>& strides, std::array<char*, N> p, Inner&& inner) {
  run_loops(merge_loops(shape, strides), p, inner);
}

}  // namespace tenax::cpu
