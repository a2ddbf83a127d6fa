#pragma once
// solve: X = A^-1 B (left) or X = B A^-1 (right) for square A, by one LU factorization whose
// factors the derivative rules reuse.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/linalg/batched.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/info_check.hpp"
#include "tenax/ops/linalg/lu_solve.hpp"
#include "tenax/ops/linalg/overflow.hpp"

namespace tenax {
namespace detail {

// SavedLuSolve (ops/linalg/lu_solve.hpp) of a right-hand side R that may be a batch of tangents or
// cotangents (ad/apply.hpp; `rank` is the rank of the values R stands for): the directions join
// R's columns, so that each matrix of the batch takes one solve with k n right-hand sides (the LU
// solve broadcasts R over A's batch only), and then go back to their trailing dimension.
template <class T>
Tensor<T> saved_lu_solve(cpu::Trans trans, const Tensor<T>& A, const Tensor<T>& LU, const Tensor<std::int32_t>& piv,
                         const Tensor<T>& R, int rank) {
  const int p = mode().tangent_batch_rank;
  if (p < 0 || R.dim() != p + 1) [[likely]]
    return apply(ops::SavedLuSolve{trans}, A, LU, piv, R);
  Shape order{0, 1, p}, back;
  back.resize(p + 1);
  for (int d = 2; d < p; ++d) order.push_back(d);
  for (int i = 0; i <= p; ++i) back[static_cast<int>(order[i])] = i;
  const Tensor<T> moved = permute(R, order);  // rows, columns, directions, the values' batch, ones
  Shape cols{R.shape()[0], R.shape()[1] * R.shape()[p]};
  for (int d = 2; d < rank; ++d) cols.push_back(R.shape()[d]);
  const Tensor<T> X = apply(ops::SavedLuSolve{trans}, A, LU, piv, reshape(moved, cols));
  return permute(reshape(X, moved.shape()), back);
}

}  // namespace detail

namespace ops {

// Outputs: X, and the saved factors (LU, pivots) and per-matrix info, which the public wrappers
// do not return.
struct Solve {
  static constexpr const char* name = "solve";
  static constexpr bool one_kernel = true;  // on the CPU, forward is one captured kernel (kernels/capture.hpp)
  static constexpr bool saves_outputs = true;
  static constexpr bool batched_jvp = true, batched_vjp = true;  // (detail::saved_lu_solve)

  // X = A^-1 B (B broadcast over A's batch), with the LU factors, pivots and info; a failed
  // matrix (singular, or inf or NaN: NaN factors and identity pivots) gets a NaN X. The device's
  // backend computes them (on the CPU one captured kernel, src/cpu/linalg_lu.cpp).
  template <class T>
  std::tuple<Tensor<T>, Tensor<T>, Tensor<std::int32_t>, Tensor<std::int32_t>> forward(const Tensor<T>& A,
                                                                                       const Tensor<T>& B) const {
    return detail::linalg_backend<T>(name, A.device()).solve(A, B);
  }

