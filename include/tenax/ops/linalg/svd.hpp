#pragma once
// svd / svdvals: A = U diag(S) Vh by divide and conquer (gesdd), thin or full.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/linalg/batched.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/diag_product.hpp"
#include "tenax/ops/linalg/info_check.hpp"
#include "tenax/ops/linalg/scaled_product.hpp"
#include "tenax/ops/linalg/spectral.hpp"

namespace tenax {
namespace ops {

// Outputs U, S (k x batch, real, descending), Vh, info. U and Vh are undefined when !compute_uv.
struct Svd {
  static constexpr const char* name = "svd";
  static constexpr bool one_kernel = true;  // on the CPU, forward is one captured kernel (kernels/capture.hpp)
  static constexpr bool saves_outputs = true;
  bool full_matrices;
  bool compute_uv;
  bool uv_output;  // U and Vh are returned to the user (svd), so the rules carry their derivatives
  linalg::Degeneracy policy;
  bool canonical = false;  // thin only: first largest-magnitude entry of each column of U real positive
  // The variant to run when a derivative is needed (re-executing a traced svdvals under AD).
  // U and Vh computed at trace time were read by recorded steps (a traced gradient's rule), so
  // the re-executed op carries their derivatives to them (jvp of a traced grad).
  Svd for_derivatives() const {
    Svd o = *this;
    o.uv_output = uv_output || compute_uv;
    o.compute_uv = true;
    return o;
  }

  // U, S (descending), Vh, info and the canonical gauge E per matrix: a matrix with inf or NaN has
  // info kNonFiniteInfo, a failed one NaN factors; an empty A has identity U and Vh. The device's
  // backend computes them (on the CPU one captured kernel, src/cpu/linalg_spectral.cpp).
  template <class T>
  std::tuple<Tensor<T>, Tensor<real_t<T>>, Tensor<T>, Tensor<std::int32_t>, Tensor<T>> forward(
      const Tensor<T>& A) const {
    return detail::linalg_backend<T>(name, A.device()).svd(A, full_matrices, compute_uv, canonical);
  }

