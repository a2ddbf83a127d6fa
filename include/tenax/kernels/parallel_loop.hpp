#pragma once
// Strided loop nests spread over the worker pool by cutting one dimension into slices. Used by
// kernels whose slices write disjoint outputs (elementwise maps, copies, reductions cut along a
// kept dimension), so the result does not depend on the number of slices.
#include <algorithm>
#include <array>
#include <cstdint>

#include "tenax/kernels/parallel.hpp"
#include "tenax/kernels/strided_loop.hpp"

namespace tenax::cpu {

// The dimension to cut among those `usable(d)` allows: the outermost one with at least `parts`
// entries, else the largest; -1 when none is usable.
template <std::size_t N, class Usable>
int cut_dimension(const LoopNest<N>& nest, std::int64_t parts, Usable&& usable) {
  int best = -1;
  for (int d = nest.shape.size() - 1; d >= 0; --d) {
    if (!usable(d)) continue;
    if (nest.shape[d] >= parts) return d;
    if (best < 0 || nest.shape[d] > nest.shape[best]) best = d;
  }
  return best;
}

// Runs the nest as `parts` slices of dimension d on the pool.
template <std::size_t N, class Inner>
void run_loops_sliced(const LoopNest<N>& nest, std::array<char*, N> p, int d, std::int64_t parts, Inner& inner) {
  const std::int64_t e = nest.shape[d];
  parts = std::min(parts, e);
  parallel_for(parts, [&](std::int64_t c) {
    std::array<char*, N> q = p;
    run_loops(slice_loops(nest, d, e * c / parts, e * (c + 1) / parts, q), q, inner);
  });
}

// How many slices a nest of `numel` elements is worth with `threads` workers: a few per worker
// (so that a worker the OS delays leaves its slices to the others), each of kParallelGrain at least.
inline std::int64_t useful_parts(std::int64_t numel, int threads) {
  if (threads <= 1 || numel < kParallelMinElements) return 1;
  return std::min<std::int64_t>(std::int64_t{4} * threads, numel / kParallelGrain);
}

// Runs a merged nest whose every output element is written by one iteration only, spread over
// the pool when it has min_elements elements or more.
template <std::size_t N, class Inner>
void parallel_run_loops(const LoopNest<N>& nest, std::array<char*, N> p, Inner&& inner,
                        std::int64_t min_elements = kParallelMinElements) {
  if (nest.empty) return;
  const std::int64_t numel = nest.numel();
  const std::int64_t parts = numel < min_elements ? 1 : useful_parts(numel, parallel_threads());
  if (parts <= 1) return run_loops(nest, p, inner);
  run_loops_sliced(nest, p, cut_dimension(nest, parts, [](int) { return true; }), parts, inner);
}

// strided_loop for kernels whose every output element is written by one iteration only.
template <std::size_t N, class Inner>
void parallel_strided_loop(const Shape& shape, const std::array<Strides, N>& strides, std::array<char*, N> p,
                           Inner&& inner) {
  parallel_run_loops(merge_loops(shape, strides), p, inner);
}

}  // namespace tenax::cpu
