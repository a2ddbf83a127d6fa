#pragma once
#include <functional>

// solve_triangular: X = op(T)^-1 B (left) or X = B op(T)^-1 (right), T triangular (upper or
// lower, optionally unit diagonal), op in {N, T, C}; batched with broadcast batch dimensions.
#include "tenax/ad/apply.hpp"
#include "tenax/ops/linalg/batched.hpp"
#include "tenax/ops/linalg/common.hpp"

namespace tenax {
namespace linalg {
using Trans = cpu::Trans;
}

namespace ops {

struct SolveTriangular {
  static constexpr const char* name = "solve_triangular";
  static constexpr bool one_kernel = true;  // forward is one captured kernel call (kernels/capture.hpp)
  static constexpr bool saves_outputs = true;
  bool upper, left, unit;
  cpu::Trans trans;

  template <class T>
  Tensor<T> forward(const Tensor<T>& A, const Tensor<T>& B) const {
    const Shape batch = broadcast_shapes(detail::mat_batch_shape(A.shape()), detail::mat_batch_shape(B.shape()), name);
    const std::int64_t m = B.shape()[0], n = B.shape()[1];
    Tensor<T> X = Tensor<T>::empty(detail::with_batch(m, n, batch), B.device());
    if (X.numel() == 0) return X;  // nothing to solve (the batch may still be huge)
    const cpu::Side side = left ? cpu::Side::Left : cpu::Side::Right;
    const cpu::Uplo uplo = upper ? cpu::Uplo::Upper : cpu::Uplo::Lower;
    const cpu::Diag diag = unit ? cpu::Diag::Unit : cpu::Diag::NonUnit;
    TENAX_CHECK(A.device() == B.device(), name, "inputs are on different devices (", A.device().str(), " and ",
                B.device().str(), ")");
    if (!X.device().is_cpu()) {
      detail::copy_into(X, expand(B, X.shape()));
      const Tensor<T> a = detail::unit_row_stride(A);
      const std::int64_t lda = std::max<std::int64_t>(1, a.strides()[1]);
      detail::batched::trsm(side, uplo, trans, diag, a, detail::batch_offsets(a, batch), lda, X);
      return X;
    }
    // On the CPU: B (broadcast) copied into X, A copied into scratch when LAPACK cannot read its
    // layout, then one trsm per matrix; one kernel, which a prepared program captures.
    const bool a_ok = detail::has_unit_row_stride(A);
    const Tensor<T> a = a_ok ? A : Tensor<T>::empty(A.shape());
    auto run = [copy_b = detail::copy_kernel<T, T>(*X.impl(), *expand(B, X.shape()).impl()),
                copy_a = a_ok ? std::function<void(char*, char*)>() : detail::copy_kernel<T, T>(*a.impl(), *A.impl()),
                scratch = a_ok ? detail::ImplPtr() : a.impl(), aoff = detail::batch_offsets(a, batch),
                lda = std::max<std::int64_t>(1, a.strides()[1]), m, n, side, uplo, diag,
                trans = trans](char* const* p) {
      copy_b(p[0], p[2]);
      if (scratch) copy_a(static_cast<char*>(scratch->data()), p[1]);
      const T* ap = reinterpret_cast<const T*>(scratch ? static_cast<char*>(scratch->data()) : p[1]);
      T* x = reinterpret_cast<T*>(p[0]);
      for (std::size_t b = 0; b < aoff.size(); ++b)
        cpu::trsm<T>(side, uplo, trans, diag, m, n, T(1), ap + aoff[b], lda, x + static_cast<std::int64_t>(b) * m * n,
                     std::max<std::int64_t>(1, m));
    };
    detail::record_kernel(run, X, A, B);
    return X;
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
      Tensor<T> t = left ? matmul(opdT, X) : matmul(X, opdT);
      r = r.defined() ? sub(r, t) : neg(t);
    }
    return solve(A, r);
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>&A = c.x0(), &X = c.y0();
    Tensor<T> gB = solve_adjoint(A, c.gy0());
    Tensor<T> gA, gBout;
    if (c.needs(0)) {
      Tensor<T> M = left ? neg(matmul(gB, X.mH())) : neg(matmul(X.mH(), gB));
      gA = sum_to(project(apply_op(M)), A.shape());
    }
    if (c.needs(1)) gBout = sum_to(gB, c.x1().shape());
    return std::tuple{gA, gBout};
  }

 private:
  template <class T>
  Tensor<T> project(const Tensor<T>& d) const {
    return upper ? triu(d, unit ? 1 : 0) : tril(d, unit ? -1 : 0);
  }
  // op(M) for the same op as this solve (op* = op for N, T and C).
  template <class T>
  Tensor<T> apply_op(const Tensor<T>& M) const {
    switch (trans) {
      case cpu::Trans::N:
        return M;
      case cpu::Trans::T:
        return M.mT();
      default:
        return M.mH();
    }
  }
  // The same solve (same flags) applied to R.
  template <class T>
  Tensor<T> solve(const Tensor<T>& A, const Tensor<T>& R) const {
    return detail::apply(*this, A, R);
  }
  // op(T)^-H G (left) or G op(T)^-H (right).
  template <class T>
  Tensor<T> solve_adjoint(const Tensor<T>& A, const Tensor<T>& G) const {
    SolveTriangular adj = *this;
    switch (trans) {
      case cpu::Trans::N:
        adj.trans = cpu::Trans::C;
        break;
      case cpu::Trans::C:
        adj.trans = cpu::Trans::N;
        break;
      case cpu::Trans::T:
        // (T^T)^-H = conj(T)^-1: solve with T (op N) on conj(G) and conjugate the result.
        adj.trans = cpu::Trans::N;
        return conj(detail::apply(adj, A, conj(G)));
    }
    return detail::apply(adj, A, G);
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
  constexpr const char* op = "solve_triangular";
  detail::check_square(op, A);
  detail::check_matrix(op, B);
  TENAX_CHECK(A.device() == B.device(), op, "A on ", A.device().str(), " and B on ", B.device().str());
  const std::int64_t need = left ? B.shape()[0] : B.shape()[1];
  TENAX_CHECK(A.shape()[0] == need, op, "A of shape ", A.shape(), " does not match B of shape ", B.shape(),
              left ? " (left side: A is n x n, B is n x k)" : " (right side: A is n x n, B is k x n)");
  broadcast_shapes(detail::mat_batch_shape(A.shape()), detail::mat_batch_shape(B.shape()), op);
  return detail::apply(ops::SolveTriangular{upper, left, unitriangular, trans}, A, B);
}

}  // namespace linalg
}  // namespace tenax
