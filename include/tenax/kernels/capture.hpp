#pragma once
// Kernel capture for prepared programs (trace/program.hpp). While a program's first run executes a
// step, a KernelCapture is installed on the thread; the CPU drivers then record, besides running,
// the kernel they ran: a closure fixed by the shapes and strides of this call. detail::map,
// copy_into and detail::reduce record the functor and the merged loop nest; matmul its gemm calls
// (ops/linalg/matmul.hpp); tril/triu, embed, solve_triangular, permute_rows and the permutation
// helpers their loops (detail::record_kernel); the CPU linalg factorizations and solves (qr, eigh,
// svd, lu_factor, cholesky, solve, slogdet, det, lu_solve) their whole fused forward, writing several outputs
// and keeping their scratch (work copies, tau) in the closure (detail::record_kernel_n). Later
// runs call the closure on the outputs' and operands' data pointers and skip the op's shape logic
// (broadcasting, stride merging, output allocation). The eager path runs the same closure code,
// so results are bit-identical.
#include <array>
#include <cstdint>
#include <functional>

#include "tenax/core/shared_state.hpp"
#include "tenax/core/tensor_impl.hpp"

namespace tenax::detail {

// Pointers of one kernel call: the output buffers' first elements ([0] for a one-output kernel;
// nullptr for an output the op leaves undefined), then the operands' data().
using KernelFn = std::function<void(char* const* ptrs)>;
// A map's element loop (kernels/map.hpp, map_line): n elements from p (output first) with byte
// steps s. A prepared program runs a chain of maps as one loop of such calls over blocks.
using MapLineFn = std::function<void(char* const* p, const std::int64_t* s, std::int64_t n)>;

// A full sum of one contiguous run of n inputs as the CPU reduction computes it (kernels/reduce.hpp,
// SumSteps), in pieces, so that a prepared program's fused chain of maps can end with it: a run of
// fewer than `lanes_from` inputs folds in order from 0 (`small`); a longer one accumulates
// kSumLanes interleaved lanes over its groups of kSumLanes inputs (`start`, then `feed` with a
// multiple of kSumLanes inputs), then folds the lanes pairwise and adds its last n % kSumLanes
// inputs in order (`end`, the result 0 + that). From `block_from` inputs on, the run is cut into
// runs of `block` inputs, each summed so, and their partial sums fold in order from 0 (`fold`).
struct SumPieces {
  void (*small)(char* out, const char* x, std::int64_t n) = nullptr;
  void (*start)(char* lanes) = nullptr;
  void (*feed)(char* lanes, const char* x, std::int64_t n) = nullptr;
  void (*end)(char* out, char* lanes, const char* tail, std::int64_t n_tail) = nullptr;
  void (*fold)(char* out, const char* partials, std::int64_t n) = nullptr;
  std::int64_t lanes_from = 0, block_from = 0, block = 0;
  std::int64_t numel = 0;      // the inputs of the captured call
  std::int64_t elem_size = 0;  // bytes per input (and per output)
};

inline constexpr int kMaxKernelOperands = 5;
inline constexpr int kMaxKernelOutputs = 5;

struct KernelCapture {
  int kernels = 0;  // driver calls seen during the step (a step is prepared only with exactly 1)
  KernelFn fn;
  // The bodies the kernel wrote (null: an undefined output) and the bodies it read, held so that
  // their addresses stay unique until the program has compared them with its values.
  std::array<ImplPtr, kMaxKernelOutputs> outs{};
  int n_outs = 0;
  std::array<ImplPtr, kMaxKernelOperands> operands{};
  int n_operands = 0;
  // For a map (detail::map's CPU kernel) only: its element loop, the launch's shape and its byte
  // strides over that shape (the output's first).
  MapLineFn line;
  Shape line_shape;
  std::array<Strides, kMaxKernelOperands + 1> line_strides{};
  // For a full sum of a contiguous run (detail::reduce's CPU kernel) only: its pieces.
  SumPieces sum;

  void record_n(KernelFn f, const TensorImpl* const* o, int no, const TensorImpl* const* in, int ni) {
    if (kernels++ != 0) return;
    fn = std::move(f);
    n_outs = no;
    for (int j = 0; j < no; ++j) outs[static_cast<std::size_t>(j)] = ImplPtr(const_cast<TensorImpl*>(o[j]));
    n_operands = ni;
    for (int j = 0; j < ni; ++j) operands[static_cast<std::size_t>(j)] = ImplPtr(const_cast<TensorImpl*>(in[j]));
  }
  // After record_n of the same kernel (so only for a step's first kernel).
  void record_line(MapLineFn f, const Shape& shape, const Strides* strides, int n) {
    if (kernels != 1) return;
    line = std::move(f);
    line_shape = shape;
    for (int j = 0; j < n; ++j) line_strides[static_cast<std::size_t>(j)] = strides[j];
  }
  // After record of the same kernel (so only for a step's first kernel).
  void record_sum(const SumPieces& p) {
    if (kernels == 1) sum = p;
  }
  template <class... In>
  void record(KernelFn f, const TensorImpl* o, const In*... in) {
    static_assert(sizeof...(In) <= kMaxKernelOperands);
    const TensorImpl* const ins[] = {in..., nullptr};
    record_n(std::move(f), &o, 1, ins, static_cast<int>(sizeof...(In)));
  }
};

// The capture active on this thread (nullptr: none; the common case, one load per driver call).
TENAX_SHARED_STATE inline KernelCapture*& kernel_capture() {
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
