#pragma once
// The factorizations of the linalg ops on any device that has the batched routines of
// backend/backend.hpp: the routines (detail::batched, on the input's device) plus public tensor
// ops. A device backend's BatchedLinalg forwards its factorizations here (cuda/src/backend.cpp);
// test_linalg_generic runs them on the CPU against the CPU's fused kernels. Output conventions
// are the ops' (ops/linalg/*.hpp).
#include <cstdint>
#include <tuple>
#include <vector>

#include "tenax/linalg.hpp"
#include "tenax/ops/linalg/batched.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/spectral.hpp"
#include "tenax/tenax.hpp"

namespace tenax::detail::generic {

// potrf per matrix; a matrix with inf or NaN (in its lower triangle) gets info kNonFiniteInfo and
// a failed one NaN factors.
template <class T>
std::tuple<Tensor<T>, Tensor<std::int32_t>> cholesky(const Tensor<T>& A) {
  const Device dev = A.device();
  Tensor<T> L = work_copy(A);
  Tensor<std::int32_t> info = Tensor<std::int32_t>::zeros(mat_batch_shape(A.shape()), dev);
  if (L.numel() == 0) return {L, info};
  batched::potrf_lower(L, info);
  info = with_nonfinite(info, tril(A));
  return {nan_where_failed(tril(L), info), info};
}

// geqrf and orgqr per matrix. A non-finite input raises as on the CPU, on a device when its
// results are next read (geqrf only carries the NaN through; it does not iterate).
template <class T>
std::tuple<Tensor<T>, Tensor<T>> qr(const Tensor<T>& A, bool complete, bool compute_q, bool positive_diag) {
  const Device dev = A.device();
  const std::int64_t m = A.shape()[0], n = A.shape()[1], k = std::min(m, n);
  const Shape batch = mat_batch_shape(A.shape());
  const std::int64_t qc = complete ? m : k, rr = complete ? m : k;
  const Tensor<std::int32_t> nonfinite = check_finite_input("qr", A);
  // The work copy, with a non-finite matrix (which raises above) zeroed so that the solver never
  // sees it.
  Tensor<T> work = A.numel() > 0 ? contiguous(fill_where_failed(A, nonfinite, T(0))) : work_copy(A);
  Tensor<T> tau = Tensor<T>::zeros(with_batch(std::max<std::int64_t>(k, 1), batch), dev);
  Tensor<std::int32_t> info = Tensor<std::int32_t>::zeros(batch, dev);
  if (work.numel() > 0) batched::geqrf(work, tau, info);
  Tensor<T> R = contiguous(triu(slice(work, 0, 0, rr)));
  Tensor<T> Q;
  if (compute_q) {
    // Q's first min(n, qc) columns hold the reflectors; the rest (complete mode, m > n) start at 0.
    Q = qc <= n ? contiguous(slice(work, 1, 0, qc))
                : concat(std::vector<Tensor<T>>{work, Tensor<T>::zeros(with_batch(m, qc - n, batch), dev)}, 1);
    // With no reflectors (n = 0, complete mode) Q is I: LAPACK's orgqr writes it for k = 0, but
    // cuSOLVER does not document that case, so it is not asked.
    if (Q.numel() > 0 && k == 0) Q = contiguous(expand(Tensor<T>::eye(m, m, dev), Q.shape()));
    if (Q.numel() > 0 && k > 0) batched::orgqr(Q, k, tau, info);
  }
  if (positive_diag && k > 0) {
    // Rows i < k of R and columns i < k of Q change sign where Re R(i, i) < 0.
    Tensor<T> s = where(lt(real(diagonal(slice(R, 0, 0, k))), Tensor<real_t<T>>::scalar(0, dev)),
                        Tensor<T>::scalar(T(-1), dev), Tensor<T>::scalar(T(1), dev));
    auto pad = [&](std::int64_t len) {
      if (len == k) return s;
      return concat(std::vector<Tensor<T>>{s, Tensor<T>::ones(with_batch(len - k, batch), dev)}, 0);
    };
    R = mul(R, unsqueeze(pad(rr), 1));
    if (compute_q) Q = mul(Q, as_row(pad(qc)));
  }
  return {Q, R};
}

// syevd per matrix. The canonical gauge is applied on the host (a copy there and back).
template <class T>
std::tuple<Tensor<real_t<T>>, Tensor<T>, Tensor<std::int32_t>, Tensor<T>> eigh(const Tensor<T>& A, bool upper,
                                                                               bool vectors, bool canonical) {
  using R = real_t<T>;
  const Device dev = A.device();
  const std::int64_t n = A.shape()[0];
  const Shape batch = mat_batch_shape(A.shape());
  Tensor<T> V = work_copy(A);
  Tensor<R> w = Tensor<R>::empty(with_batch(n, batch), dev);
  Tensor<std::int32_t> info = Tensor<std::int32_t>::zeros(batch, dev);
  if (V.numel() > 0) {
    // A non-finite matrix is replaced by zeros before the solver sees it (eigensolvers can
    // iterate without end on inf/NaN); its outputs become NaN below.
    info = with_nonfinite(info, upper ? triu(A) : tril(A));
    V = contiguous(fill_where_failed(V, info, T(0)));
    Tensor<std::int32_t> solver_info = Tensor<std::int32_t>::zeros(batch, dev);
    batched::syevd(vectors, upper, V, w, solver_info);
    info = where(eq(info, Tensor<std::int32_t>::scalar(0, dev)), solver_info, info);
    w = nan_where_failed(w, info);
    if (vectors) V = nan_where_failed(V, info);
  }
  Tensor<T> E;
  if (canonical && vectors) {
    Tensor<T> host = V.to(Device::cpu());  // V itself on the CPU
    E = canonicalize_columns(host, Tensor<T>()).to(dev);
    V = host.to(dev);
  }
  return {w, vectors ? V : Tensor<T>(), info, E};
}

// geev of the device per matrix (its eigenvectors already in the backend's phase convention).
// Non-finite inputs are flagged first, replaced by zeros for the solver, and their outputs filled
// with NaN.
template <class T>
std::tuple<Tensor<std::complex<real_t<T>>>, Tensor<std::complex<real_t<T>>>, Tensor<std::int32_t>> eig(
    const Tensor<T>& A, bool vectors) {
  using C = std::complex<real_t<T>>;
  const Device dev = A.device();
  const std::int64_t n = A.shape()[0];
  const Shape batch = mat_batch_shape(A.shape());
  Tensor<C> w = Tensor<C>::empty(with_batch(n, batch), dev);
  Tensor<C> V = vectors ? Tensor<C>::empty(A.shape(), dev) : Tensor<C>();
  Tensor<std::int32_t> info = Tensor<std::int32_t>::zeros(batch, dev);
  if (A.numel() > 0) {
    info = with_nonfinite(info, A);
    const Tensor<T> work = contiguous(fill_where_failed(A, info, T(0)));
    Tensor<std::int32_t> solver_info = Tensor<std::int32_t>::zeros(batch, dev);
    batched::geev(work, w, V, solver_info);
    info = where(eq(info, Tensor<std::int32_t>::scalar(0, dev)), solver_info, info);
    w = nan_where_failed(w, info);
    if (vectors) V = nan_where_failed(V, info);
  }
  return {w, V, info};
}

// gesvd of the device (gesdd on the CPU, gesvdj on CUDA) per matrix. Non-finite inputs are
// flagged first and their outputs filled with NaN; the canonical gauge runs on a host copy.
template <class T>
std::tuple<Tensor<T>, Tensor<real_t<T>>, Tensor<T>, Tensor<std::int32_t>, Tensor<T>> svd(const Tensor<T>& A,
                                                                                         bool full_matrices,
                                                                                         bool compute_uv,
                                                                                         bool canonical) {
  using R = real_t<T>;
  const Device dev = A.device();
  const std::int64_t m = A.shape()[0], n = A.shape()[1], k = std::min(m, n);
  const Shape batch = mat_batch_shape(A.shape());
  const std::int64_t uc = full_matrices ? m : k, vr = full_matrices ? n : k;
  Tensor<T> work = work_copy(A);
  Tensor<R> S = Tensor<R>::empty(with_batch(k, batch), dev);
  Tensor<T> U = compute_uv ? Tensor<T>::empty(with_batch(m, uc, batch), dev) : Tensor<T>();
  Tensor<T> Vh = compute_uv ? Tensor<T>::empty(with_batch(vr, n, batch), dev) : Tensor<T>();
  Tensor<std::int32_t> info = Tensor<std::int32_t>::zeros(batch, dev);
  if (work.numel() > 0) {
    // A non-finite matrix is replaced by zeros before the solver sees it (reference gesdd can
    // loop forever on inf/NaN); its outputs become NaN below.
    info = with_nonfinite(info, A);
    work = contiguous(fill_where_failed(work, info, T(0)));
    Tensor<std::int32_t> solver_info = Tensor<std::int32_t>::zeros(batch, dev);
    batched::gesvd(work, S, U, Vh, solver_info);
    info = where(eq(info, Tensor<std::int32_t>::scalar(0, dev)), solver_info, info);
    S = nan_where_failed(S, info);
    if (compute_uv) {
      U = nan_where_failed(U, info);
      Vh = nan_where_failed(Vh, info);
    }
  } else if (compute_uv && (U.numel() > 0 || Vh.numel() > 0)) {
    // An empty A (m or n is 0) still has full unitary factors: identities.
    if (U.numel() > 0) U = contiguous(expand(Tensor<T>::eye(m, uc, dev), U.shape()));
    if (Vh.numel() > 0) Vh = contiguous(expand(Tensor<T>::eye(vr, n, dev), Vh.shape()));
  }
  Tensor<T> E;
  if (canonical && compute_uv) {
    Tensor<T> Uh = U.to(Device::cpu()), V = work_copy(Vh.mH().to(Device::cpu()));
    E = canonicalize_columns(Uh, V).to(dev);
    U = Uh.to(dev);
    Vh = work_copy(V.mH()).to(dev);
  }
  return {U, S, Vh, info, E};
}

// getrf per matrix (batched::lu_of: a matrix with inf or NaN gets NaN factors and identity pivots).
template <class T>
std::tuple<Tensor<T>, Tensor<std::int32_t>, Tensor<std::int32_t>> lu_factor(const Tensor<T>& A) {
  return batched::lu_of(A);
}

// getrf, then L, U and P unpacked by tensor ops.
template <class T>
std::tuple<Tensor<T>, Tensor<T>, Tensor<T>, Tensor<std::int32_t>, Tensor<std::int32_t>> lu(const Tensor<T>& A) {
  const std::int64_t m = A.shape()[0], n = A.shape()[1], k = std::min(m, n);
  const Shape batch = mat_batch_shape(A.shape());
  const Device dev = A.device();
  auto [LU, piv, info] = batched::lu_of(A);
  Tensor<T> L = add(tril(slice(LU, 1, 0, k), -1), expand(Tensor<T>::eye(m, k, dev), with_batch(m, k, batch)));
  Tensor<T> U = triu(slice(LU, 0, 0, k));
  // P[perm[i], i] = 1: the transpose of the identity's rows gathered by perm.
  Tensor<T> P = contiguous(
      permute_rows(expand(Tensor<T>::eye(m, m, dev), with_batch(m, m, batch)), pivots_to_permutation(piv, m)).mT());
  return {P, L, U, piv, info};
}

// getrf and getrs per matrix; a failed matrix's X is NaN.
template <class T>
std::tuple<Tensor<T>, Tensor<T>, Tensor<std::int32_t>, Tensor<std::int32_t>> solve(const Tensor<T>& A,
                                                                                   const Tensor<T>& B) {
  const std::int64_t n = A.shape()[0], k = B.shape()[1];
  auto [LU, piv, info] = batched::lu_of(A);
  Tensor<T> X = Tensor<T>::empty(with_batch(n, k, mat_batch_shape(A.shape())), A.device());
  copy_into(X, expand(B, X.shape()));
  if (LU.numel() == 0) return {X, LU, piv, info};
  if (X.numel() > 0) batched::getrs(blas::Trans::N, LU, piv, X);
  return {nan_where_failed(X, info), LU, piv, info};
}

// getrf per matrix, then tensor ops: the same arithmetic in the same order as the CPU's fused
// loop: sign = (pivot parity) * prod(u_ii / |u_ii|), log|det| = sum(log |u_ii|); 0 and -inf at an
// exactly zero pivot; NaN for non-finite input.
template <class T>
std::tuple<Tensor<T>, Tensor<real_t<T>>, Tensor<T>, Tensor<std::int32_t>> slogdet(const Tensor<T>& A) {
  using R = real_t<T>;
  const Device dev = A.device();
  const std::int64_t n = A.shape()[0];
  const Shape batch = mat_batch_shape(A.shape());
  auto [LU, piv, info] = batched::lu_of(A);
  if (n == 0) return {Tensor<T>::ones(batch, dev), Tensor<R>::zeros(batch, dev), LU, piv};
  const Tensor<T> u = diagonal(LU);  // n x batch
  const Tensor<R> a = abs(u);
  const Tensor<std::int32_t> ident = identity_pivots(n, dev);
  const Tensor<T> swaps =
      prod(where(ne(piv, ident), Tensor<T>::scalar(T(-1), dev), Tensor<T>::scalar(T(1), dev)), {0}, false);
  // An exactly zero pivot is getrf's info > 0, as the fused loop stops at the first one (what a
  // solver leaves in later pivots is not looked at).
  const Tensor<bool> zero = gt(info, Tensor<std::int32_t>::scalar(0, dev));
  Tensor<T> sign = where(zero, Tensor<T>::scalar(T(0), dev), mul(swaps, prod(tenax::sign(u), {0}, false)));
  Tensor<R> logabs = where(zero, Tensor<R>::scalar(-std::numeric_limits<R>::infinity(), dev), sum(log(a), {0}, false));
  // NaN for non-finite input only (a zero pivot, info > 0, is the exact 0 / -inf above).
  const Tensor<std::int32_t> bad =
      where(eq(info, Tensor<std::int32_t>::scalar(kNonFiniteInfo, dev)), info, Tensor<std::int32_t>::scalar(0, dev));
  return {nan_where_failed(sign, bad), nan_where_failed(logabs, bad), LU, piv};
}

// By tensor ops: (pivot parity) * prod(u_ii), a plain product, when no
// product of consecutive pivots leaves the normal range (prefix sums of log |u_ii| within one
// exponent range of each other): then every partial product of a sequential or tree-ordered
// reduction is normal, and on the CPU the result is the scaled product bit for bit. Otherwise
// (and at a zero pivot, and for non-finite input) it is sign * exp(log|det|) from slogdet: 0 at
// a zero pivot, NaN for non-finite input, else within about sum |log |u_ii|| eps of the scaled
// product.
template <class T>
std::tuple<Tensor<T>, Tensor<T>, Tensor<std::int32_t>> det(const Tensor<T>& A) {
  using R = real_t<T>;
  auto [sign, logabs, LU, piv] = generic::slogdet(A);
  const Device dev = A.device();
  // sign * |det| per component, a zero component staying 0 when |det| overflows (as the CPU's).
  const Tensor<R> mag = exp(logabs), zero = Tensor<R>::scalar(R(0), dev);
  const auto times = [&](const Tensor<R>& x) { return where(eq(x, zero), x, mul(x, mag)); };
  Tensor<T> fallback;
  if constexpr (is_complex_v<T>)
    fallback = complex(times(real(sign)), times(imag(sign)));
  else
    fallback = times(sign);
  const std::int64_t n = A.shape()[0];
  if (n == 0) return {fallback, LU, piv};
  const Tensor<T> u = diagonal(LU);
  const Tensor<T> swaps = prod(
      where(ne(piv, identity_pivots(n, dev)), Tensor<T>::scalar(T(-1), dev), Tensor<T>::scalar(T(1), dev)), {0}, false);
  const Tensor<T> direct = mul(swaps, prod(u, {0}, false));
  // Prefix sums c_k of log |u_ii| (c_0 = 0) by a product with a lower triangle of ones: the log
  // of a product of consecutive pivots is c_j - c_i, so max c - min c bounds them all. Not below
  // the bound for a zero pivot (-inf) or NaN.
  constexpr int range = std::min(std::numeric_limits<R>::max_exponent, 1 - std::numeric_limits<R>::min_exponent) - 1;
  const Shape batch = mat_batch_shape(A.shape());
  const Tensor<R> logs = reshape(log(abs(u)), with_batch(n, 1, batch));
  const Tensor<R> prefix = matmul(tril(Tensor<R>::ones({n, n}, dev), 0), logs);
  const Tensor<R> hi = maximum(reshape(max(prefix, {0}, false), batch), zero),
                  lo = minimum(reshape(min(prefix, {0}, false), batch), zero);
  const Tensor<bool> normal = le(sub(hi, lo), Tensor<R>::scalar(R(range * 0.6931471805599453), dev));
  return {where(normal, direct, fallback), LU, piv};
}

// B broadcast into the result, A with a unit row stride, then the device's trsm or trmm per
// matrix in place (batched::triangular).
template <class T>
Tensor<T> triangular_op(TriangularBlas r, const Tensor<T>& A, const Tensor<T>& B, bool left, bool upper, bool unit,
                        blas::Trans trans) {
  const char* name = r == TriangularBlas::trsm ? "solve_triangular" : "triangular_matmul";
  const Shape batch = broadcast_shapes(mat_batch_shape(A.shape()), mat_batch_shape(B.shape()), name);
  Tensor<T> X = Tensor<T>::empty(with_batch(B.shape()[0], B.shape()[1], batch), B.device());
  if (X.numel() == 0) return X;  // nothing to do (the batch may still be huge)
  copy_into(X, expand(B, X.shape()));
  const Tensor<T> a = unit_row_stride(A);
  const auto side = left ? blas::Side::Left : blas::Side::Right;
  const auto uplo = upper ? blas::Uplo::Upper : blas::Uplo::Lower;
  const auto diag = unit ? blas::Diag::Unit : blas::Diag::NonUnit;
  const BatchOffsets aoff = batch_offsets(a, batch);
  const std::int64_t lda = std::max<std::int64_t>(1, a.strides()[1]);
  if (r == TriangularBlas::trsm)
    batched::triangular<TriangularBlas::trsm>(side, uplo, trans, diag, a, aoff, lda, X);
  else
    batched::triangular<TriangularBlas::trmm>(side, uplo, trans, diag, a, aoff, lda, X);
  return X;
}

// out = a b: an operand gemm cannot read is cloned first; then one strided-batched gemm when both
// operands' batch offsets are uniform, else one gemm per product.
template <class T>
void matmul_into(const Tensor<T>& out, const Tensor<T>& a_in, const Tensor<T>& b_in, const Shape& batch) {
  const std::int64_t m = a_in.shape()[0], k = a_in.shape()[1], n = b_in.shape()[1];
  GemmOperand oa = gemm_operand(m, k, a_in.strides()[0], a_in.strides()[1]);
  GemmOperand ob = gemm_operand(k, n, b_in.strides()[0], b_in.strides()[1]);
  const Tensor<T> a = oa.ok ? a_in : clone(a_in), b = ob.ok ? b_in : clone(b_in);
  if (!oa.ok) oa = gemm_operand(m, k, a.strides()[0], a.strides()[1]);
  if (!ob.ok) ob = gemm_operand(k, n, b.strides()[0], b.strides()[1]);
  const BatchOffsets offa = batch_offsets(a, batch), offb = batch_offsets(b, batch);
  const BatchedLinalg<T>& be = linalg_backend<T>("matmul", out.device());
  const int dev = out.device().index;
  const std::int64_t sa = uniform_step(offa), sb = uniform_step(offb);
  const std::int64_t nb = static_cast<std::int64_t>(offa.size());
  if (sa >= 0 && sb >= 0) {
    be.gemm(dev, oa.trans, ob.trans, m, n, k, a.data() + offa[0], oa.ld, sa, b.data() + offb[0], ob.ld, sb,
            out.mutable_data(), m, m * n, nb);
    return;
  }
  for (std::int64_t i = 0; i < nb; ++i) {
    const auto u = static_cast<std::size_t>(i);
    be.gemm(dev, oa.trans, ob.trans, m, n, k, a.data() + offa[u], oa.ld, 0, b.data() + offb[u], ob.ld, 0,
            out.mutable_data() + i * m * n, m, 0, 1);
  }
}

// P = A^+ from the thin SVD with the tolerance, the singular values, X = P B when B is defined
// (BatchedLinalg::pinv). The CPU's fused kernel (src/cpu/linalg_pinv.cpp) gives the same bits.
template <class T>
std::tuple<Tensor<T>, Tensor<real_t<T>>, Tensor<T>> pinv(const char* op, const Tensor<T>& A, const Tensor<T>& B,
                                                         double atol, double rtol) {
  auto [P, S] = pinv_from_svd(op, A, Tolerance{atol, rtol});
  return {P, S, B.defined() ? matmul(P, B) : Tensor<T>()};
}

// The 1/gap terms of the spectral rules (ops/linalg/spectral.hpp, InversePairs) in tensor ops; the
// CPU's kernel (src/cpu/linalg_pairs.cpp) computes the same operations per entry and gives the same
// bits.
template <class T>
std::tuple<Tensor<T>, Tensor<bool>> inverse_pairs(const Tensor<T>& x, bool sums, bool mask, double rtol) {
  using R = real_t<T>;
  const Tensor<T> D = sums ? pairwise_sums(x) : pairwise_gaps(x);
  const Device dev = D.device();
  const Tensor<bool> none = Tensor<bool>::zeros(D.shape(), dev);
  if (D.numel() == 0) return {Tensor<T>::zeros(D.shape(), dev), none};  // (max over an empty axis throws)
  const std::int64_t n = x.shape()[0];
  const Tensor<bool> diag = expand(cast<bool>(Tensor<R>::eye(n, n, dev)), D.shape());
  const Tensor<T> zero = Tensor<T>::zeros({}, dev), one = Tensor<T>::ones({}, dev);
  if (!mask) return {where(diag, zero, div(one, where(diag, one, D))), none};
  // tol per matrix: rtol * max |x| (broadcast over the n x n block)
  const Tensor<R> scale = expand(
      reshape(max(abs(x), {0}, true), with_batch(1, 1, Shape(x.shape().begin() + 1, x.shape().end()))), D.shape());
  const Tensor<bool> small = le(abs(D), mul(scale, static_cast<R>(rtol)));
  const Tensor<bool> drop = where(diag, Tensor<bool>::full({}, true, dev), small);
  return {where(drop, zero, div(one, where(drop, one, D))), where(diag, Tensor<bool>::full({}, false, dev), small)};
}

// The folds of the QR rules (ops/linalg/triangle_fold.hpp) in tensor ops; the CPU's kernel
// (src/cpu/linalg_fold.cpp) computes the same operations per entry and gives the same bits.
template <class T>
Tensor<T> triangle_fold(const Tensor<T>& X, bool fold, bool upper) {
  if (fold) {
    const Tensor<T> sym = add(X, X.mH());
    return sub(upper ? triu(sym) : tril(sym), mul(diag_embed(diagonal(sym)), T(0.5)));
  }
  const Tensor<T> part = upper ? triu(X, 1) : tril(X, -1);
  return add(add(part, part.mH()), re_diag(X));
}

// matrix_exp and its Frechet derivative (ops/linalg/matrix_exp.hpp) in tensor ops; the CPU's fused
// kernels (src/cpu/linalg_expm.cpp) run the same steps on each matrix and give the same bits.
// r_m(X) for a batch of matrices X: U = X (sum of the odd terms / X), V = the even terms,
// r = (V - U)^-1 (V + U). Degree 13 evaluates the high powers by Horner in X^6 (Higham's
// algorithm 2.3: six products and one solve).
template <class T>
Tensor<T> pade_approximant(const Tensor<T>& X, const PadeDegree& p) {
  const std::int64_t n = X.shape()[0];
  const Tensor<T> I = batch_eye<T>(n, mat_batch_shape(X.shape()), X.device());
  auto b = [&](int j) { return static_cast<T>(p.b[static_cast<std::size_t>(j)]); };
  const Tensor<T> X2 = matmul(X, X);
  Tensor<T> U, V;
  if (p.m == 13) {
    const Tensor<T> X4 = matmul(X2, X2), X6 = matmul(X4, X2);
    const Tensor<T> u_hi = add(add(mul(X6, b(13)), mul(X4, b(11))), mul(X2, b(9)));
    const Tensor<T> v_hi = add(add(mul(X6, b(12)), mul(X4, b(10))), mul(X2, b(8)));
    const Tensor<T> u_lo = add(add(add(mul(X6, b(7)), mul(X4, b(5))), mul(X2, b(3))), mul(I, b(1)));
    const Tensor<T> v_lo = add(add(add(mul(X6, b(6)), mul(X4, b(4))), mul(X2, b(2))), mul(I, b(0)));
    U = matmul(X, add(matmul(X6, u_hi), u_lo));
    V = add(matmul(X6, v_hi), v_lo);
  } else {
    // sum_k b_{2k+1} X^{2k} and sum_k b_{2k} X^{2k} over the even powers X^0, X^2, ..., X^{m-1}.
    Tensor<T> u = mul(I, b(1)), v = mul(I, b(0)), Xk = X2;
    for (int k = 2; k <= p.m; k += 2) {
      u = add(u, mul(Xk, b(k + 1)));
      v = add(v, mul(Xk, b(k)));
      if (k + 2 <= p.m) Xk = matmul(Xk, X2);
    }
    U = matmul(X, u);
    V = v;
  }
  return std::get<0>(ops::Solve{}.forward(sub(V, U), add(V, U)));
}

// The scaling of a batch: one Pade degree for all its matrices (the lowest that serves every
// matrix without scaling, else the top one) and, with the top degree, each matrix's own number of
// squarings s (||A||_1 / 2^s <= theta). The 1-norms are read on the host (one synchronisation on a
// device); a matrix holding inf or NaN gets s = 0 (its result is NaN).
struct ExpmScaling {
  const PadeDegree* degree = nullptr;
  std::vector<int> s;
  int s_max = 0;
};

template <class T>
ExpmScaling expm_scaling(const Tensor<T>& A) {
  using R = real_t<T>;
  const std::vector<R> norms = max(sum(abs(A), {0}, false), {0}, false).to_vector();
  double eta = 0;
  for (R v : norms)
    if (std::isfinite(static_cast<double>(v))) eta = std::max(eta, static_cast<double>(v));
  ExpmScaling sc;
  sc.degree = &expm_degree<R>(eta);
  for (R v : norms) {
    sc.s.push_back(expm_squarings<R>(static_cast<double>(v), *sc.degree));
    sc.s_max = std::max(sc.s_max, sc.s.back());
  }
  return sc;
}

// X / 2^s per matrix (X unchanged when no matrix is scaled).
template <class T>
Tensor<T> scale_down(const Tensor<T>& X, const ExpmScaling& sc) {
  if (sc.s_max == 0) return X;
  std::vector<T> scale;
  for (int si : sc.s) scale.push_back(static_cast<T>(std::ldexp(1.0, -si)));
  return mul(X, Tensor<T>::from_col_major(with_batch(1, 1, mat_batch_shape(X.shape())), scale, X.device()));
}

// Whether each matrix is squared at step k (1 x 1 x batch), or undefined when all are.
template <class T>
Tensor<bool> squared_at(int k, const ExpmScaling& sc, const Tensor<T>& like) {
  if (std::all_of(sc.s.begin(), sc.s.end(), [k](int si) { return si > k; })) return {};
  std::vector<bool> more;
  for (int si : sc.s) more.push_back(si > k);
  return Tensor<bool>::from_col_major(with_batch(1, 1, mat_batch_shape(like.shape())), more, like.device());
}

// exp(A) for each matrix of A (n x n x batch), scaled per matrix and squared back (expm_scaling).
template <class T>
Tensor<T> matrix_exp(const Tensor<T>& A) {
  if (A.numel() == 0) return Tensor<T>::empty(A.shape(), A.device());
  const ExpmScaling sc = expm_scaling(A);
  Tensor<T> E = pade_approximant(scale_down(contiguous(A), sc), *sc.degree);
  for (int k = 0; k < sc.s_max; ++k) {
    const Tensor<T> E2 = matmul(E, E);
    const Tensor<bool> more = squared_at(k, sc, A);
    E = more.defined() ? where(more, E2, E) : E2;
  }
  return E;
}

// The Frechet derivative L(A, E), computed with exp(A), by differentiating the scaling and squaring
// algorithm (Al-Mohy and Higham 2009, "Computing the Frechet derivative of the matrix exponential",
// algorithm 6.4): every product of the Pade approximant carries its tangent (d(XY) = dX Y + X dY),
// the solve reuses its LU (dR = Q^-1 (dP - dQ R)), and each squaring R <- R^2 takes L <- R L + L R.
// About three exponentials' work, against eight for the block exponential of order 2n. The degree
// and scaling are expm's for A (expm_scaling, Higham 2005's theta_m), not the somewhat smaller
// bounds l_m that Al-Mohy and Higham derive for L's backward error; the gradient harness checks L.
// Returns L and exp(A), which the algorithm computes along the way with matrix_exp's steps (the
// same bits as matrix_exp(A)).
template <class T>
std::tuple<Tensor<T>, Tensor<T>> matrix_exp_and_frechet(const Tensor<T>& A, const Tensor<T>& E) {
  if (A.numel() == 0) return {Tensor<T>::empty(A.shape(), A.device()), Tensor<T>::empty(A.shape(), A.device())};
  const ExpmScaling sc = expm_scaling(A);
  const PadeDegree& p = *sc.degree;
  // Contiguous operands (a broadcast E copied), so that every product is one gemm per matrix, as
  // in the CPU's kernel, whatever the provider's blocking of a wider product.
  const Tensor<T> X = scale_down(contiguous(A), sc), dX = scale_down(contiguous(broadcast_to(E, A.shape())), sc);
  const std::int64_t n = A.shape()[0];
  const Tensor<T> I = batch_eye<T>(n, mat_batch_shape(A.shape()), A.device());
  auto b = [&](int j) { return static_cast<T>(p.b[static_cast<std::size_t>(j)]); };
  auto prod = [](const Tensor<T>& x, const Tensor<T>& dx, const Tensor<T>& y, const Tensor<T>& dy) {
    return std::pair{matmul(x, y), add(matmul(dx, y), matmul(x, dy))};
  };
  const auto [X2, dX2] = prod(X, dX, X, dX);
  Tensor<T> U, dU, V, dV;
  if (p.m == 13) {
    const auto [X4, dX4] = prod(X2, dX2, X2, dX2);
    const auto [X6, dX6] = prod(X4, dX4, X2, dX2);
    auto comb = [&](const Tensor<T>& a6, const Tensor<T>& a4, const Tensor<T>& a2, int j6, int j4, int j2) {
      return add(add(mul(a6, b(j6)), mul(a4, b(j4))), mul(a2, b(j2)));
    };
    const Tensor<T> u_hi = comb(X6, X4, X2, 13, 11, 9), du_hi = comb(dX6, dX4, dX2, 13, 11, 9);
    const Tensor<T> v_hi = comb(X6, X4, X2, 12, 10, 8), dv_hi = comb(dX6, dX4, dX2, 12, 10, 8);
    const Tensor<T> u_lo = add(comb(X6, X4, X2, 7, 5, 3), mul(I, b(1))), du_lo = comb(dX6, dX4, dX2, 7, 5, 3);
    const Tensor<T> v_lo = add(comb(X6, X4, X2, 6, 4, 2), mul(I, b(0))), dv_lo = comb(dX6, dX4, dX2, 6, 4, 2);
    const auto [W6, dW6] = prod(X6, dX6, u_hi, du_hi);
    const Tensor<T> W = add(W6, u_lo), dW = add(dW6, du_lo);
    std::tie(U, dU) = prod(X, dX, W, dW);
    const auto [V6, dV6] = prod(X6, dX6, v_hi, dv_hi);
    V = add(V6, v_lo), dV = add(dV6, dv_lo);
  } else {
    Tensor<T> u = mul(I, b(1)), v = mul(I, b(0)), du, dv, Xk = X2, dXk = dX2;
    for (int k = 2; k <= p.m; k += 2) {
      u = add(u, mul(Xk, b(k + 1))), du = detail::accumulate(du, mul(dXk, b(k + 1)));
      v = add(v, mul(Xk, b(k))), dv = detail::accumulate(dv, mul(dXk, b(k)));
      if (k + 2 <= p.m) std::tie(Xk, dXk) = prod(Xk, dXk, X2, dX2);
    }
    std::tie(U, dU) = prod(X, dX, u, du);
    V = v, dV = dv;
  }
  auto [R, LU, piv, info] = ops::Solve{}.forward(sub(V, U), add(V, U));
  (void)info;
  const Tensor<T> rhs = sub(add(dV, dU), matmul(sub(dV, dU), R));
  Tensor<T> L = ops::SavedLuSolve{tenax::cpu::Trans::N}.forward(sub(V, U), LU, piv, rhs);
  for (int k = 0; k < sc.s_max; ++k) {
    const Tensor<T> L2 = add(matmul(R, L), matmul(L, R)), R2 = matmul(R, R);
    const Tensor<bool> more = squared_at(k, sc, A);
    L = more.defined() ? where(more, L2, L) : L2;
    R = more.defined() ? where(more, R2, R) : R2;
  }
  return {L, R};
}

template <class T>
Tensor<T> matrix_exp_frechet(const Tensor<T>& A, const Tensor<T>& E) {
  return std::get<0>(matrix_exp_and_frechet(A, E));
}

}  // namespace tenax::detail::generic
