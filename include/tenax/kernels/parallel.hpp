#pragma once
// Parallel loops over tenax's worker pool (src/cpu/thread_pool.cpp).
//
// Determinism: parallel_for(n, f) runs f(c) exactly once for every c, on some thread; the pool
// hands out contiguous pieces of [0, n) to whichever thread is free (the caller works too), so
// which thread runs c depends on scheduling. Kernels therefore only split work so that no result
// depends on who computes it: slices with disjoint outputs, or blocks fixed by the shape alone
// whose partial results are combined in block order (kernels/reduce.hpp). Any thread count, and
// any schedule, gives the same bits.
#include <cstdint>
#include <type_traits>

namespace tenax::cpu {

// Below this many elements an elementwise kernel, copy or reduction runs on the calling thread.
// Measured (bench_threads split_add, 2 cores, workers awake): a 2-way split of a float64 add wins
// from ~2k elements (0.45 vs 0.50 us) and gives 1.45x at 16k; the margin covers waking a sleeping
// worker (a futex wake, a few microseconds, paid while the caller already works).
inline constexpr std::int64_t kParallelMinElements = std::int64_t{1} << 14;
// An elementwise map runs on the calling thread below this much work: its elements times their
// cost, 1 for a cheap functor (an add, a compare, a copy) and kCostlyElement for a transcendental
// one (kernels/map.hpp, map_weight). Measured (bench_threads, 2 CPUs of a virtual machine): at two
// threads an add of 16384 elements took 0.46x the speed of one thread and 65536 1.18x, while exp
// of 16384 gained 1.80x: a cheap map needs 65536 elements, a costly one keeps kParallelMinElements.
inline constexpr std::int64_t kParallelMinMapWork = std::int64_t{1} << 16;
inline constexpr std::int64_t kCostlyElement = kParallelMinMapWork / kParallelMinElements;
// Each slice of an elementwise kernel has at least this many elements.
inline constexpr std::int64_t kParallelGrain = std::int64_t{1} << 13;
// A batch of matrices is split across threads (for_each_matrix_parallel, batched matmul) when
// each matrix has at most this many elements (n <= 96: the provider runs such matrices on one
// thread) and the batch's flop estimate is at least kParallelMinBatchWork.
inline constexpr std::int64_t kParallelMaxMatrixElements = 96 * 96;
inline constexpr std::int64_t kParallelMinBatchWork = std::int64_t{1} << 15;
// OpenBLAS runs a gemm on the calling thread up to m n k = 64^3 (SMP_THRESHOLD_MIN x
// GEMM_MULTITHREAD_THRESHOLD); batched products larger than that are left to the provider.
inline constexpr std::int64_t kProviderSerialGemmWork = std::int64_t{64} * 64 * 64;

// The number of workers a parallel loop may use now (1 inside a parallel region, since nested
// loops run serially on their worker).
int parallel_threads();
// True on a thread that is running chunks of a parallel loop.
bool in_parallel_region();

namespace detail {
using ChunkFn = void (*)(void* ctx, std::int64_t begin, std::int64_t end);
// Runs fn(ctx, b, e) on disjoint contiguous ranges covering [0, n); rethrows the exception of the
// lowest range that threw (the one a serial loop would have thrown).
void run_chunks(std::int64_t n, ChunkFn fn, void* ctx);
}  // namespace detail

// f(c) for every c in [0, n), spread over the pool; serial in order when only one worker is
// available.
template <class F>
void parallel_for(std::int64_t n, F&& f) {
  if (n <= 0) return;
  if (n == 1 || parallel_threads() <= 1) {
    for (std::int64_t c = 0; c < n; ++c) f(c);
    return;
  }
  using Fn = std::remove_reference_t<F>;
  detail::run_chunks(
      n,
      [](void* ctx, std::int64_t b, std::int64_t e) {
        Fn& g = *static_cast<Fn*>(ctx);
        for (std::int64_t c = b; c < e; ++c) g(c);
      },
      const_cast<void*>(static_cast<const void*>(&f)));
}

}  // namespace tenax::cpu