  // docs/MATH.md section 6, in terms of V = Vh^H (thin: k = min(m, n) columns of U and V):
  //   P = U^H dA V;  ds = Re diag(P);  F_jk = 1/(s_k^2 - s_j^2);  D = diag(i Im P_jj / (2 s_j))
  //   dU = U [F o (P S + S P^H) + D] + (I - U U^H) dA V S^-1          (the last term if m > k)
  //   dV = V [F o (S P + P^H S) - D] + (I - V V^H) dA^H U S^-1        (if n > k)
  //   J = U^H gU, K = V^H gV:
  //   gA = U [F o (skew(J) S + S skew(K)) + diag(gs) + i ImDiag(J) S^-1] V^H
  //        + (I - U U^H) gU S^-1 V^H  (m > k)  +  U S^-1 gV^H (I - V V^H)  (n > k)
  // full_matrices: cotangents of the extra columns are dropped and their tangents are zero
  // (those columns are not unique). Without U/V cotangents the F terms are skipped (svdvals:
  // gA = U diag(gs) V^H), so repeated singular values are harmless there.
  // Canonical gauge (complex, thin): U and V columns share phases that keep U[k_j, j] real, so
  // dU and dV gain U i diag(phi), V i diag(phi) with phi_j = -Im(dU[k_j, j]) / U[k_j, j]; the
  // adjoint replaces gU by gU - i E o (Im diag(U^H gU + V^H gV) / U[k, j]).
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    using R = real_t<T>;
    const Tensor<T>& dA = c.dx0();
    const std::int64_t m = dA.shape()[0], n = dA.shape()[1], k = std::min(m, n);
    const auto U = thin(c.y0(), k), V = thin(c.y2().mH(), k);
    const Tensor<R>& s = c.y1();
    // svdvals: U and V's tangents are needed only when its rule (which uses U and V) is itself
    // differentiated, i.e. when the input records gradients (forward over reverse). Then only
    // diag(P) is: for small matrices one op (ops/linalg/diag_product.hpp).
    const bool values_only = !uv_output && !(c.y0().defined() && is_grad_enabled() && c.x0().tracks_grad());
    if (values_only)
      if (const Tensor<T> d = detail::diag_product_small(U, dA, V); d.defined())
        return std::tuple{Tensor<T>(), real(d), Tensor<T>(), Tensor<std::int32_t>(), Tensor<T>()};
    const auto P = matmul(U.mH(), matmul(dA, V));
    const auto ds = real(diagonal(P));
    if (values_only) return std::tuple{Tensor<T>(), ds, Tensor<T>(), Tensor<std::int32_t>(), Tensor<T>()};
    // F o (P S + S P^H) = (Fm o (P + P^H) + Fp o (P - P^H)) / 2 and
    // F o (S P + P^H S) = (Fm o (P + P^H) - Fp o (P - P^H)) / 2 (see the VJP).
    const auto Fm = cast<T>(detail::inverse_gaps(s, policy));
    const auto Fp = cast<T>(detail::inverse_sums(s, policy));
    const auto sym = mul(Fm, add(P, P.mH())), asym = mul(Fp, sub(P, P.mH()));
    const auto sinv = diag_embed(cast<T>(div(Tensor<R>::ones({}, s.device()), s)));
    auto inner_u = mul(add(sym, asym), T(0.5)), inner_v = mul(sub(sym, asym), T(0.5));
    // The phase term, zero for real T (skipped there: 0 / s would be NaN at a zero singular value,
    // where the real rule is finite). For complex T it stays NaN there: the relative phase of a
    // zero singular value's vectors is not determined.
    if constexpr (is_complex_v<T>) {
      const auto D = matmul(mul(detail::i_imdiag(P), T(0.5)), sinv);
      inner_u = add(inner_u, D);
      inner_v = sub(inner_v, D);
    }
    auto dU = matmul(U, inner_u);
    auto dV = matmul(V, inner_v);
    if (m > k) dU = add(dU, matmul(sub(dA, matmul(U, matmul(U.mH(), dA))), matmul(V, sinv)));
    if (n > k) dV = add(dV, matmul(sub(dA.mH(), matmul(V, matmul(V.mH(), dA.mH()))), matmul(U, sinv)));
    if constexpr (is_complex_v<T>) {
      if (canonical) {
        const auto phi = detail::gauge_rates(c.template y<4>(), U, dU);
        const auto iphi = complex(mul(phi, R(0)), phi);
        dU = add(dU, mul(U, iphi));
        dV = add(dV, mul(V, iphi));
      }
    }
    if (full_matrices) {
      dU = pad_cols(dU, m);
      dV = pad_cols(dV, n);
    }
    return std::tuple{dU, ds, dV.mH(), Tensor<std::int32_t>(), Tensor<T>()};
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    using R = real_t<T>;
    const std::int64_t m = c.x0().shape()[0], n = c.x0().shape()[1], k = std::min(m, n);
    TENAX_CHECK(c.y0().defined(), name, "internal error: U and V were not computed for a gradient");
    const auto U = thin(c.y0(), k), V = thin(c.y2().mH(), k);
    const Tensor<R>& s = c.y1();
    // U/V cotangents reach svdvals only when its rule is differentiated (reverse over reverse).
    Tensor<T> gU = c.gy0().defined() ? thin(c.gy0(), k) : Tensor<T>();
    Tensor<T> gV = c.gy2().defined() ? thin(c.gy2().mH(), k) : Tensor<T>();
    if constexpr (is_complex_v<T>) {
      if (canonical && (gU.defined() || gV.defined())) {
        const auto& E = c.template y<4>();
        Tensor<R> im;
        if (gU.defined()) im = imag(sum(mul(conj(U), gU), {0}, true));
        if (gV.defined()) {
          auto t = imag(sum(mul(conj(V), gV), {0}, true));
          im = detail::accumulate(im, t);
        }
        const auto r = real(sum(mul(E, U), {0}, true));
        const auto corr = mul(E, complex(mul(im, R(0)), div(im, r)));
        gU = detail::subtract(gU, corr);
      }
    }
    Tensor<T> mid;
    if (c.gy1().defined()) mid = diag_embed(cast<T>(c.gy1()));
    if (gU.defined() || gV.defined()) {
      // F o (a S + S b) with a = skew(J), b = skew(K), in partial fractions:
      //   (a_jk s_k + s_j b_jk) / (s_k^2 - s_j^2) = [(a + b)_jk / (s_k - s_j) + (a - b)_jk / (s_k + s_j)] / 2.
      // Only the first part is singular for repeated singular values (and vanishes for losses
      // invariant inside the degenerate subspace), so the policy masks it alone; the second part is
      // singular only where both values are zero.
      Tensor<bool> masked, masked_sum;
      const auto Fm = cast<T>(detail::inverse_gaps(s, policy, &masked));
      const auto Fp = cast<T>(detail::inverse_sums(s, policy, &masked_sum));
      Tensor<T> J, K, skewJ, skewK;
      if (gU.defined()) {
        J = matmul(U.mH(), gU);
        skewJ = sub(J, J.mH());
      }
      if (gV.defined()) {
        K = matmul(V.mH(), gV);
        skewK = sub(K, K.mH());
      }
      const Tensor<T> plus = detail::accumulate(skewJ, skewK);
      const Tensor<T> minus = detail::subtract(skewJ, skewK);
      if (policy.mode == linalg::Degeneracy::Mode::Mask) {
        // The singular part is skew(J + K); it must vanish on masked pairs (and skew(J - K) on
        // pairs of zero singular values).
        detail::gauge_check(name, policy, where(masked, plus, Tensor<T>::zeros({}, plus.device())), plus,
                            "singular-vector basis inside a degenerate singular subspace");
        detail::gauge_check(name, policy, where(masked_sum, minus, Tensor<T>::zeros({}, minus.device())), minus,
                            "singular-vector basis inside the null space (repeated zero singular values)");
      }
      if constexpr (is_complex_v<T>) {
        Tensor<T> jk = detail::accumulate(J, K);
        detail::gauge_check(name, policy, imag(diagonal(jk)), real(jk), "singular-vector phases");
      }
      Tensor<T> t = mul(add(mul(Fm, plus), mul(Fp, minus)), T(0.5));
      if constexpr (is_complex_v<T>) {  // the phase term (zero for real T; see the JVP)
        if (J.defined())
          t = add(t, matmul(detail::i_imdiag(J), diag_embed(cast<T>(div(Tensor<R>::ones({}, s.device()), s)))));
      }
      mid = detail::accumulate(mid, t);
    }
    Tensor<T> gA;
    if (!mid.defined())
      gA = Tensor<T>::zeros(c.x0().shape(), c.x0().device());
    else if (!gU.defined() && !gV.defined()) {
      // U diag(gs) V^H: for small matrices one op (ops/linalg/scaled_product.hpp), else U scaled
      // by columns times V^H (one gemm).
      const Tensor<T> gs = cast<T>(c.gy1());
      gA = detail::scaled_product_small(U, gs, V);
      if (!gA.defined()) gA = matmul(mul(U, detail::as_row(gs)), V.mH());
    } else
      gA = matmul(U, matmul(mid, V.mH()));
    if (gU.defined() && m > k) {
      const auto proj = sub(gU, matmul(U, matmul(U.mH(), gU)));
      gA = add(gA, matmul(div_cols(proj, s), V.mH()));
    }
    if (gV.defined() && n > k) {
      const auto proj = sub(gV, matmul(V, matmul(V.mH(), gV)));
      gA = add(gA, matmul(div_cols(U, s), proj.mH()));
    }
    return gA;
  }

