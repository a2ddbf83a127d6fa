#pragma once
// lstsq: the minimum-norm least-squares solution of A X = B for any shape and rank, X = A^+ B with the
// pseudo-inverse of ops/linalg/pinv.hpp: one SVD per matrix (what LAPACK's gelsd computes, by
// divide and conquer), the same on every device, differentiable to any order at constant rank.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>

#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/lstsq_small.hpp"
#include "tenax/ops/linalg/pinv.hpp"

namespace tenax {
namespace ops {

// Outputs X = A^+ B, P = A^+ (kept for the rules) and the singular values (no derivative; the
// public wrapper returns them detached). One SVD per matrix; B's batch broadcasts against A's.
struct Lstsq {
  static constexpr const char* name = "lstsq";
  static constexpr bool one_kernel = true;  // on the CPU, forward is one captured kernel (B's batch within A's)
  static constexpr bool saves_outputs = true;
  detail::Tolerance tol;
  // P's tangent is formed in every JVP (not only while recording): a traced graph re-executed under
  // a derivative (for_derivatives) may hold steps that read P (a traced gradient's or tangent's
  // rule), which need it.
  bool p_tangent = false;
  Lstsq for_derivatives() const {
    Lstsq o = *this;
    o.p_tangent = true;
    return o;
  }

  // The device's pinv with B (on the CPU one fused kernel) when B's batch broadcasts to A's; else
  // A^+ and then the broadcast product.
  template <class T>
  std::tuple<Tensor<T>, Tensor<T>, Tensor<real_t<T>>> forward(const Tensor<T>& A, const Tensor<T>& B) const {
    const Shape ab = detail::mat_batch_shape(A.shape());
    if (broadcast_shapes(ab, detail::mat_batch_shape(B.shape()), name) == ab) {
      auto [P, S, X] = detail::linalg_backend<T>(name, A.device()).pinv(name, A, B, tol.atol, tol.rtol);
      return {X, P, S};
    }
    auto [P, S] = detail::pinv_from_svd(name, A, tol);
    return {matmul(P, B), P, S};
  }

  // X = P B with P = A^+ (constant rank): with r = B - A X,
  //   dX = -P dA X + P P^H dA^H r + (I - P A) dA^H P^H X + P dB
  //   gB = P^H gX;  gA = -(P^H gX) X^H + r (P P^H gX)^H + (P^H X) (gX - P A gX)^H
  // (pinv's derivative applied to B, docs/MATH.md: every product has X's k columns, so no n x n
  // product is formed). P's own derivative (pinv's rule) joins only when P is read by a rule that
  // is itself differentiated (P's tangent when the inputs record gradients, P's cotangent when it
  // arrives).
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>&A = c.x0(), &B = c.x1(), &X = c.y0(), &P = c.y1();
    Tensor<T> dX, dP;
    if (c.dx0().defined()) {
      // The products (ops/linalg/lstsq_small.hpp), for small matrices one op.
      const Tensor<T>& dA = c.dx0();
      dX = detail::lstsq_tangent_small(A, B, X, P, dA);
      if (!dX.defined()) dX = LstsqTangentSmall::composite(A, B, X, P, dA);
      if (p_tangent || (is_grad_enabled() && (A.tracks_grad() || B.tracks_grad()))) dP = detail::pinv_jvp(A, P, dA);
    }
    if (c.dx1().defined()) dX = detail::accumulate(dX, broadcast_to(matmul(P, c.dx1()), X.shape()));
    return std::tuple{dX, dP, Tensor<real_t<T>>()};
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>&A = c.x0(), &B = c.x1(), &X = c.y0(), &P = c.y1();
    Tensor<T> gA, gB;
    if (c.gy0().defined()) {
      // The products (ops/linalg/lstsq_small.hpp), for small matrices one op giving gA and P^H gX.
      const Tensor<T>& gX = c.gy0();
      Tensor<T> PhgX;
      if (c.needs(0)) {
        std::tie(gA, PhgX) = detail::lstsq_cotangent_small(A, B, X, P, gX);
        if (!gA.defined()) {
          std::tie(gA, PhgX) = LstsqCotangentSmall::composite(A, B, X, P, gX);
          gA = sum_to(gA, A.shape());
        }
      } else {
        PhgX = matmul(P.mH(), gX);
      }
      if (c.needs(1)) gB = sum_to(PhgX, B.shape());
    }
    if (c.gy1().defined() && c.needs(0)) gA = detail::accumulate(gA, detail::pinv_vjp(A, P, c.gy1()));
    return std::tuple{gA, gB};
  }
};

}  // namespace ops

