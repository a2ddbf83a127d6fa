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
inline std::int64_t uniform_step(const BatchOffsets& off) {
  if (off.size() < 2) return 0;
  const std::int64_t s = off[1] - off[0];
  for (std::size_t i = 2; i < off.size(); ++i)
    if (off[i] - off[i - 1] != s) return -1;
  return s < 0 ? -1 : s;
}

}  // namespace detail

namespace ops {

struct Matmul {
  static constexpr const char* name = "matmul";
  static constexpr bool one_kernel = true;  // forward is one captured kernel call (kernels/capture.hpp)
  static constexpr bool saves_outputs = false;

  template <class T>
  Tensor<T> forward(const Tensor<T>& a_in, const Tensor<T>& b_in) const {
    const std::int64_t m = a_in.shape()[0], k = a_in.shape()[1], n = b_in.shape()[1];
    const Shape batch =
        broadcast_shapes(detail::mat_batch_shape(a_in.shape()), detail::mat_batch_shape(b_in.shape()), name);
    const Shape os = detail::with_batch(m, n, batch);
    Tensor<T> out = Tensor<T>::empty(os, a_in.device());
    if (out.numel() == 0) return out;
    if (k == 0) return Tensor<T>::zeros(os, a_in.device());
    detail::linalg_backend<T>(name, out.device()).matmul_into(out, a_in, b_in, batch);
    return out;
  }
  // C = A B: dC = dA B + A dB; gA = gC B^H, gB = A^H gC, each summed over broadcast batch dims.
  // Batched (co)tangents (ad/apply.hpp) are more batch dimensions, which the products broadcast over.
  static constexpr bool batched_jvp = true, batched_vjp = true;
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    Tensor<T> r;
    if (c.dx0().defined()) r = matmul(c.dx0(), c.x1());
    if (c.dx1().defined()) r = detail::accumulate(r, matmul(c.x0(), c.dx1()));
    return broadcast_to(r, c.dy0_shape());
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
