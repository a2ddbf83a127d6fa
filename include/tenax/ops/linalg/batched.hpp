#pragma once
// Backend calls over every matrix of a contiguous batch, on the batch's device, through the
// device's backend (backend/backend.hpp): the CPU provider per matrix, or cuBLAS/cuSOLVER on a
// CUDA device. Per-matrix info lands in an int32 tensor on the same device and is not read here,
// so nothing waits for the device.
//
// These are the building blocks of the device backends' factorizations (backend/generic_linalg.hpp):
// backend calls plus public tensor ops; tests run those on the CPU against the CPU's fused kernels.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tenax/backend/backend.hpp"
#include "tenax/backend/cpu_provider.hpp"
#include "tenax/core/deferred_checks.hpp"
#include "tenax/core/tensor.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/linalg/common.hpp"

namespace tenax::detail::batched {

inline std::int64_t matrices(const Shape& s) {
  std::int64_t n = 1;
  for (int d = 2; d < s.size(); ++d) n *= s[d];
  return n;
}

// The linear algebra of T on the device of a batch of shape s, and the number of matrices in it.
template <class T>
struct On {
  const BatchedLinalg<T>& be;
  int dev;
  std::int64_t nb;
};
template <class T>
On<T> on(std::string_view op, const Tensor<T>& a) {
  return {linalg_backend<T>(op, a.device()), a.device().index, matrices(a.shape())};
}

// Cholesky factor in the lower triangle of each n x n matrix of a (the upper one is left as is on
// the CPU, unspecified on a device: cuSOLVER's potrfBatched may use it as workspace).
template <class T>
void potrf_lower(const Tensor<T>& a, const Tensor<std::int32_t>& info) {
  const auto [be, dev, nb] = on("cholesky", a);
  if (nb > 0) be.potrf(dev, a.shape()[0], nb, a.mutable_data(), info.mutable_data());
}

// LU with partial pivoting of each m x n matrix of a, a contiguous copy of src; piv is
// min(m, n) x batch (1-based, LAPACK's). A matrix the backend factors again from its original
// entries (the CPU's subnormal pivots) is copied from src again.
template <class T>
void getrf(const Tensor<T>& a, const Tensor<std::int32_t>& piv, const Tensor<std::int32_t>& info,
           const Tensor<T>& src) {
  const auto [be, dev, nb] = on("lu", a);
  const std::int64_t m = a.shape()[0], n = a.shape()[1];
  Tensor<T> original;
  if (nb > 0)
    be.getrf(dev, m, n, nb, a.mutable_data(), piv.mutable_data(), info.mutable_data(), [&](std::int64_t b, T* dst) {
      if (!original.defined()) original = work_copy(src);
      std::copy_n(original.data() + b * m * n, m * n, dst);
    });
}

// Solves op(A_b) X_b = B_b in place of x (n x k x batch) with getrf's factors (contiguous lu, piv).
template <class T>
void getrs(blas::Trans trans, const Tensor<T>& lu, const Tensor<std::int32_t>& piv, const Tensor<T>& x) {
  const auto [be, dev, nb] = on("lu_solve", x);
  if (nb > 0) be.getrs(dev, trans, lu.shape()[0], x.shape()[1], nb, lu.data(), piv.data(), x.mutable_data());
}

// Householder QR of each m x n matrix of a, in place; tau is max(k, 1) x batch.
template <class T>
void geqrf(const Tensor<T>& a, const Tensor<T>& tau, const Tensor<std::int32_t>& info) {
  const auto [be, dev, nb] = on("qr", a);
  if (nb > 0) be.geqrf(dev, a.shape()[0], a.shape()[1], nb, a.mutable_data(), tau.mutable_data(), info.mutable_data());
}

// The m x c matrices q (c <= m) overwritten by the first c columns of Q from geqrf's k reflectors
// (stored in q's first k columns) and tau (max(k, 1) x batch).
template <class T>
void orgqr(const Tensor<T>& q, std::int64_t k, const Tensor<T>& tau, const Tensor<std::int32_t>& info) {
  const auto [be, dev, nb] = on("qr", q);
  if (nb > 0) be.orgqr(dev, q.shape()[0], q.shape()[1], k, nb, q.mutable_data(), tau.data(), info.mutable_data());
}

// Eigenvalues (ascending, w: n x batch) and, if vectors, eigenvectors in place of each Hermitian
// n x n matrix of a given by its upper or lower triangle.
template <class T>
void syevd(bool vectors, bool upper, const Tensor<T>& a, const Tensor<real_t<T>>& w, const Tensor<std::int32_t>& info) {
  const auto [be, dev, nb] = on("eigh", a);
  if (nb > 0)
    be.syevd(dev, vectors, upper ? blas::Uplo::Upper : blas::Uplo::Lower, a.shape()[0], nb, a.mutable_data(),
             w.mutable_data(), info.mutable_data());
}

// Eigenvalues (w: n x batch, complex) and, when v is defined, right eigenvectors (n x n x batch,
// complex, unit columns with the backend's phases) of each general n x n matrix of a (destroyed).
template <class T>
void geev(const Tensor<T>& a, const Tensor<std::complex<real_t<T>>>& w, const Tensor<std::complex<real_t<T>>>& v,
          const Tensor<std::int32_t>& info) {
  const auto [be, dev, nb] = on("eig", a);
  if (nb > 0)
    be.geev(dev, a.shape()[0], nb, a.mutable_data(), w.mutable_data(), v.defined() ? v.mutable_data() : nullptr,
            info.mutable_data());
}

// SVD of each m x n matrix of a (destroyed): s (k x batch, descending), and when u is defined U
// (m x uc) and Vh (vr x n), uc = vr = k (thin) or m and n (full).
template <class T>
void gesvd(const Tensor<T>& a, const Tensor<real_t<T>>& s, const Tensor<T>& u, const Tensor<T>& vh,
           const Tensor<std::int32_t>& info) {
  const auto [be, dev, nb] = on("svd", a);
  const bool vectors = u.defined();
  if (nb > 0)
    be.gesvd(dev, a.shape()[0], a.shape()[1], nb, a.mutable_data(), s.mutable_data(),
             vectors ? u.mutable_data() : nullptr, vectors ? u.shape()[1] : 0, vectors ? vh.mutable_data() : nullptr,
             vectors ? vh.shape()[0] : 0, info.mutable_data());
}

// Rows gathered by a 0-based permutation: out[i, :, b] = x[perm[i, b], :, b] (contiguous x, out).
template <class T>
void permute_rows(const Tensor<T>& x, const Tensor<std::int64_t>& perm, const Tensor<T>& out) {
  const std::int64_t nb = matrices(x.shape());
  if (nb > 0 && x.numel() > 0)
    backend_for("permute_rows", x.device())
        .kernels->permute_rows(x.device().index, x.shape()[0], x.shape()[1], nb, x.impl()->data(), perm.data(),
                               out.impl()->data(), sizeof(T));
}

// LAPACK pivots (k x batch, contiguous) checked against 1..m on their device: perm (when defined:
// m x batch) receives the permutation they apply and safe (when defined, like piv) the pivots
// with each invalid one replaced by no interchange, so no kernel indexes outside a matrix. An
// invalid pivot raises op's error (as check_pivots) when the device's results are next read
// (core/deferred_checks.hpp); nothing waits for the device here. (The CPU checks its pivots at
// once, with detail::check_pivots.)
inline void check_pivots_on_device(std::string_view op, const Tensor<std::int32_t>& piv, std::int64_t m,
                                   const Tensor<std::int64_t>& perm, const Tensor<std::int32_t>& safe) {
  std::int64_t nb = 1;
  for (int d = 1; d < piv.dim(); ++d) nb *= piv.shape()[d];
  if (nb == 0) return;
  const Tensor<std::int32_t> bad = Tensor<std::int32_t>::empty({2, nb}, piv.device());
  backend_for(op, piv.device())
      .kernels->check_pivots(piv.device().index, piv.shape()[0], m, nb, piv.data(),
                             perm.defined() ? perm.mutable_data() : nullptr,
                             safe.defined() ? safe.mutable_data() : nullptr, bad.mutable_data());
  defer_check(bad.impl(), [op = std::string(op), m, shape = piv.shape(), dev = piv.device()](const std::int32_t* codes,
                                                                                             std::int64_t n) {
    for (std::int64_t b = 0; b < n / 2; ++b)
      if (codes[2 * b] != 0) bad_pivot(op, codes[2 * b] - 1, b, codes[2 * b + 1], m, shape, dev);
  });
}

// inv[perm[i, b], b] = i (perm contiguous, m x batch).
inline void inverse_permutation(const Tensor<std::int64_t>& perm, const Tensor<std::int64_t>& inv) {
  const std::int64_t m = perm.shape()[0];
  backend_for("inverse_permutation", perm.device())
      .kernels->inverse_permutation(perm.device().index, m, perm.numel() / std::max<std::int64_t>(1, m), perm.data(),
                                    inv.mutable_data());
}

using detail::TriangularBlas;
// One CPU provider call of R in place of x (m x n, leading dimension ldx): the fused CPU kernel of
// solve_triangular and triangular_matmul (ops/linalg/triangular.hpp).
template <TriangularBlas R, class T>
void cpu_triangular(cpu::Side side, cpu::Uplo uplo, cpu::Trans trans, cpu::Diag diag, std::int64_t m, std::int64_t n,
                    const T* a, std::int64_t lda, T* x, std::int64_t ldx) {
  if constexpr (R == TriangularBlas::trsm)
    cpu::trsm<T>(side, uplo, trans, diag, m, n, T(1), a, lda, x, ldx);
  else
    cpu::trmm<T>(side, uplo, trans, diag, m, n, T(1), a, lda, x, ldx);
}

// Triangular BLAS in place of x (m x n x batch, contiguous) with the triangular matrices of a,
// matrix b at element offset aoff[b] with leading dimension lda: solves (trsm, solve_triangular)
// or products (trmm, triangular_matmul).
template <TriangularBlas R, class T>
void triangular(blas::Side side, blas::Uplo uplo, blas::Trans trans, blas::Diag diag, const Tensor<T>& a,
                const BatchOffsets& aoff, std::int64_t lda, const Tensor<T>& x) {
  const auto [be, dev, nb] = on(R == TriangularBlas::trsm ? "solve_triangular" : "triangular_matmul", x);
  if (nb > 0)
    be.triangular(dev, R, side, uplo, trans, diag, x.shape()[0], x.shape()[1], a.data(), aoff.data(), lda,
                  x.mutable_data(), nb);
}

// getrf of a copy of A (m x n x batch) on A's device: (LU, pivots min(m, n) x batch, info). As
// the CPU kernels: a matrix with inf or NaN has info kNonFiniteInfo, NaN factors and identity
// pivots (mark_nonfinite_lu).
template <class T>
std::tuple<Tensor<T>, Tensor<std::int32_t>, Tensor<std::int32_t>> lu_of(const Tensor<T>& A) {
  const Device dev = A.device();
  const Shape batch = mat_batch_shape(A.shape());
  const std::int64_t k = std::min(A.shape()[0], A.shape()[1]);
  const Shape ps = with_batch(k, batch);
  Tensor<std::int32_t> piv = Tensor<std::int32_t>::zeros(ps, dev);
  Tensor<std::int32_t> info = Tensor<std::int32_t>::zeros(batch, dev);
  if (A.numel() == 0) return {work_copy(A), piv, info};
  // A matrix with inf or NaN is zeroed before the solver sees it (batched LU kernels are not
  // documented to carry NaN through safely); its results are replaced below. The zeroed copy is
  // the work copy.
  const Tensor<std::int32_t> nonfinite = with_nonfinite(info, A);
  Tensor<T> LU = contiguous(fill_where_failed(A, nonfinite, T(0)));
  getrf(LU, piv, info, A);
  info = where(eq(nonfinite, Tensor<std::int32_t>::scalar(0, dev)), info, nonfinite);
  Shape s1{1, 1}, p1{1};
  for (auto d : batch) {
    s1.push_back(d);
    p1.push_back(d);
  }
  const Tensor<bool> bad = eq(info, Tensor<std::int32_t>::scalar(kNonFiniteInfo, dev));
  LU = where(reshape(bad, s1), Tensor<T>::scalar(T(std::numeric_limits<real_t<T>>::quiet_NaN()), dev), LU);
  piv = where(reshape(bad, p1), identity_pivots(k, dev), piv);
  return {contiguous(LU), contiguous(piv), info};
}

}  // namespace tenax::detail::batched
