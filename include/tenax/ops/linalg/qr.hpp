#pragma once
// qr: A = Q R by Householder reflections (geqrf + orgqr/ungqr); reduced, complete and R-only
// modes, tall and wide matrices; optionally with R's diagonal made non-negative.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/linalg/batched.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/qr_small.hpp"
#include "tenax/ops/linalg/solve_triangular.hpp"
#include "tenax/ops/linalg/spectral.hpp"
#include "tenax/ops/linalg/triangle_fold.hpp"
#include "tenax/ops/linalg/triangular_matmul.hpp"

namespace tenax {
namespace linalg {
enum class QrMode { Reduced, Complete, R };
}

namespace ops {

// Outputs Q (undefined when !compute_q) and R.
struct Qr {
  static constexpr const char* name = "qr";
  static constexpr bool one_kernel = true;  // on the CPU, forward is one captured kernel (kernels/capture.hpp)
  static constexpr bool saves_outputs = true;
  bool complete;       // Q is m x m and R is m x n
  bool compute_q;      // false only for R-only mode when no derivative can be needed
  bool positive_diag;  // normalise so that R's diagonal is >= 0 (Q <- Q D, R <- D R)
  // The variant to run when a derivative is needed (re-executing a traced R-only qr under AD):
  // the rules read Q.
  Qr for_derivatives() const {
    Qr o = *this;
    o.compute_q = true;
    return o;
  }

  // Q (m x qc, undefined unless compute_q) and R (rr x n), qc = rr = min(m, n) or, complete, m;
  // a matrix with inf or NaN raises a LinAlgError (on a device when its results are next read).
  // The device's backend computes them (on the CPU one captured kernel, src/cpu/linalg_cholesky_qr.cpp).
  template <class T>
  std::tuple<Tensor<T>, Tensor<T>> forward(const Tensor<T>& A) const {
    return detail::linalg_backend<T>(name, A.device()).qr(A, complete, compute_q, positive_diag);
  }

  // docs/MATH.md section 4. The rules hold for any fixed sign pattern of R's diagonal, so the
  // positive-diagonal option needs no change.
  // m >= n:  dX = dA R^-1;  M = Q^H dX;  S = triu(M + M^H) - Diag(M + M^H)/2
  //          dR = S R;  dQ = dX - Q S
  //          W = R gR^H - gQ^H Q;  gA = [gQ + Q copyltu(W)] R^-H
  // m < n:   (R = [R1 R2])  C = Q^H dA1 R1^-1;  O = tril(C, -1) - tril(C, -1)^H + i ImDiag(C)
  //          dQ = Q O;  dR = Q^H dA - O R
  //          N = Q^H gQ - gR R^H;  Wm = tril(N - N^H, -1) + i ImDiag(N)
  //          gA = [Q Wm R1^-H, 0] + Q gR
  // Complete mode with m > n is not differentiable (Q's extra columns are not unique).
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>&Q = c.y0(), &R = c.y1(), &dA = c.dx0();
    const std::int64_t m = dA.shape()[0], n = dA.shape()[1];
    check_differentiable(Q, m, n);
    if (m >= n) {
      // dX = dA R^-1, S = triu(M + M^H) - Diag(M + M^H)/2 with M = Q^H dX, dQ = dX - Q S, dR = S R
      // (ops/linalg/qr_small.hpp: for small matrices one op).
      if (auto [dQ, dR] = detail::qr_tangent_small(Q, R, dA); dQ.defined()) return std::tuple{dQ, dR};
      return QrTangentSmall::composite(Q, R, dA);
    }
    auto R1 = slice(R, 1, 0, m);
    auto Cm = matmul(Q.mH(), linalg::solve_triangular(R1, slice(dA, 1, 0, m), true, false));
    auto low = tril(Cm, -1);
    auto O = add(sub(low, low.mH()), detail::i_imdiag(Cm));
    return std::tuple{matmul(Q, O), sub(matmul(Q.mH(), dA), matmul(O, R))};
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>&Q = c.y0(), &R = c.y1(), &gQ = c.gy0(), &gR = c.gy1();
    const std::int64_t m = c.x0().shape()[0], n = c.x0().shape()[1];
    check_differentiable(Q, m, n);
    if (m >= n) {
      // (gQ + Q copyltu(R gR^H - gQ^H Q)) R^-H (ops/linalg/qr_small.hpp: for small matrices one op).
      if (Tensor<T> gA = detail::qr_cotangent_small(Q, R, gQ, gR); gA.defined()) return gA;
      return QrCotangentSmall::composite(Q, R, gQ, gR);
    }
    Tensor<T> N;
    if (gQ.defined()) N = matmul(Q.mH(), gQ);
    if (gR.defined()) N = detail::subtract(N, matmul(gR, R.mH()));
    auto Wm = add(tril(sub(N, N.mH()), -1), detail::i_imdiag(N));
    auto R1 = slice(R, 1, 0, m);
    auto left = matmul(Q, linalg::solve_triangular(R1, Wm, true, false, false, cpu::Trans::C));
    auto gA = concat<T>(
        {left, Tensor<T>::zeros(detail::with_batch(m, n - m, detail::mat_batch_shape(R.shape())), R.device())}, 1);
    if (gR.defined()) gA = add(gA, matmul(Q, gR));
    return gA;
  }

 private:
  template <class T>
  void check_differentiable(const Tensor<T>& Q, std::int64_t m, std::int64_t n) const {
    TENAX_CHECK(Q.defined(), name, "internal error: a derivative rule ran without Q (compute_q = false)");
    TENAX_CHECK(!(complete && m > n), name,
                "complete mode with m > n is not differentiable (the extra columns of Q are not unique); use "
                "the reduced mode");
  }
};

}  // namespace ops

namespace linalg {

// A = Q R. Reduced: Q m x k, R k x n (k = min(m, n)); Complete: Q m x m, R m x n; R: returns R only
// (Q is empty), computing Q only when a derivative may be needed. positive_diag makes R's
// diagonal non-negative (a smooth, unique factorization for full-rank A); the default keeps
// LAPACK's signs. Derivatives need full rank (for m < n, a nonsingular leading m x m block).
template <Floating T>
std::pair<Tensor<T>, Tensor<T>> qr(const Tensor<T>& A, QrMode mode = QrMode::Reduced, bool positive_diag = false) {
  detail::check_matrix("qr", A);
  const bool may_differentiate = tenax::detail::differentiated_again(A);
  const bool compute_q = mode != QrMode::R || may_differentiate;
  auto [Q, R] = detail::apply(ops::Qr{mode == QrMode::Complete, compute_q, positive_diag}, A);
  if (mode == QrMode::R) return {Tensor<T>(), R};
  return {Q, R};
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_QR(T) TENAX_INSTANCE std::pair<Tensor<T>, Tensor<T>> qr(const Tensor<T>&, QrMode, bool);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_QR)

}  // namespace linalg
}  // namespace tenax
