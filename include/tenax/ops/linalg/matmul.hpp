#pragma once
// matmul: C = A B for m x k and k x n matrices with broadcast trailing batch dimensions, via gemm.
// Transposed views reach BLAS as a transpose flag, never as a copy.
#include <algorithm>
#include <climits>

#include "tenax/ad/apply.hpp"
#include "tenax/backend/cpu_provider.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/kernels/parallel.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/linalg/common.hpp"

namespace tenax {
namespace detail {

// How gemm can read a strided m x n matrix view: as-is ('N', ld = stride 1) or transposed
// ('T', ld = stride 0). Anything else needs a copy.
struct GemmOperand {
  cpu::Trans trans;
  std::int64_t ld;
  bool ok;
};

inline GemmOperand gemm_operand(std::int64_t rows, std::int64_t cols, std::int64_t s0, std::int64_t s1) {
  if ((s0 == 1 || rows <= 1) && s1 >= std::max<std::int64_t>(1, rows)) return {cpu::Trans::N, s1, true};
  if ((s1 == 1 || cols <= 1) && s0 >= std::max<std::int64_t>(1, cols)) return {cpu::Trans::T, s0, true};
  if (rows <= 1 && cols <= 1) return {cpu::Trans::N, 1, true};
  return {cpu::Trans::N, 0, false};
}

}  // namespace detail

namespace ops {

struct Matmul {
  static constexpr const char* name = "matmul";
  static constexpr bool saves_outputs = false;

  template <class T>
  Tensor<T> forward(const Tensor<T>& a_in, const Tensor<T>& b_in) const {
    TENAX_CHECK(a_in.device().is_cpu(), name, "no kernel for device ", a_in.device().str());
    const std::int64_t m = a_in.shape()[0], k = a_in.shape()[1], n = b_in.shape()[1];
    const Shape batch =
        broadcast_shapes(detail::mat_batch_shape(a_in.shape()), detail::mat_batch_shape(b_in.shape()), name);
    Shape os{m, n};
    for (auto d : batch) os.push_back(d);
    Tensor<T> out = Tensor<T>::empty(os, a_in.device());
    if (out.numel() == 0) return out;
    if (k == 0) return Tensor<T>::zeros(os, a_in.device());
    auto oa = detail::gemm_operand(m, k, a_in.strides()[0], a_in.strides()[1]);
    auto ob = detail::gemm_operand(k, n, b_in.strides()[0], b_in.strides()[1]);
    Tensor<T> a = oa.ok ? a_in : clone(a_in), b = ob.ok ? b_in : clone(b_in);
    if (!oa.ok) oa = detail::gemm_operand(m, k, a.strides()[0], a.strides()[1]);
    if (!ob.ok) ob = detail::gemm_operand(k, n, b.strides()[0], b.strides()[1]);
    // Batch offsets of a and b broadcast over the output batch shape.
    const auto offa = detail::batch_offsets(a, batch), offb = detail::batch_offsets(b, batch);
    const std::int64_t nb = static_cast<std::int64_t>(offa.size());
    auto one = [&](std::int64_t i) {
      cpu::gemm<T>(oa.trans, ob.trans, m, n, k, T(1), a.data() + offa[static_cast<std::size_t>(i)], oa.ld,
                   b.data() + offb[static_cast<std::size_t>(i)], ob.ld, T(0), out.mutable_data() + i * m * n, m);
    };
    // Many small products: one per worker at a time. OpenBLAS threads a gemm from m n k > 64^3
    // on; below that it runs on the calling thread, so workers do not oversubscribe the machine.
    if (nb >= 2 && std::max({m * k, k * n, m * n}) <= cpu::kParallelMaxMatrixElements &&
        m * n * k <= cpu::kProviderSerialGemmWork && nb * m * n * k >= cpu::kParallelMinBatchWork)
      cpu::parallel_for(nb, one);
    else
      for (std::int64_t i = 0; i < nb; ++i) one(i);
    return out;
  }
  // C = A B: dC = dA B + A dB; gA = gC B^H, gB = A^H gC, each summed over broadcast batch dims.
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    Tensor<T> r;
    if (c.dx0().defined()) r = matmul(c.dx0(), c.x1());
    if (c.dx1().defined()) r = r.defined() ? add(r, matmul(c.x0(), c.dx1())) : matmul(c.x0(), c.dx1());
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
  TENAX_CHECK(a.dim() >= 2 && b.dim() >= 2, "matmul", "needs rank >= 2 operands, got ", a.shape(), " and ", b.shape());
  TENAX_CHECK(a.shape()[1] == b.shape()[0], "matmul", "inner dimensions differ: ", a.shape(), " x ", b.shape());
  TENAX_CHECK(a.device() == b.device(), "matmul", "operands on different devices (", a.device().str(), " and ",
              b.device().str(), ")");
  for (auto d : {a.shape()[0], a.shape()[1], b.shape()[1]})
    TENAX_CHECK(d <= INT_MAX, "matmul", "dimension ", d, " exceeds the provider's 32-bit index in ", a.shape(), " x ",
                b.shape());
  broadcast_shapes(detail::mat_batch_shape(a.shape()), detail::mat_batch_shape(b.shape()), "matmul");
  return detail::apply(ops::Matmul{}, a, b);
}

}  // namespace tenax