  // X = A^-1 B with A = P L U saved from the forward:
  //   dX = A^-1 (dB - dA X)                     (getrs with the saved LU)
  //   gB = A^-H gX  (getrs 'C', saved LU);   gA = -gB X^H
  // The solves are SavedLuSolve, differentiable in A to any order on the same factors.
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>& X = c.y0();
    // Small matrices, the tangent in A only: one kernel (ops/linalg/solve_tangent.hpp).
    if (c.dx0().defined() && !c.dx1().defined() &&
        detail::solve_kernels_fit(cpu::Trans::N, c.y1(), c.y2(), c.dx0(), X) && !detail::nonfinite_on_host(X))
      return std::tuple{detail::solve_tangent_small(cpu::Trans::N, c.x0(), c.y1(), c.y2(), c.dx0(), X), Tensor<T>(),
                        Tensor<std::int32_t>(), Tensor<std::int32_t>()};
    Tensor<T> r;
    if (c.dx1().defined()) r = broadcast_to(c.dx1(), c.dy0_shape());
    if (c.dx0().defined()) {
      // dA X, past X's overflowed entries when there are any (detail::matmul_past_overflow)
      const Tensor<T> t =
          detail::nonfinite_on_host(X) ? detail::matmul_past_overflow(c.dx0(), X, true) : matmul(c.dx0(), X);
      r = detail::subtract(r, t);
    }
    const Tensor<T> dX = detail::saved_lu_solve(cpu::Trans::N, c.x0(), c.y1(), c.y2(), r, X.dim());
    return std::tuple{dX, Tensor<T>(), Tensor<std::int32_t>(), Tensor<std::int32_t>()};
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>&A = c.x0(), &X = c.y0(), &gX = c.gy0();
    // Small matrices, the cotangent of A wanted: one kernel (ops/linalg/solve_tangent.hpp).
    if (c.needs(0) && detail::solve_kernels_fit(cpu::Trans::N, c.y1(), c.y2(), c.y1(), gX) && gX.shape() == X.shape() &&
        !detail::nonfinite_on_host(X)) {
      auto [gB, gA] = detail::solve_cotangent_small(cpu::Trans::N, A, c.y1(), c.y2(), gX, X);
      return std::tuple{gA, c.needs(1) ? sum_to(gB, c.x1().shape()) : Tensor<T>()};
    }
    const Tensor<T> gB = detail::saved_lu_solve(cpu::Trans::C, A, c.y1(), c.y2(), gX, X.dim());
    Tensor<T> gA;
    // gB X^H = (A^-1 B gB^H)^H: when X overflowed (detail::nonfinite_on_host), the solve of the
    // finite B gB^H, whose entries are inf only where the exact ones overflow.
    if (c.needs(0))
      gA = detail::nonfinite_on_host(X)
               ? neg(detail::saved_lu_solve(cpu::Trans::N, A, c.y1(), c.y2(), matmul(c.x1(), gB.mH()), X.dim()).mH())
               : neg(matmul(gB, X.mH()));
    return std::tuple{gA, c.needs(1) ? sum_to(gB, c.x1().shape()) : Tensor<T>()};
  }
};

}  // namespace ops

