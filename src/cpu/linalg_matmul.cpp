// The CPU's matmul (ops/linalg/matmul.hpp): gemm per product of the batch (one gemm for one A times
// a batch of B that lie one after another), many small products spread over the worker pool; one
// kernel, which a prepared program captures (kernels/capture.hpp).
// Transposed views reach BLAS as a transpose flag; an operand whose layout gemm cannot read (a
// broadcast or otherwise strided view) is copied into scratch inside the kernel, so that a prepared
// run repeats the copy.
#include <algorithm>
#include <climits>
#include <functional>
#include <vector>

#include "cpu_linalg.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/kernels/parallel.hpp"
#include "tenax/ops/linalg/matmul.hpp"

namespace tenax::detail {
namespace {

// The CPU gemm calls of one matmul, from the operands' first elements (p[0] the output, p[1] a,
// p[2] b): what Matmul::forward runs, and what a prepared program's step runs later
// (kernels/capture.hpp).
// An operand whose layout gemm cannot read (a broadcast or otherwise strided view) is first copied
// into a contiguous scratch buffer, which the batch owns.
struct GemmBatch {
  GemmOperand oa, ob;
  std::int64_t m, n, k, nb;
  bool parallel;
  BatchOffsets offa, offb;
  ImplPtr scratch_a, scratch_b;                      // null: the operand is read in place
  std::function<void(char*, char*)> copy_a, copy_b;  // operand -> scratch
};

template <class T>
void run_gemms(const GemmBatch& g, char* const* p) {
  T* o = reinterpret_cast<T*>(p[0]);
  if (g.scratch_a) g.copy_a(static_cast<char*>(g.scratch_a->data()), p[1]);
  if (g.scratch_b) g.copy_b(static_cast<char*>(g.scratch_b->data()), p[2]);
  const T* A = reinterpret_cast<const T*>(g.scratch_a ? g.scratch_a->data() : p[1]);
  const T* B = reinterpret_cast<const T*>(g.scratch_b ? g.scratch_b->data() : p[2]);
  auto one = [&](std::int64_t i) {
    cpu::gemm<T>(g.oa.trans, g.ob.trans, g.m, g.n, g.k, T(1), A + g.offa[static_cast<std::size_t>(i)], g.oa.ld,
                 B + g.offb[static_cast<std::size_t>(i)], g.ob.ld, T(0), o + i * g.m * g.n, g.m);
  };
  if (g.parallel)
    cpu::parallel_for(g.nb, one);
  else
    for (std::int64_t i = 0; i < g.nb; ++i) one(i);
}

// Whether the batch of products is one gemm: one A (broadcast over the batch) times B_i that lie one
// after another, column-major, as the columns of one k x (n nb) matrix; the outputs lie so too.
// (Batched tangents meet this: jacfwd's directions are B's trailing dimension, ad/apply.hpp.)
bool one_product(const BatchOffsets& offa, const BatchOffsets& offb, const GemmOperand& ob, std::int64_t k,
                 std::int64_t n) {
  const std::size_t nb = offa.size();
  if (nb < 2 || ob.trans != cpu::Trans::N || ob.ld != k || static_cast<std::int64_t>(nb) * n > INT_MAX) return false;
  for (std::size_t i = 1; i < nb; ++i)
    if (offa[i] != offa[0] || offb[i] != offb[0] + static_cast<std::int64_t>(i) * k * n) return false;
  return true;
}

}  // namespace

template <class T>
void CpuLinalg<T>::matmul_into(const Tensor<T>& out, const Tensor<T>& a_in, const Tensor<T>& b_in,
                               const Shape& batch) const {
  const std::int64_t m = a_in.shape()[0], k = a_in.shape()[1], n = b_in.shape()[1];
  GemmOperand oa = gemm_operand(m, k, a_in.strides()[0], a_in.strides()[1]);
  GemmOperand ob = gemm_operand(k, n, b_in.strides()[0], b_in.strides()[1]);
  const Tensor<T> a = oa.ok ? a_in : Tensor<T>::empty(a_in.shape());
  const Tensor<T> b = ob.ok ? b_in : Tensor<T>::empty(b_in.shape());
  if (!oa.ok) oa = gemm_operand(m, k, a.strides()[0], a.strides()[1]);
  if (!ob.ok) ob = gemm_operand(k, n, b.strides()[0], b.strides()[1]);
  // Batch offsets of a and b broadcast over the output batch shape.
  auto offa = batch_offsets(a, batch), offb = batch_offsets(b, batch);
  std::int64_t nb = static_cast<std::int64_t>(offa.size());
  std::int64_t n_cols = n;
  if (one_product(offa, offb, ob, k, n)) {  // A [B_0 B_1 ...] = [A B_0, A B_1, ...]: one gemm
    n_cols = n * nb;
    nb = 1;
    offa.resize(1);
    offb.resize(1);
  }
  // Many small products: one per worker at a time. OpenBLAS threads a gemm from m n k > 64^3
  // on; below that it runs on the calling thread, so workers do not oversubscribe the machine.
  const bool parallel = nb >= 2 && std::max({m * k, k * n, m * n}) <= cpu::kParallelMaxMatrixElements &&
                        m * n * k <= cpu::kProviderSerialGemmWork && nb * m * n * k >= cpu::kParallelMinBatchWork;
  GemmBatch g{oa, ob, m, n_cols, k, nb, parallel, std::move(offa), std::move(offb), {}, {}, {}, {}};
  if (a.impl() != a_in.impl()) {
    g.scratch_a = a.impl();
    g.copy_a = copy_kernel<T, T>(*a.impl(), *a_in.impl());
  }
  if (b.impl() != b_in.impl()) {
    g.scratch_b = b.impl();
    g.copy_b = copy_kernel<T, T>(*b.impl(), *b_in.impl());
  }
  if (KernelCapture* c = kernel_capture()) [[unlikely]]
    c->record([g](char* const* p) { run_gemms<T>(g, p); }, out.impl().get(), a_in.impl().get(), b_in.impl().get());
  char* const p[] = {static_cast<char*>(out.impl()->data()), static_cast<char*>(a_in.impl()->data()),
                     static_cast<char*>(b_in.impl()->data())};
  run_gemms<T>(g, p);
}

#define TENAX_CPU_MATMUL(T) \
  template void CpuLinalg<T>::matmul_into(const Tensor<T>&, const Tensor<T>&, const Tensor<T>&, const Shape&) const;
TENAX_CPU_LINALG_FOR_FLOATING(TENAX_CPU_MATMUL)

}  // namespace tenax::detail
