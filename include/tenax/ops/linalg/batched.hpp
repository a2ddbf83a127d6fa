#pragma once
// Provider calls over every matrix of a contiguous batch, on the batch's device: the CPU provider
// (cpu::) or the CUDA backend (cuBLAS/cuSOLVER). Per-matrix info lands in an int32 tensor on the same
// device and is not read here, so nothing waits for the device.
//
// These are the building blocks of the device-neutral forwards (`forward_generic` of the linalg
// ops): provider calls plus public tensor ops. The CPU forwards keep their fused host loops; the
// generic forwards run for every other device, and tests run them on the CPU against the fused
// ones to check the logic they share.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tenax/backend/cpu_provider.hpp"
#include "tenax/core/deferred_checks.hpp"
#include "tenax/core/tensor.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/linalg/common.hpp"
#if defined(TENAX_HAS_CUDA)
#include "tenax/backend/cuda.hpp"
#endif

namespace tenax::detail::batched {

inline std::int64_t matrices(const Shape& s) {
  std::int64_t n = 1;
  for (int d = 2; d < s.size(); ++d) n *= s[d];
  return n;
}

// Runs on_cpu(b) for each matrix b of a batch of shape s on the CPU, or on_cuda(device index,
// number of matrices) once on a CUDA device (the backend goes over the batch itself: batched entry
// points or one call per matrix, backend/cuda_batching.hpp).
template <class Cpu, class Cuda>
void each(std::string_view op, Device dev, const Shape& s, Cpu&& on_cpu, [[maybe_unused]] Cuda&& on_cuda) {
  const std::int64_t nb = matrices(s);
  if (dev.is_cpu()) {
    for (std::int64_t b = 0; b < nb; ++b) on_cpu(b);
    return;
  }
#if defined(TENAX_HAS_CUDA)
  if (dev.is_cuda()) {
    if (nb > 0) on_cuda(static_cast<int>(dev.index), nb);
    return;
  }
#endif
  fail(op, "no kernel for device ", dev.str());
}

inline std::int64_t ld(std::int64_t rows) { return std::max<std::int64_t>(1, rows); }

// Cholesky factor in the lower triangle of each n x n matrix of a (the upper one is left as is on
// the CPU, unspecified on a device: cuSOLVER's potrfBatched may use it as workspace).
template <class T>
void potrf_lower(const Tensor<T>& a, const Tensor<std::int32_t>& info) {
  const std::int64_t n = a.shape()[0];
  T* p = a.mutable_data();
  std::int32_t* inf = info.mutable_data();
  each(
      "cholesky", a.device(), a.shape(),
      [&](std::int64_t b) { inf[b] = cpu::potrf<T>(cpu::Uplo::Lower, n, p + b * n * n, ld(n)); },
      [&]([[maybe_unused]] int dev, [[maybe_unused]] std::int64_t nb) {
#if defined(TENAX_HAS_CUDA)
        cuda::potrf<T>(dev, n, nb, p, inf);
#endif
      });
}

// LU with partial pivoting of each m x n matrix of a, a contiguous copy of src; piv is
// min(m, n) x batch (1-based, LAPACK's). On the CPU a matrix with a subnormal pivot is copied
// from src again and refactored (cpu::getrf_exact).
template <class T>
void getrf(const Tensor<T>& a, const Tensor<std::int32_t>& piv, const Tensor<std::int32_t>& info,
           const Tensor<T>& src) {
  const std::int64_t m = a.shape()[0], n = a.shape()[1], k = std::min(m, n);
  T* p = a.mutable_data();
  std::int32_t *ip = piv.mutable_data(), *inf = info.mutable_data();
  Tensor<T> original;
  each(
      "lu", a.device(), a.shape(),
      [&](std::int64_t b) {
        inf[b] = cpu::getrf_exact<T>(m, n, p + b * m * n, ld(m), ip + b * k, [&](T* dst) {
          if (!original.defined()) original = work_copy(src);
          std::copy_n(original.data() + b * m * n, m * n, dst);
        });
      },
      [&]([[maybe_unused]] int dev, [[maybe_unused]] std::int64_t nb) {
#if defined(TENAX_HAS_CUDA)
        cuda::getrf<T>(dev, m, n, nb, p, ip, inf);
#endif
      });
}

// Solves op(A_b) X_b = B_b in place of x (n x k x batch) with getrf's factors (contiguous lu, piv).
template <class T>
void getrs(cpu::Trans trans, const Tensor<T>& lu, const Tensor<std::int32_t>& piv, const Tensor<T>& x) {
  const std::int64_t n = lu.shape()[0], k = x.shape()[1];
  const T* l = lu.data();
  const std::int32_t* ip = piv.data();
  T* p = x.mutable_data();
  each(
      "lu_solve", x.device(), x.shape(),
      [&](std::int64_t b) { cpu::getrs<T>(trans, n, k, l + b * n * n, ld(n), ip + b * n, p + b * n * k, ld(n)); },
      [&]([[maybe_unused]] int dev, [[maybe_unused]] std::int64_t nb) {
#if defined(TENAX_HAS_CUDA)
        cuda::getrs<T>(dev, static_cast<char>(trans), n, k, nb, l, ip, p);
#endif
      });
}

// Householder QR of each m x n matrix of a, in place; tau is max(k, 1) x batch.
template <class T>
void geqrf(const Tensor<T>& a, const Tensor<T>& tau, const Tensor<std::int32_t>& info) {
  const std::int64_t m = a.shape()[0], n = a.shape()[1], kt = std::max<std::int64_t>(1, std::min(m, n));
  T *p = a.mutable_data(), *t = tau.mutable_data();
  std::int32_t* inf = info.mutable_data();
  each(
      "qr", a.device(), a.shape(),
      [&](std::int64_t b) { inf[b] = cpu::geqrf<T>(m, n, p + b * m * n, ld(m), t + b * kt); },
      [&]([[maybe_unused]] int dev, [[maybe_unused]] std::int64_t nb) {
#if defined(TENAX_HAS_CUDA)
        cuda::geqrf<T>(dev, m, n, nb, p, t, inf);
#endif
      });
}

// The m x c matrices q (c <= m) overwritten by the first c columns of Q from geqrf's k reflectors
// (stored in q's first k columns) and tau (max(k, 1) x batch).
template <class T>
void orgqr(const Tensor<T>& q, std::int64_t k, const Tensor<T>& tau, const Tensor<std::int32_t>& info) {
  const std::int64_t m = q.shape()[0], c = q.shape()[1], kt = std::max<std::int64_t>(1, k);
  T* p = q.mutable_data();
  const T* t = tau.data();
  std::int32_t* inf = info.mutable_data();
  each(
      "qr", q.device(), q.shape(),
      [&](std::int64_t b) { inf[b] = cpu::orgqr<T>(m, c, k, p + b * m * c, ld(m), t + b * kt); },
      [&]([[maybe_unused]] int dev, [[maybe_unused]] std::int64_t nb) {
#if defined(TENAX_HAS_CUDA)
        cuda::orgqr<T>(dev, m, c, k, nb, p, t, inf);
#endif
      });
}

// Eigenvalues (ascending, w: n x batch) and, if vectors, eigenvectors in place of each Hermitian
// n x n matrix of a given by its upper or lower triangle.
template <class T>
void syevd(bool vectors, bool upper, const Tensor<T>& a, const Tensor<real_t<T>>& w, const Tensor<std::int32_t>& info) {
  const std::int64_t n = a.shape()[0];
  T* p = a.mutable_data();
  real_t<T>* wp = w.mutable_data();
  std::int32_t* inf = info.mutable_data();
  const cpu::Uplo uplo = upper ? cpu::Uplo::Upper : cpu::Uplo::Lower;
  each(
      "eigh", a.device(), a.shape(),
      [&](std::int64_t b) { inf[b] = cpu::syevd<T>(vectors, uplo, n, p + b * n * n, ld(n), wp + b * n); },
      [&]([[maybe_unused]] int dev, [[maybe_unused]] std::int64_t nb) {
#if defined(TENAX_HAS_CUDA)
        cuda::syevd<T, real_t<T>>(dev, vectors, static_cast<char>(uplo), n, nb, p, wp, inf);
#endif
      });
}

// SVD of each m x n matrix of a (destroyed): s (k x batch, descending), and when u is defined U
// (m x uc) and Vh (vr x n), uc = vr = k (thin) or m and n (full). The CPU runs gesdd; CUDA runs
// gesvdj, whose V is conjugate-transposed into Vh.
template <class T>
void gesvd(const Tensor<T>& a, const Tensor<real_t<T>>& s, const Tensor<T>& u, const Tensor<T>& vh,
           const Tensor<std::int32_t>& info) {
  const std::int64_t m = a.shape()[0], n = a.shape()[1], k = std::min(m, n);
  const bool vectors = u.defined();
  const std::int64_t uc = vectors ? u.shape()[1] : 0, vr = vectors ? vh.shape()[0] : 0;
  const char jobz = !vectors ? 'N' : uc == k && vr == k ? 'S' : 'A';
  T* p = a.mutable_data();
  real_t<T>* sp = s.mutable_data();
  T* up = vectors ? u.mutable_data() : nullptr;
  std::int32_t* inf = info.mutable_data();
  if (a.device().is_cpu()) {
    T* vp = vectors ? vh.mutable_data() : nullptr;
    each(
        "svd", a.device(), a.shape(),
        [&](std::int64_t b) {
          inf[b] = cpu::gesdd<T>(jobz, m, n, p + b * m * n, ld(m), sp + b * k, vectors ? up + b * m * uc : nullptr,
                                 ld(m), vectors ? vp + b * vr * n : nullptr, ld(vr));
        },
        [](int, std::int64_t) {});
    return;
  }
  // V (n x vr) on the device, then Vh = V^H.
  Shape vs{n, vr};
  for (int d = 2; d < a.dim(); ++d) vs.push_back(a.shape()[d]);
  [[maybe_unused]] const Tensor<T> v = vectors ? Tensor<T>::empty(vs, a.device()) : Tensor<T>();
  each(
      "svd", a.device(), a.shape(), [](std::int64_t) {},
      [&]([[maybe_unused]] int dev, [[maybe_unused]] std::int64_t nb) {
#if defined(TENAX_HAS_CUDA)
        cuda::gesvdj<T, real_t<T>>(dev, vectors, jobz != 'A', m, n, nb, p, sp, up, uc,
                                   vectors ? v.mutable_data() : nullptr, vr, inf);
#endif
      });
  if (vectors) copy_into(vh, v.mH());
}

// Rows gathered by a 0-based permutation on a device: out[i, :, b] = x[perm[i, b], :, b] (contiguous x,
// out). The CPU gathers in ops::PermuteRows itself, straight from strided views.
template <class T>
void permute_rows(const Tensor<T>& x, [[maybe_unused]] const Tensor<std::int64_t>& perm,
                  [[maybe_unused]] const Tensor<T>& out) {
#if defined(TENAX_HAS_CUDA)
  if (x.device().is_cuda()) {
    cuda::permute_rows<T>(x.device().index, x.shape()[0], x.shape()[1], matrices(x.shape()), x.data(), perm.data(),
                          out.mutable_data());
    return;
  }
#endif
  fail("permute_rows", "no kernel for device ", x.device().str());
}

// LAPACK pivots (k x batch, contiguous, on a CUDA device) checked against 1..m on the device:
// perm (when defined: m x batch) receives the permutation they apply and safe (when defined, like
// piv) the pivots with each invalid one replaced by no interchange, so no kernel indexes outside a
// matrix. An invalid pivot raises op's error (as check_pivots on the CPU) when the device's
// results are next read (core/deferred_checks.hpp); nothing waits for the device here.
inline void check_pivots_on_device(std::string_view op, const Tensor<std::int32_t>& piv,
                                   [[maybe_unused]] std::int64_t m, [[maybe_unused]] const Tensor<std::int64_t>& perm,
                                   [[maybe_unused]] const Tensor<std::int32_t>& safe) {
  std::int64_t nb = 1;
  for (int d = 1; d < piv.dim(); ++d) nb *= piv.shape()[d];
  if (nb == 0) return;
#if defined(TENAX_HAS_CUDA)
  if (piv.device().is_cuda()) {
    const Tensor<std::int32_t> bad = Tensor<std::int32_t>::empty({2, nb}, piv.device());
    cuda::check_pivots(piv.device().index, piv.shape()[0], m, nb, piv.data(),
                       perm.defined() ? perm.mutable_data() : nullptr, safe.defined() ? safe.mutable_data() : nullptr,
                       bad.mutable_data());
    defer_check(bad.impl(), [op = std::string(op), m, shape = piv.shape(), dev = piv.device()](
                                const std::int32_t* codes, std::int64_t n) {
      for (std::int64_t b = 0; b < n / 2; ++b)
        if (codes[2 * b] != 0) bad_pivot(op, codes[2 * b] - 1, b, codes[2 * b + 1], m, shape, dev);
    });
    return;
  }
#endif
  fail(op, "no kernel for device ", piv.device().str());
}

// inv[perm[i, b], b] = i on a CUDA device (perm contiguous, m x batch).
inline void inverse_permutation([[maybe_unused]] const Tensor<std::int64_t>& perm,
                                [[maybe_unused]] const Tensor<std::int64_t>& inv) {
#if defined(TENAX_HAS_CUDA)
  if (perm.device().is_cuda()) {
    cuda::inverse_permutation(perm.device().index, perm.shape()[0],
                              perm.numel() / std::max<std::int64_t>(1, perm.shape()[0]), perm.data(),
                              inv.mutable_data());
    return;
  }
#endif
  fail("inverse_permutation", "no kernel for device ", perm.device().str());
}

// Triangular BLAS in place of x (m x n x batch, contiguous) with the triangular matrices of a,
// matrix b at element offset aoff[b] with leading dimension lda: solves (trsm, solve_triangular)
// or products (trmm, triangular_matmul).
enum class TriangularBlas { trsm, trmm };
// One CPU provider call of R in place of x (m x n, leading dimension ldx).
template <TriangularBlas R, class T>
void cpu_triangular(cpu::Side side, cpu::Uplo uplo, cpu::Trans trans, cpu::Diag diag, std::int64_t m, std::int64_t n,
                    const T* a, std::int64_t lda, T* x, std::int64_t ldx) {
  if constexpr (R == TriangularBlas::trsm)
    cpu::trsm<T>(side, uplo, trans, diag, m, n, T(1), a, lda, x, ldx);
  else
    cpu::trmm<T>(side, uplo, trans, diag, m, n, T(1), a, lda, x, ldx);
}
template <TriangularBlas R, class T>
void triangular(cpu::Side side, cpu::Uplo uplo, cpu::Trans trans, cpu::Diag diag, const Tensor<T>& a,
                const std::vector<std::int64_t>& aoff, std::int64_t lda, const Tensor<T>& x) {
  constexpr bool solve = R == TriangularBlas::trsm;
  const std::int64_t m = x.shape()[0], n = x.shape()[1];
  const T* ap = a.data();
  T* p = x.mutable_data();
  each(
      solve ? "solve_triangular" : "triangular_matmul", x.device(), x.shape(),
      [&](std::int64_t b) {
        cpu_triangular<R>(side, uplo, trans, diag, m, n, ap + aoff[static_cast<std::size_t>(b)], lda, p + b * m * n,
                          ld(m));
      },
      [&]([[maybe_unused]] int dev, [[maybe_unused]] std::int64_t nb) {
#if defined(TENAX_HAS_CUDA)
        const char sc = static_cast<char>(side), uc = static_cast<char>(uplo), tc = static_cast<char>(trans),
                   dc = static_cast<char>(diag);
        // Triangles at a uniform stride (one per matrix, or one for all): one strided call.
        const std::int64_t stride = nb > 1 ? aoff[1] - aoff[0] : 0;
        bool uniform = true;
        for (std::int64_t b = 1; b < nb && uniform; ++b)
          uniform = aoff[static_cast<std::size_t>(b)] == aoff[0] + b * stride;
        if (solve && uniform) {
          cuda::trsm_strided<T>(dev, sc, uc, tc, dc, m, n, ap + aoff[0], lda, stride, p, nb);
          return;
        }
        for (std::int64_t b = 0; b < nb; ++b) {
          const T* ab = ap + aoff[static_cast<std::size_t>(b)];
          if constexpr (solve)
            cuda::trsm<T>(dev, sc, uc, tc, dc, m, n, ab, lda, p + b * m * n, ld(m));
          else
            cuda::trmm<T>(dev, sc, uc, tc, dc, m, n, ab, lda, p + b * m * n, ld(m));
        }
#endif
      });
}

// getrf of a copy of A (m x n x batch) on A's device: (LU, pivots min(m, n) x batch, info). As
// the CPU kernels: a matrix with inf or NaN has info kNonFiniteInfo, NaN factors and identity
// pivots (mark_nonfinite_lu).
template <class T>
std::tuple<Tensor<T>, Tensor<std::int32_t>, Tensor<std::int32_t>> lu_of(const Tensor<T>& A) {
  const Device dev = A.device();
  const Shape batch = mat_batch_shape(A.shape());
  const std::int64_t k = std::min(A.shape()[0], A.shape()[1]);
  Shape ps{k};
  for (auto d : batch) ps.push_back(d);
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
