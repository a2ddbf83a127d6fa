#pragma once
// The generic reduction driver: folds the chosen dimensions of x into an output with those
// dimensions of size 1.
//
// Order of combination, which fixes the bits of the result (for any thread count):
// - below kParallelMinElements inputs, or when the output has at least kMinSplitOutputs entries,
//   each output folds its inputs in memory order of the input, starting from init (a sum over a
//   contiguous run of its inputs adds them in kSumLanes interleaved lanes, folded pairwise, then
//   into the output: independent additions instead of one dependency chain); large
//   reductions of this kind are cut along a kept dimension, so each output stays on one worker;
// - otherwise (a reduction to a handful of values over many inputs) the outermost reduced
//   dimension is cut into blocks of about kReduceBlock inputs, fixed by the shape alone; each
//   block folds in memory order from init into its own partial, and the partials are folded in
//   block order. Blocks are spread over the pool.
#include <array>
#include <bitset>
#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <new>
#include <string_view>
#include <type_traits>

#include "tenax/core/tensor.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/kernels/parallel_loop.hpp"

namespace tenax::detail {

using AxisMask = std::bitset<kMaxRank>;

// Outputs below which a large reduction is blocked (see above), and the block size in inputs.
inline constexpr std::int64_t kMinSplitOutputs = 16;
inline constexpr std::int64_t kReduceBlock = std::int64_t{1} << 13;

// Shape of x with the masked dimensions set to 1 (keepdim) or removed.
inline Shape reduced_shape(const Shape& s, AxisMask mask, bool keepdim) {
  Shape r;
  for (int d = 0; d < s.size(); ++d) {
    if (!mask[d])
      r.push_back(s[d]);
    else if (keepdim)
      r.push_back(1);
  }
  return r;
}

// The lanes of a contiguous sum run (see the top of this file).
inline constexpr std::int64_t kSumLanes = 8;

// The partial sums of a contiguous run, in the order every CPU sum of one adds (lane_sum below,
// the pieces a fused chain's sum runs, matrix_exp's column norms): each group of kSumLanes inputs
// into kSumLanes interleaved lanes, then the lanes folded pairwise, then the tail in order.
template <class R>
struct SumLanes {
  R a[kSumLanes] = {};
  // Adds f(x[i]) for i in [0, n), n a multiple of kSumLanes.
  template <class T, class F = std::identity>
  void add(const T* x, std::int64_t n, F f = {}) {
    for (std::int64_t i = 0; i < n; i += kSumLanes)
      for (std::int64_t l = 0; l < kSumLanes; ++l) a[l] += f(x[i + l]);
  }
  // The lanes folded pairwise, then f(tail[i]) for i in [0, n_tail) added in order.
  template <class T, class F = std::identity>
  R finish(const T* tail, std::int64_t n_tail, F f = {}) {
    for (std::int64_t w = kSumLanes / 2; w > 0; w /= 2)
      for (std::int64_t l = 0; l < w; ++l) a[l] += a[l + w];
    for (std::int64_t i = 0; i < n_tail; ++i) a[0] += f(tail[i]);
    return a[0];
  }
};

// sum of x[0..n) in kSumLanes interleaved lanes, folded pairwise, then the tail in order.
template <class T>
T lane_sum(const T* x, std::int64_t n) {
  SumLanes<T> s;
  const std::int64_t m = n - n % kSumLanes;
  s.add(x, m);
  return s.finish(x + m, n - m);
}

// The pieces of a full sum of a contiguous run (kernels/capture.hpp, SumPieces), each doing
// exactly what run_reduce_cpu does for such a sum (ReduceInner's lane path, lane_sum, the
// blocked partials), so a fused chain that ends with them gives the reduction's bits.
template <class T>
struct SumSteps {
  static void small(char* out, const char* x, std::int64_t n) {
    T acc = T(0);
    for (std::int64_t i = 0; i < n; ++i) acc = acc + reinterpret_cast<const T*>(x)[i];
    *reinterpret_cast<T*>(out) = acc;
  }
  static void start(char* lanes) { new (lanes) SumLanes<T>(); }
  static void feed(char* lanes, const char* x, std::int64_t n) {
    reinterpret_cast<SumLanes<T>*>(lanes)->add(reinterpret_cast<const T*>(x), n);
  }
  static void end(char* out, char* lanes, const char* tail, std::int64_t n_tail) {
    *reinterpret_cast<T*>(out) =
        T(0) + reinterpret_cast<SumLanes<T>*>(lanes)->finish(reinterpret_cast<const T*>(tail), n_tail);
  }
  static void fold(char* out, const char* partials, std::int64_t n) {
    T o = T(0);
    for (std::int64_t b = 0; b < n; ++b) o = o + reinterpret_cast<const T*>(partials)[b];
    *reinterpret_cast<T*>(out) = o;
  }
};

// The inner loop of a reduction: operand 0 the output (stride 0 when reduced), 1 the input.
template <class Out, class In, class Combine>
struct ReduceInner {
  Combine& combine;
  void operator()(std::array<char*, 2> q, const std::array<std::int64_t, 2>& s, std::int64_t n) const {
    if (s[0] == 0) {
      Out acc = *reinterpret_cast<Out*>(q[0]);
      if constexpr (std::is_same_v<std::remove_cv_t<Combine>, fn::Add> && std::is_same_v<Out, In> &&
                    dtype_traits<Out>::is_floating) {
        if (s[1] == static_cast<std::int64_t>(sizeof(In)) && n >= 2 * kSumLanes) {
          *reinterpret_cast<Out*>(q[0]) = acc + lane_sum(reinterpret_cast<const In*>(q[1]), n);
          return;
        }
      }
      for (std::int64_t i = 0; i < n; ++i) acc = combine(acc, *reinterpret_cast<const In*>(q[1] + i * s[1]));
      *reinterpret_cast<Out*>(q[0]) = acc;
    } else if (s[0] == static_cast<std::int64_t>(sizeof(Out)) && s[1] == static_cast<std::int64_t>(sizeof(In))) {
      // Outputs side by side, each folding its next input (the same fold as below, vectorised).
      Out* o = reinterpret_cast<Out*>(q[0]);
      const In* x = reinterpret_cast<const In*>(q[1]);
      for (std::int64_t i = 0; i < n; ++i) o[i] = combine(o[i], x[i]);
    } else {
      for (std::int64_t i = 0; i < n; ++i) {
        Out& o = *reinterpret_cast<Out*>(q[0] + i * s[0]);
        o = combine(o, *reinterpret_cast<const In*>(q[1] + i * s[1]));
      }
    }
  }
};

// The CPU kernel of a reduction over a merged nest (operand 0 the contiguous output of `outputs`
// entries, with stride 0 along the reduced dimensions): sets the outputs to init and folds. What
// detail::reduce runs, and what a prepared program's step runs later from the captured nest.
template <class Out, class In, class Combine>
void run_reduce_cpu(Combine combine, Out init, const cpu::LoopNest<2>& nest, std::int64_t outputs,
                    std::array<char*, 2> p) {
  Out* o = reinterpret_cast<Out*>(p[0]);
  for (std::int64_t j = 0; j < outputs; ++j) o[j] = init;
  ReduceInner<Out, In, Combine> inner{combine};
  if (nest.empty) return;
  const std::int64_t numel = nest.numel();
  const auto kept = [&](int d) { return nest.strides[0][d] != 0; };
  if (numel < cpu::kParallelMinElements || nest.shape.size() == 0 || !std::is_same_v<In, Out>) {
    cpu::run_loops(nest, p, inner);
  } else if (outputs >= kMinSplitOutputs) {
    std::int64_t parts = cpu::useful_parts(numel, cpu::parallel_threads());
    const int d = parts > 1 ? cpu::cut_dimension(nest, parts, kept) : -1;
    // Cut along the input's contiguous dimension, the slices are runs of each reduced row: one per
    // worker keeps those runs long (a slice per page of a row, not several short runs per page,
    // each on a page the other workers also walk: 2 threads ran the 1024 x 1024 row sums 0.6 x as
    // fast as one with 8 slices).
    if (d == 0 && nest.strides[1][0] == static_cast<std::int64_t>(sizeof(In)))
      parts = std::min<std::int64_t>(parts, cpu::parallel_threads());
    if (d < 0)
      cpu::run_loops(nest, p, inner);
    else
      cpu::run_loops_sliced(nest, p, d, parts, inner);
  } else {
    int d = nest.shape.size() - 1;  // the outermost reduced dimension
    while (kept(d)) --d;
    const std::int64_t e = nest.shape[d], per_row = numel / e;
    const std::int64_t rows = std::max<std::int64_t>(1, (kReduceBlock + per_row - 1) / per_row);
    const std::int64_t blocks = (e + rows - 1) / rows;
    Tensor<Out> partial = Tensor<Out>::full({outputs, blocks}, init);
    char* pbase = static_cast<char*>(partial.impl()->data());
    const std::int64_t pbytes = outputs * static_cast<std::int64_t>(sizeof(Out));
    cpu::parallel_for(blocks, [&](std::int64_t b) {
      std::array<char*, 2> q{pbase + b * pbytes, p[1]};
      cpu::run_loops(cpu::slice_loops(nest, d, b * rows, std::min(e, (b + 1) * rows), q), q, inner);
    });
    const Out* pp = partial.data();
    for (std::int64_t j = 0; j < outputs; ++j)
      for (std::int64_t b = 0; b < blocks; ++b)
        if constexpr (std::is_same_v<In, Out>) o[j] = combine(o[j], pp[j + b * outputs]);
  }
}

// One reduction launch: the output (keepdim-shaped, contiguous), the input, and the reduced dimensions.
template <class Out, class In>
struct ReduceLaunch {
  const Tensor<Out>& out;
  const Tensor<In>& x;
  AxisMask mask;
};

// A device kind's reduction kernel, or null where it has none.
template <class Out, class In, class Combine>
using ReduceFn = void (*)(Combine combine, Out init, const ReduceLaunch<Out, In>& l);

// The CPU's reduction kernel: the merged nest, recorded for a prepared program's first run, then run.
template <class Out, class In, class Combine>
void cpu_reduce(Combine combine, Out init, const ReduceLaunch<Out, In>& l) {
  Strides os = byte_strides(*l.out.impl());
  for (int d = 0; d < l.x.dim(); ++d)
    if (l.mask[d]) os[d] = 0;
  const cpu::LoopNest<2> nest = cpu::merge_loops<2>(l.x.shape(), {os, byte_strides(*l.x.impl())});
  const std::int64_t outputs = l.out.numel();
  if (KernelCapture* c = kernel_capture()) [[unlikely]] {
    constexpr bool float_sum =
        std::is_same_v<std::remove_cv_t<Combine>, fn::Add> && std::is_same_v<Out, In> && dtype_traits<Out>::is_floating;
    [[maybe_unused]] bool full_sum = false;  // a floating sum of a contiguous run from 0
    bool recorded = false;
    if constexpr (float_sum) {
      full_sum = outputs == 1 && !nest.empty && nest.shape.size() == 1 && nest.strides[0][0] == 0 &&
                 nest.strides[1][0] == static_cast<std::int64_t>(sizeof(In)) && init == Out(0) &&
                 !std::signbit(std::real(init));
      // Below the parallel size: the steps run_reduce_cpu takes for it (0, then the inputs in
      // order, or 0 + their lane sum from 2 kSumLanes inputs on), without its loop nest.
      if (full_sum && nest.numel() < cpu::kParallelMinElements) {
        c->record(
            [combine, n = nest.numel()](char* const* ptrs) {
              const In* x = reinterpret_cast<const In*>(ptrs[1]);
              Out acc = Out(0);
              if (n >= 2 * kSumLanes)
                acc = acc + lane_sum(x, n);
              else
                for (std::int64_t i = 0; i < n; ++i) acc = combine(acc, x[i]);
              *reinterpret_cast<Out*>(ptrs[0]) = acc;
            },
            l.out.impl().get(), l.x.impl().get());
        recorded = true;
      }
    }
    if (!recorded)
      c->record(
          [combine, init, nest, outputs](char* const* ptrs) {
            run_reduce_cpu<Out, In, Combine>(combine, init, nest, outputs, {ptrs[0], ptrs[1]});
          },
          l.out.impl().get(), l.x.impl().get());
    // A full sum's pieces, for a fused chain that ends with it.
    if constexpr (float_sum)
      if (full_sum)
        c->record_sum({&SumSteps<Out>::small, &SumSteps<Out>::start, &SumSteps<Out>::feed, &SumSteps<Out>::end,
                       &SumSteps<Out>::fold, 2 * kSumLanes, cpu::kParallelMinElements, kReduceBlock, nest.numel(),
                       static_cast<std::int64_t>(sizeof(Out))});
  }
  run_reduce_cpu<Out, In, Combine>(combine, init, nest, outputs,
                                   {static_cast<char*>(l.out.impl()->data()), static_cast<char*>(l.x.impl()->data())});
}

// The kernel slot of one combine and dtype pair, one entry per device kind (as MapKernel).
template <class Out, class In, class Combine>
struct TENAX_SHARED_STATE ReduceKernel {
  static inline ReduceFn<Out, In, Combine> on[kDeviceKinds] = {&cpu_reduce<Out, In, Combine>};
};

// out[j] = combine(out[j], x[i]) over the masked dimensions, starting from init; returns the
// keepdim-shaped result. For blocked reductions combine(Out, Out) must fold two partials.
template <class Out, class In, class Combine>
Tensor<Out> reduce(std::string_view op, const Tensor<In>& x, AxisMask mask, Out init, Combine combine) {
  const Device dev = x.device();
  const ReduceFn<Out, In, Combine> fn = ReduceKernel<Out, In, Combine>::on[kind_index(dev)];
  if (fn == nullptr) [[unlikely]]
    fail(op, "no kernel for device ", dev.str(), " (", dtype_traits<In>::name, " input)");
  Tensor<Out> out = Tensor<Out>::empty(reduced_shape(x.shape(), mask, true), dev);
  fn(combine, init, ReduceLaunch<Out, In>{out, x, mask});
  return out;
}

}  // namespace tenax::detail
