#pragma once
// The driver of kernels that run along one axis, one line at a time: scans (cumsum, cumprod),
// softmax and log_softmax, and arg-reductions (argmax, argmin). A kernel slot per functor and
// dtype pair, one entry per device kind (as MapKernel and ReduceKernel): the CPU's loops over the
// lines, spread over the pool in contiguous blocks of lines when large; the CUDA backend's runs
// one thread per line (cuda/src/scan.cu). Each line is computed sequentially by one functor call,
// so the result does not depend on the thread count or the device's schedule.
#include <algorithm>
#include <cstdint>
#include <string_view>

#include "tenax/core/shared_state.hpp"
#include "tenax/core/tensor.hpp"
#include "tenax/kernels/capture.hpp"
#include "tenax/kernels/line_loop.hpp"
#include "tenax/kernels/parallel_loop.hpp"
#include "tenax/ops/line_functors.hpp"

namespace tenax::detail {

// One launch: the loop, the device ordinal, and the bodies written and read (for the capture).
struct LineLaunch {
  int device;
  const LineLoop& loop;
  const TensorImpl* out;
  const TensorImpl* in;
};

// A device kind's kernel, or null where it has none.
template <class Out, class In, class F>
using LineFn = void (*)(const F& f, const LineLaunch& l);

// Every line of l through f on the CPU (what a prepared program's step runs again).
template <class Out, class In, class F>
void run_lines_cpu(const F& f, const LineLoop& l) {
  const std::int64_t parts =
      std::min(l.lines, cpu::useful_parts(l.lines * std::max<std::int64_t>(l.len, 1), cpu::parallel_threads()));
  if (parts <= 1) {
    for (std::int64_t j = 0; j < l.lines; ++j) run_line<Out, In>(f, l, j);
    return;
  }
  cpu::parallel_for(parts, [&](std::int64_t c) {
    for (std::int64_t j = c * l.lines / parts; j < (c + 1) * l.lines / parts; ++j) run_line<Out, In>(f, l, j);
  });
}

// The CPU's entry: recorded for a prepared program's first run (kernels/capture.hpp), then run.
template <class Out, class In, class F>
void cpu_lines(const F& f, const LineLaunch& l) {
  if (KernelCapture* c = kernel_capture()) [[unlikely]]
    c->record(
        [f, loop = l.loop](char* const* ptrs) {
          LineLoop at = loop;
          at.out = ptrs[0];
          at.in = ptrs[1];
          run_lines_cpu<Out, In, F>(f, at);
        },
        l.out, l.in);
  run_lines_cpu<Out, In, F>(f, l.loop);
}

template <class Out, class In, class F>
struct TENAX_SHARED_STATE LineKernel {
  static inline LineFn<Out, In, F> on[kDeviceKinds] = {&cpu_lines<Out, In, F>};
};

// f over every line of x along `axis` into a fresh contiguous tensor of x's shape (keep_len) or
// of x's shape with that axis of size 1 (one result per line).
template <class Out, class In, class F>
Tensor<Out> along_lines(std::string_view op, const Tensor<In>& x, int axis, const F& f, bool keep_len) {
  const Device dev = x.device();
  const LineFn<Out, In, F> fn = LineKernel<Out, In, F>::on[kind_index(dev)];
  if (fn == nullptr) [[unlikely]]
    fail(op, "no kernel for device ", dev.str(), " (", dtype_traits<In>::name, " input)");
  Shape shape = x.shape();
  if (!keep_len) shape[axis] = 1;
  Tensor<Out> out = Tensor<Out>::empty(shape, dev);
  LineLoop l;
  l.lines = 1;
  for (int d = 0; d < x.dim(); ++d) {
    if (d == axis || x.shape()[d] == 1) continue;
    l.shape[l.rank] = x.shape()[d];
    l.in_stride[l.rank] = x.strides()[d];
    l.out_stride[l.rank++] = out.strides()[d];
    l.lines *= x.shape()[d];
  }
  l.len = x.shape()[axis];
  l.in_step = x.strides()[axis];
  l.out_step = keep_len ? out.strides()[axis] : 0;
  if (l.lines == 0 || l.len == 0) return out;
  l.out = static_cast<char*>(out.impl()->data());
  l.in = static_cast<const char*>(x.impl()->data());
  fn(f, LineLaunch{dev.index, l, out.impl().get(), x.impl().get()});
  return out;
}

}  // namespace tenax::detail
