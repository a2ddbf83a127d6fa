#pragma once
// matmul: C = A B for m x k and k x n matrices with broadcast trailing batch dimensions, via gemm.
// Transposed views reach BLAS as a transpose flag, never as a copy.
#include <algorithm>
#include <climits>
#include <functional>

#include "tenax/ad/apply.hpp"
#include "tenax/backend/cpu_provider.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/kernels/parallel.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/linalg/common.hpp"

namespace tenax {
namespace detail {

// How gemm can read a strided m x n matrix view: as-is ('N', ld = stride 1) or transposed
// ('T', ld = stride 0), with a leading dimension that fits the providers' 32-bit int. Anything
// else needs a copy.
struct GemmOperand {
  cpu::Trans trans;
  std::int64_t ld;
  bool ok;
};

inline GemmOperand gemm_operand(std::int64_t rows, std::int64_t cols, std::int64_t s0, std::int64_t s1) {
  if ((s0 == 1 || rows <= 1) && s1 >= std::max<std::int64_t>(1, rows) && s1 <= INT_MAX)
    return {cpu::Trans::N, s1, true};
  if ((s1 == 1 || cols <= 1) && s0 >= std::max<std::int64_t>(1, cols) && s0 <= INT_MAX)
    return {cpu::Trans::T, s0, true};
  if (rows <= 1 && cols <= 1) return {cpu::Trans::N, 1, true};
  return {cpu::Trans::N, 0, false};
}

// The common step of batch offsets (0 for one matrix or a broadcast operand), or -1 when the
// offsets are not an arithmetic sequence.
inline std::int64_t uniform_step(const std::vector<std::int64_t>& off) {
  if (off.size() < 2) return 0;
  const std::int64_t s = off[1] - off[0];
  for (std::size_t i = 2; i < off.size(); ++i)
    if (off[i] - off[i - 1] != s) return -1;
  return s < 0 ? -1 : s;
}

// The CPU gemm calls of one matmul, from the operands' first elements (p[0] the output, p[1] a,
// p[2] b): what Matmul::forward runs, and what a prepared program's step runs later
// (kernels/capture.hpp).
// An operand whose layout gemm cannot read (a broadcast or otherwise strided view) is first copied
// into a contiguous scratch buffer, which the batch owns.
struct GemmBatch {
  GemmOperand oa, ob;
  std::int64_t m, n, k, nb;
  bool parallel;
  std::vector<std::int64_t> offa, offb;
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

// The batch of products on a device through its backend: one strided-batched call when both
// operands' batch offsets are uniform, else one call per product.
template <class T>
void gemm_on_device(const Tensor<T>& a, GemmOperand oa, const std::vector<std::int64_t>& offa, const Tensor<T>& b,
                    GemmOperand ob, const std::vector<std::int64_t>& offb, Tensor<T>& out, std::int64_t m,
                    std::int64_t n, std::int64_t k) {
  const BatchedLinalg<T>& be = linalg_backend<T>("matmul", out.device());
  const int dev = out.device().index;
  const std::int64_t sa = uniform_step(offa), sb = uniform_step(offb);
  const std::int64_t nb = static_cast<std::int64_t>(offa.size());
  if (sa >= 0 && sb >= 0) {
    be.gemm(dev, oa.trans, ob.trans, m, n, k, a.data() + offa[0], oa.ld, sa, b.data() + offb[0], ob.ld, sb,
            out.mutable_data(), m, m * n, nb);
    return;
  }
  for (std::int64_t i = 0; i < nb; ++i) {
    const auto u = static_cast<std::size_t>(i);
    be.gemm(dev, oa.trans, ob.trans, m, n, k, a.data() + offa[u], oa.ld, 0, b.data() + offb[u], ob.ld, 0,
            out.mutable_data() + i * m * n, m, 0, 1);
  }
}

}  // namespace detail

namespace ops {

struct Matmul {
  static constexpr const char* name = "matmul";
  static constexpr bool one_kernel = true;  // forward is one captured kernel call (kernels/capture.hpp)
  static constexpr bool saves_outputs = false;

