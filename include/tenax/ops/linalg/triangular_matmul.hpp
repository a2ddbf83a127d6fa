#pragma once
// triangular_matmul: Y = op(T) B (left) or Y = B op(T) (right), T the upper or lower triangle of
// A (optionally with a unit diagonal), op in {N, T, C}; batched with broadcast batch dimensions.
// BLAS trmm (cuBLAS on a GPU): half the flops of a gemm with the triangle made explicit, and no
// copy of the triangle. The factorization rules use it on packed factors (LU's L and U read from one
// matrix).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/matmul.hpp"
#include "tenax/ops/linalg/triangular.hpp"

namespace tenax {
namespace ops {

struct TriangularMatmul : TriangularFlags {
  static constexpr const char* name = "triangular_matmul";
  static constexpr bool one_kernel = true;  // on the CPU, forward is one captured kernel (kernels/capture.hpp)

  template <class T>
  Tensor<T> forward(const Tensor<T>& A, const Tensor<T>& B) const {
    return forward_with<detail::TriangularBlas::trmm>(name, A, B);
  }

  // Let P be the projection onto the triangle read (strict when unit) and T = tri(A). Left side
  // (Y = op(T) B):
  //   dY = op(P dA) B + op(T) dB;   gB = op(T)^H gY;  gA = P(op*(gY B^H))
  // Right side (Y = B op(T)):
  //   dY = B op(P dA) + dB op(T);   gB = gY op(T)^H;  gA = P(op*(B^H gY))
  // (op* = op for N, T and C.) Cotangents are summed over broadcast batch dimensions; public ops
  // only, so the rules are differentiable again.
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>& B = c.x1();
    Tensor<T> r;
    if (c.dx1().defined()) r = detail::apply(*this, c.x0(), c.dx1());
    if (c.dx0().defined()) {
      const Tensor<T> opd = apply_op(project(c.dx0()));
      const Tensor<T> t = left ? matmul(opd, B) : matmul(B, opd);
      r = r.defined() ? add(r, broadcast_to(t, r.shape())) : t;
    }
    return r;
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>&A = c.x0(), &B = c.x1(), &g = c.gy0();
    Tensor<T> gA, gB;
    if (c.needs(0)) gA = sum_to(project(apply_op(left ? matmul(g, B.mH()) : matmul(B.mH(), g))), A.shape());
    if (c.needs(1)) gB = sum_to(apply_adjoint(*this, A, g), B.shape());  // op(T)^H gY or gY op(T)^H
    return std::tuple{gA, gB};
  }
};

}  // namespace ops

namespace linalg {

// Y = op(tri(A)) B (left = true) or Y = B op(tri(A)) (left = false), tri(A) the upper (upper =
// true) or lower triangle of the square A, its diagonal taken as 1 when unitriangular. Only that
// triangle is read, and gradients land only on it: the product with a triangular factor stored
// packed (LU) or with zeros elsewhere, without making the triangle explicit.
template <Floating T>
Tensor<T> triangular_matmul(const Tensor<T>& A, const Tensor<T>& B, bool upper, bool left = true,
                            bool unitriangular = false, cpu::Trans trans = cpu::Trans::N) {
  detail::check_triangular_args("triangular_matmul", A, B, left);
  return detail::apply(ops::TriangularMatmul{{upper, left, unitriangular, trans}}, A, B);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_TRIANGULAR_MATMUL(T) \
  TENAX_INSTANCE Tensor<T> triangular_matmul(const Tensor<T>&, const Tensor<T>&, bool, bool, bool, cpu::Trans);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_TRIANGULAR_MATMUL)

}  // namespace linalg
}  // namespace tenax
