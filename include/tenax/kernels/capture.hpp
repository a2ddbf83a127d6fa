#pragma once
// Kernel capture for prepared programs (trace/program.hpp). While a program's first run executes a
// step, a KernelCapture is installed on the thread; the CPU drivers then record, besides running,
// the kernel they ran: a closure fixed by the shapes and strides of this call. detail::map,
// copy_into and detail::reduce record the functor and the merged loop nest; matmul its gemm calls
// (ops/linalg/matmul.hpp); tril/triu, embed, solve_triangular, permute_rows and the permutation
// helpers their loops (detail::record_kernel). Later runs call the closure on the operands' data
// pointers and skip the op's shape logic (broadcasting, stride merging, output allocation). The
// eager path runs the same closure code, so results are bit-identical.
#include <array>
#include <cstdint>
#include <functional>

#include "tenax/core/tensor_impl.hpp"

namespace tenax::detail {

// Pointers of one kernel call: [0] the output buffer's first element, [1..] the operands' data().
using KernelFn = std::function<void(char* const* ptrs)>;

inline constexpr int kMaxKernelOperands = 3;

struct KernelCapture {
  int kernels = 0;  // driver calls seen during the step (a step is prepared only with exactly 1)
  KernelFn fn;
  // The body the kernel wrote and the bodies it read, held so that their addresses stay unique
  // until the program has compared them with its values.
  ImplPtr out;
  std::array<ImplPtr, kMaxKernelOperands> operands{};
  int n_operands = 0;

  template <class... In>
  void record(KernelFn f, const TensorImpl* o, const In*... in) {
    static_assert(sizeof...(In) <= kMaxKernelOperands);
    if (kernels++ != 0) return;
    fn = std::move(f);
    out = ImplPtr(const_cast<TensorImpl*>(o));
    operands = {ImplPtr(const_cast<TensorImpl*>(in))...};
    n_operands = static_cast<int>(sizeof...(In));
  }
};

// The capture active on this thread (nullptr: none; the common case, one load per driver call).
inline KernelCapture*& kernel_capture() {
  thread_local KernelCapture* c = nullptr;
  return c;
}

class CaptureScope {
 public:
  explicit CaptureScope(KernelCapture* c) : prev_(kernel_capture()) { kernel_capture() = c; }
  ~CaptureScope() { kernel_capture() = prev_; }
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;

 private:
  KernelCapture* prev_;
};

}  // namespace tenax::detail