namespace linalg {

// torch.linalg.lstsq's outputs.
//   solution          n x k x batch: the least-norm minimizer of ||A X - B||_F, singular values
//                     at or below rcond * s_max counted as zero
//   residuals         k x batch: ||A x_j - b_j||^2 per column when m > n and every matrix has
//                     full rank n, else empty (shape {0}), as PyTorch defines them
//   rank              batch: the effective rank of each matrix
//   singular_values   min(m, n) x batch, descending; no derivative (as in PyTorch)
template <Floating T>
struct LstsqResult {
  Tensor<T> solution;
  RealTensor<T> residuals;
  Tensor<std::int64_t> rank;
  RealTensor<T> singular_values;
};

// Solves min ||A X - B|| for A m x n (any m, n, rank) and B m x k; the batch dimensions of A and B
// broadcast. rcond defaults to eps * max(m, n) (PyTorch's default). Derivatives in A and B follow
// the pseudo-inverse's (constant rank); residuals are differentiable through the solution.
template <Floating T>
LstsqResult<T> lstsq(const Tensor<T>& A, const Tensor<T>& B, std::optional<double> rcond = {}) {
  using R = real_t<T>;
  tenax::detail::check_matrix("lstsq", A);
  tenax::detail::check_matrix("lstsq", B, "B");
  TENAX_CHECK(A.device() == B.device(), "lstsq", "A on ", A.device().str(), " and B on ", B.device().str());
  const std::int64_t m = A.shape()[0], n = A.shape()[1];
  TENAX_CHECK(B.shape()[0] == m, "lstsq", "A of shape ", A.shape(), " and B of shape ", B.shape(),
              " need the same number of rows (", dtype_traits<T>::name, " on ", A.device().str(), ")");
  const double eps = std::numeric_limits<R>::epsilon();
  const tenax::detail::Tolerance tol{0.0, rcond ? *rcond : eps * static_cast<double>(std::max(m, n))};
  TENAX_CHECK(tol.rtol >= 0, "lstsq", "rcond ", tol.rtol, " must be non-negative (", dtype_traits<T>::name, " ",
              A.shape(), " on ", A.device().str(), ")");
  const Shape batch = tenax::detail::mat_batch_shape(A.shape());
  LstsqResult<T> r;
  if (A.numel() == 0) {
    r.solution = matmul(detail_pinv::empty_pinv(A), B);
    r.singular_values = Tensor<R>::zeros(tenax::detail::with_batch(std::min(m, n), batch), A.device());
    r.rank = Tensor<std::int64_t>::zeros(batch, A.device());
  } else {
    auto [X, P, s] = tenax::detail::apply(ops::Lstsq{tol}, A, B);
    (void)P;
    r.solution = X;
    r.singular_values = s.detach();
    r.rank = cast<std::int64_t>(sum(cast<R>(tenax::detail::above_tolerance(r.singular_values, tol)), {0}, false));
  }
  bool full_rank = m > n;
  if (full_rank)
    for (std::int64_t k : r.rank.to_vector()) full_rank = full_rank && k == n;
  r.residuals =
      full_rank ? sum(square(abs(sub(matmul(A, r.solution), B))), {0}, false) : Tensor<R>::zeros(Shape{0}, A.device());
  return r;
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_LSTSQ(T) \
  TENAX_INSTANCE LstsqResult<T> lstsq(const Tensor<T>&, const Tensor<T>&, std::optional<double>);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_LSTSQ)

}  // namespace linalg
}  // namespace tenax
