#pragma once
// lstsq: the minimum-norm least-squares solution of A X = B for any shape and rank, through the
// pseudo-inverse (ops/linalg/pinv.hpp): one SVD per matrix (what LAPACK's gelsd computes, by
// divide and conquer), the same on every device, differentiable to any order at constant rank.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>

#include "tenax/core/instances.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/pinv.hpp"

namespace tenax {
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
    auto [P, s] = tenax::detail::apply(ops::Pinv{tol, false}, A);
    r.solution = matmul(P, B);
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
