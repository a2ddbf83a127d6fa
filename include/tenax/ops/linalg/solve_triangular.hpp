#pragma once
// solve_triangular: X = op(T)^-1 B (left) or X = B op(T)^-1 (right), T triangular (upper or
// lower, optionally unit diagonal), op in {N, T, C}; batched with broadcast batch dimensions.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/linalg/batched.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/overflow.hpp"
#include "tenax/ops/linalg/triangular.hpp"

namespace tenax {
namespace ops {

struct SolveTriangular : TriangularFlags {
  static constexpr const char* name = "solve_triangular";
  static constexpr bool one_kernel = true;  // on the CPU, forward is one captured kernel (kernels/capture.hpp)
  static constexpr bool saves_outputs = true;

  template <class T>
  Tensor<T> forward(const Tensor<T>& A, const Tensor<T>& B) const {
    TENAX_CHECK(A.device() == B.device(), name, "inputs are on different devices (", A.device().str(), " and ",
                B.device().str(), ")");
    return forward_with<detail::TriangularBlas::trsm>(name, A, B);
  }

  // Let P be the projection onto T's stored triangle (strict when unit). Left side:
  //   dX = op(T)^-1 (dB - op(P dT) X)
  //   gB = op(T)^-H gX;  M = -gB X^H;  gT = P(op*(M))     (op* = adjoint: N->N, T->T, C->C)
  // Right side (X = B op(T)^-1):
  //   dX = (dB - X op(P dT)) op(T)^-1
  //   gB = gX op(T)^-H;  M = -X^H gB;  gT = P(op*(M))
  // Cotangents are summed over broadcast batch dimensions. Everything is public ops, so the rules
  // are differentiable again.
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>&A = c.x0(), &X = c.y0();
    Tensor<T> r;
    if (c.dx1().defined()) r = broadcast_to(c.dx1(), X.shape());
    if (c.dx0().defined()) {
      Tensor<T> opdT = apply_op(project(c.dx0()));
      Tensor<T> t = detail::nonfinite_on_host(X) ? detail::matmul_past_overflow(opdT, X, left)
                    : left                       ? matmul(opdT, X)
                                                 : matmul(X, opdT);
      r = detail::subtract(r, t);
    }
    return solve(A, r);
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>&A = c.x0(), &X = c.y0();
    Tensor<T> gB = apply_adjoint(*this, A, c.gy0());  // op(T)^-H gX or gX op(T)^-H
    Tensor<T> gA, gBout;
    if (c.needs(0)) {
      // When X overflowed (detail::nonfinite_on_host), the same products as solves of finite
      // matrices: gB X^H = (op(T)^-1 B gB^H)^H, X^H gB = (gB^H B op(T)^-1)^H.
      const Tensor<T>& B = c.x1();
      Tensor<T> M = !detail::nonfinite_on_host(X) ? (left ? neg(matmul(gB, X.mH())) : neg(matmul(X.mH(), gB)))
                    : left                        ? neg(solve(A, matmul(B, gB.mH())).mH())
                                                  : neg(solve(A, matmul(gB.mH(), B)).mH());
      gA = sum_to(project(apply_op(M)), A.shape());
    }
    if (c.needs(1)) gBout = sum_to(gB, c.x1().shape());
    return std::tuple{gA, gBout};
  }

 private:
  // The same solve (same flags) applied to R.
  template <class T>
  Tensor<T> solve(const Tensor<T>& A, const Tensor<T>& R) const {
    return detail::apply(*this, A, R);
  }
};

}  // namespace ops

namespace linalg {

// Solves op(A) X = B (left = true) or X op(A) = B (left = false) for triangular A.
// upper: A's upper triangle is used (else the lower); unitriangular: A's diagonal is taken as 1.
// Only the selected triangle is read, and gradients land only on it.
template <Floating T>
Tensor<T> solve_triangular(const Tensor<T>& A, const Tensor<T>& B, bool upper, bool left = true,
                           bool unitriangular = false, Trans trans = Trans::N) {
  detail::check_triangular_args("solve_triangular", A, B, left);
  return detail::apply(ops::SolveTriangular{{upper, left, unitriangular, trans}}, A, B);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_SOLVE_TRIANGULAR(T) \
  TENAX_INSTANCE Tensor<T> solve_triangular(const Tensor<T>&, const Tensor<T>&, bool, bool, bool, Trans);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_SOLVE_TRIANGULAR)

}  // namespace linalg
}  // namespace tenax