  template <class T>
  Tensor<T> forward(const Tensor<T>& a_in, const Tensor<T>& b_in) const {
    detail::check_kernel_device(name, a_in.device());
    const std::int64_t m = a_in.shape()[0], k = a_in.shape()[1], n = b_in.shape()[1];
    const Shape batch =
        broadcast_shapes(detail::mat_batch_shape(a_in.shape()), detail::mat_batch_shape(b_in.shape()), name);
    const Shape os = detail::with_batch(m, n, batch);
    Tensor<T> out = Tensor<T>::empty(os, a_in.device());
    if (out.numel() == 0) return out;
    if (k == 0) return Tensor<T>::zeros(os, a_in.device());
    auto oa = detail::gemm_operand(m, k, a_in.strides()[0], a_in.strides()[1]);
    auto ob = detail::gemm_operand(k, n, b_in.strides()[0], b_in.strides()[1]);
    // On the CPU an unreadable operand is copied into scratch by run_gemms (so that a prepared
    // program's captured kernel repeats the copy); on a device, by clone.
    const bool on_cpu = out.device().is_cpu();
    Tensor<T> a = oa.ok ? a_in : on_cpu ? Tensor<T>::empty(a_in.shape()) : clone(a_in);
    Tensor<T> b = ob.ok ? b_in : on_cpu ? Tensor<T>::empty(b_in.shape()) : clone(b_in);
    if (!oa.ok) oa = detail::gemm_operand(m, k, a.strides()[0], a.strides()[1]);
    if (!ob.ok) ob = detail::gemm_operand(k, n, b.strides()[0], b.strides()[1]);
    // Batch offsets of a and b broadcast over the output batch shape.
    auto offa = detail::batch_offsets(a, batch), offb = detail::batch_offsets(b, batch);
    const std::int64_t nb = static_cast<std::int64_t>(offa.size());
    if (!on_cpu) {
      detail::gemm_on_device(a, oa, offa, b, ob, offb, out, m, n, k);
      return out;
    }
    // Many small products: one per worker at a time. OpenBLAS threads a gemm from m n k > 64^3
    // on; below that it runs on the calling thread, so workers do not oversubscribe the machine.
    const bool parallel = nb >= 2 && std::max({m * k, k * n, m * n}) <= cpu::kParallelMaxMatrixElements &&
                          m * n * k <= cpu::kProviderSerialGemmWork && nb * m * n * k >= cpu::kParallelMinBatchWork;
    detail::GemmBatch g{oa, ob, m, n, k, nb, parallel, std::move(offa), std::move(offb), {}, {}, {}, {}};
    if (a.impl() != a_in.impl()) {
      g.scratch_a = a.impl();
      g.copy_a = detail::copy_kernel<T, T>(*a.impl(), *a_in.impl());
    }
    if (b.impl() != b_in.impl()) {
      g.scratch_b = b.impl();
      g.copy_b = detail::copy_kernel<T, T>(*b.impl(), *b_in.impl());
    }
    if (detail::KernelCapture* c = detail::kernel_capture()) [[unlikely]]
      c->record([g](char* const* p) { detail::run_gemms<T>(g, p); }, out.impl().get(), a_in.impl().get(),
                b_in.impl().get());
    char* const p[] = {static_cast<char*>(out.impl()->data()), static_cast<char*>(a_in.impl()->data()),
                       static_cast<char*>(b_in.impl()->data())};
    detail::run_gemms<T>(g, p);
    return out;
  }
  // C = A B: dC = dA B + A dB; gA = gC B^H, gB = A^H gC, each summed over broadcast batch dims.
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    Tensor<T> r;
    if (c.dx0().defined()) r = matmul(c.dx0(), c.x1());
    if (c.dx1().defined()) r = detail::accumulate(r, matmul(c.x0(), c.dx1()));
    return broadcast_to(r, c.y0().shape());
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    Tensor<T> ga, gb;
    if (c.needs(0)) ga = sum_to(matmul(c.gy0(), c.x1().mH()), c.x0().shape());
    if (c.needs(1)) gb = sum_to(matmul(c.x0().mH(), c.gy0()), c.x1().shape());
    return std::tuple{ga, gb};
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> matmul(const Tensor<T>& a, const Tensor<T>& b) {
  detail::check_defined("matmul", a, b);
  constexpr const char* dt = dtype_traits<T>::name;
  TENAX_CHECK(a.dim() >= 2 && b.dim() >= 2, "matmul", "needs rank >= 2 operands, got ", a.shape(), " and ", b.shape(),
              " (", dt, " on ", a.device().str(), ")");
  TENAX_CHECK(a.shape()[1] == b.shape()[0], "matmul", "inner dimensions differ: ", a.shape(), " x ", b.shape(), " (",
              dt, " on ", a.device().str(), ")");
  TENAX_CHECK(a.device() == b.device(), "matmul", "operands on different devices (", a.device().str(), " and ",
              b.device().str(), "; shapes ", a.shape(), " x ", b.shape(), ", ", dt, ")");
  for (auto d : {a.shape()[0], a.shape()[1], b.shape()[1]})
    TENAX_CHECK(d <= INT_MAX, "matmul", "dimension ", d, " exceeds the provider's 32-bit index in ", a.shape(), " x ",
                b.shape(), " (", dt, ")");
  const Shape ba = detail::mat_batch_shape(a.shape()), bb = detail::mat_batch_shape(b.shape());
  TENAX_CHECK(broadcast_conflict(ba, bb) < 0, "matmul", "batch dimensions of ", a.shape(), " and ", b.shape(),
              " cannot be broadcast (batch shapes ", ba, " and ", bb, "; ", dt, " on ", a.device().str(), ")");
  return detail::apply(ops::Matmul{}, a, b);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_MATMUL(T) TENAX_INSTANCE Tensor<T> matmul(const Tensor<T>&, const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_MATMUL)

}  // namespace tenax