namespace linalg {
namespace detail_solve {

template <class T>
auto run(const char* op, const Tensor<T>& A, const Tensor<T>& B_in, bool left) {
  tenax::detail::check_square(op, A);
  TENAX_CHECK(B_in.defined(), op, "undefined input B (A of shape ", A.shape(), ", ", dtype_traits<T>::name, " on ",
              A.device().str(), ")");
  TENAX_CHECK(A.device() == B_in.device(), op, "A on ", A.device().str(), " and B on ", B_in.device().str());
  // A vector right-hand side (rank 1, or n x batch with A's batch) is treated as n x 1.
  // (PyTorch's rule: B is a batch of vectors when its shape is A's without one matrix dimension.)
  const bool vec = B_in.dim() == 1 ||
                   (B_in.dim() == A.dim() - 1 && B_in.dim() >= 1 && B_in.shape()[0] == A.shape()[0] &&
                    Shape(B_in.shape().begin() + 1, B_in.shape().end()) == tenax::detail::mat_batch_shape(A.shape()));
  Tensor<T> B = vec ? unsqueeze(B_in, 1) : B_in;
  tenax::detail::check_matrix(op, B, "B");
  if (!left) {
    // X A = B  <=>  A^H X^H = B^H.
    TENAX_CHECK(!vec && B.shape()[1] == A.shape()[0], op, "A of shape ", A.shape(), " does not match B of shape ",
                B_in.shape(), " (right side: X A = B needs B k x n; ", dtype_traits<T>::name, " on ", A.device().str(),
                ")");
    B = B.mH();
  }
  TENAX_CHECK(B.shape()[0] == A.shape()[0], op, "A of shape ", A.shape(), " does not match B of shape ", B_in.shape(),
              " (", dtype_traits<T>::name, " on ", A.device().str(), ")");
  const Shape ab = tenax::detail::mat_batch_shape(A.shape()), bb = tenax::detail::mat_batch_shape(B.shape());
  // The batch dimensions broadcast both ways (aligned at the first batch dimension, like every
  // tenax broadcast); checked here to name both shapes.
  Shape bc;
  bool batch_ok = true;
  for (int d = 0; d < std::max(ab.size(), bb.size()); ++d) {
    const std::int64_t x = d < ab.size() ? ab[d] : 1, y = d < bb.size() ? bb[d] : 1;
    batch_ok = batch_ok && (y == x || y == 1 || x == 1);
    bc.push_back(x == 1 ? y : x);
  }
  TENAX_CHECK(batch_ok, op, "the batch shapes of A ", ab, " and B ", bb, " do not broadcast (A ", A.shape(), ", B ",
              B_in.shape(), ", ", dtype_traits<T>::name, " on ", A.device().str(), ")");
  const std::int64_t n = A.shape()[0], k = B.shape()[1];
  Tensor<T> Ap = left ? A : A.mH();
  Tensor<T> X;
  Tensor<std::int32_t> info;
  if (numel_of(ab) == 1 && numel_of(bb) > 1) {
    // One matrix, many right-hand sides: fold B's batch into its columns, so that A is factorized
    // once (n x (k * batch)); info broadcasts back to the batch.
    const Tensor<T> Bf = reshape(B, Shape{n, k * numel_of(bb)});
    auto [Xf, LU, piv, info1] = tenax::detail::apply(ops::Solve{}, reshape(Ap, Shape{n, n}), Bf);
    (void)LU;
    (void)piv;
    X = reshape(Xf, tenax::detail::with_batch(n, k, bc));
    Shape ones;
    for (int d = 0; d < bc.size(); ++d) ones.push_back(1);
    info = broadcast_to(reshape(info1, ones), bc).contiguous();
  } else {
    // Otherwise A's batch is expanded (a view; each expanded matrix is factorized) and B's
    // broadcasts inside the op.
    if (ab != bc) Ap = broadcast_to(Ap, tenax::detail::with_batch(n, n, bc));
    auto [X1, LU, piv, info1] = tenax::detail::apply(ops::Solve{}, Ap, B);
    (void)LU;
    (void)piv;
    X = X1;
    info = info1;
  }
  Tensor<T> out = left ? X : X.mH();
  if (vec) out = squeeze(out, 1);
  return std::pair{out, info};
}

// The shape a failure names its batch element in: A's, unless A's batch was broadcast against B's
// (then the broadcast batch; a single A is named without a batch element).
template <class T>
Shape failure_shape(const Tensor<T>& A, const Tensor<std::int32_t>& info) {
  const Shape ab = tenax::detail::mat_batch_shape(A.shape());
  if (numel_of(ab) == 1 || info.shape() == ab) return A.shape();
  return tenax::detail::with_batch(A.shape()[0], A.shape()[1], info.shape());
}

inline std::string solve_failure(std::int32_t info) {
  if (info == tenax::detail::kNonFiniteInfo) return tenax::detail::kNonFiniteMessage;
  return "the matrix is singular: U(" + std::to_string(info) + ", " + std::to_string(info) + ") is exactly zero";
}

}  // namespace detail_solve

// Solves A X = B (left) or X A = B (right). B is a matrix, or a vector (n, or n x batch) treated
// as a column. Throws LinAlgError naming the batch element when A is singular or non-finite.
template <Floating T>
Tensor<T> solve(const Tensor<T>& A, const Tensor<T>& B, bool left = true) {
  auto [X, info] = detail_solve::run("solve", A, B, left);
  tenax::detail::raise_info("solve", info, detail_solve::failure_shape(A, info), dtype_traits<T>::name,
                            detail_solve::solve_failure);
  return X;
}

// As solve, without the check: info holds, per matrix, 0 on success, k > 0 when U(k, k) is exactly
// zero, -1 when the input is not finite; failed matrices give NaN solutions.
template <Floating T>
std::pair<Tensor<T>, Tensor<std::int32_t>> solve_ex(const Tensor<T>& A, const Tensor<T>& B, bool left = true) {
  return detail_solve::run("solve", A, B, left);
}

// A^-1 via solve(A, I).
template <Floating T>
Tensor<T> inv(const Tensor<T>& A) {
  tenax::detail::check_square("inv", A);
  auto [X, info] = detail_solve::run(
      "inv", A, tenax::detail::batch_eye<T>(A.shape()[0], tenax::detail::mat_batch_shape(A.shape()), A.device()), true);
  tenax::detail::raise_info("inv", info, A.shape(), dtype_traits<T>::name, detail_solve::solve_failure);
  return X;
}

template <Floating T>
std::pair<Tensor<T>, Tensor<std::int32_t>> inv_ex(const Tensor<T>& A) {
  tenax::detail::check_square("inv", A);
  return detail_solve::run(
      "inv", A, tenax::detail::batch_eye<T>(A.shape()[0], tenax::detail::mat_batch_shape(A.shape()), A.device()), true);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_SOLVE(T)                                                                                \
  TENAX_INSTANCE Tensor<T> solve(const Tensor<T>&, const Tensor<T>&, bool);                                     \
  TENAX_INSTANCE std::pair<Tensor<T>, Tensor<std::int32_t>> solve_ex(const Tensor<T>&, const Tensor<T>&, bool); \
  TENAX_INSTANCE Tensor<T> inv(const Tensor<T>&);                                                               \
  TENAX_INSTANCE std::pair<Tensor<T>, Tensor<std::int32_t>> inv_ex(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_SOLVE)

}  // namespace linalg
}  // namespace tenax