 private:
  template <class T>
  static Tensor<T> thin(const Tensor<T>& X, std::int64_t k) {
    return X.shape()[1] == k ? X : slice(X, 1, 0, k);
  }
  // X S^-1: column j of X (r x k) divided by s_j.
  template <class T>
  static Tensor<T> div_cols(const Tensor<T>& X, const Tensor<real_t<T>>& s) {
    Shape rs{1, s.shape()[0]};
    for (int d = 1; d < s.dim(); ++d) rs.push_back(s.shape()[d]);
    return div(X, cast<T>(reshape(s, rs)));
  }
  template <class T>
  static Tensor<T> pad_cols(const Tensor<T>& X, std::int64_t cols) {
    if (X.shape()[1] == cols) return X;
    Shape z = X.shape();
    z[1] = cols - X.shape()[1];
    return concat<T>({X, Tensor<T>::zeros(z, X.device())}, 1);
  }
};

}  // namespace ops

namespace linalg {
namespace detail_svd {
inline std::string failure(std::int32_t k) {
  if (k == tenax::detail::kNonFiniteInfo) return tenax::detail::kNonFiniteMessage;
  return "the SVD did not converge (info " + std::to_string(k) + ")";
}
}  // namespace detail_svd

// A = U diag(S) Vh. Thin (default): U m x k, Vh k x n; full_matrices: U m x m, Vh n x n.
// canonical_gauge (thin only): each column of U has its first largest-magnitude entry real and
// positive, V's columns carry the same factors; the rules account for it.
template <Floating T>
std::tuple<Tensor<T>, Tensor<real_t<T>>, Tensor<T>> svd(const Tensor<T>& A, bool full_matrices = false,
                                                        Degeneracy policy = {}, bool canonical_gauge = false) {
  detail::check_matrix("svd", A);
  TENAX_CHECK(!(canonical_gauge && full_matrices), "svd", "canonical_gauge needs the thin SVD (full_matrices = false)");
  auto [U, S, Vh, info, E] = detail::apply(ops::Svd{full_matrices, true, true, policy, canonical_gauge}, A);
  detail::raise_info("svd", info, A.shape(), dtype_traits<T>::name, detail_svd::failure);
  return {U, S, Vh};
}

// Singular values (descending, k x batch). U and V are computed only when a derivative may be
// needed (gA = U diag(gS) V^H).
template <Floating T>
Tensor<real_t<T>> svdvals(const Tensor<T>& A) {
  detail::check_matrix("svdvals", A);
  const bool need_uv = tenax::detail::differentiated_again(A);
  auto [U, S, Vh, info, E] = detail::apply(ops::Svd{false, need_uv, false, Degeneracy{}}, A);
  detail::raise_info("svdvals", info, A.shape(), dtype_traits<T>::name, detail_svd::failure);
  return S;
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_SVD(T)                                                                                      \
  TENAX_INSTANCE std::tuple<Tensor<T>, Tensor<real_t<T>>, Tensor<T>> svd(const Tensor<T>&, bool, Degeneracy, bool); \
  TENAX_INSTANCE Tensor<real_t<T>> svdvals(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_SVD)

}  // namespace linalg
}  // namespace tenax
