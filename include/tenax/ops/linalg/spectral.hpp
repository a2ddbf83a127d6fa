#pragma once
// Pieces shared by the eigh and SVD rules: the degeneracy policy for the 1/(l_j - l_i) terms,
// the matrix of those terms, and the gauge diagnostic.
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>

#include "tenax/ad/apply.hpp"
#include "tenax/backend/backend.hpp"
#include "tenax/core/deferred_checks.hpp"
#include "tenax/kernels/dispatch.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/linalg/common.hpp"

namespace tenax::linalg {

// How eigh/svd derivative rules treat (nearly) repeated eigen/singular values.
//   Exact:      F_ij = 1/(l_j - l_i) as written (inf for exactly repeated values).
//   Mask:       F_ij = 0 when |l_j - l_i| <= tol. Exact for losses of the values alone (first
//               order) and whenever the masked pairs' terms vanish in the limit. Not exact for a
//               smooth spectral function V f(L) V^H (e.g. expm via eigh) at repeated values: its
//               true gradient has the finite limit (f(l_i) - f(l_j)) / (l_i - l_j) -> f'(l) in those
//               entries, and the mask drops it; the gauge check cannot see this (the cotangent's
//               gauge part is exactly zero there). Second derivatives of eigvalsh/svdvals at
//               repeated values go through the vectors' tangent and miss the same terms.
//   Lorentzian: F_ij = d/(d^2 + epsilon) with d = l_j - l_i (Liao et al. 2019).
// For the SVD the policy acts on the singular part 1/(s_k - s_j) of 1/(s_k^2 - s_j^2) (split in
// partial fractions, docs/MATH.md section 6); the regular part 1/(s_k + s_j) is kept.
// Default: Mask with tol = rtol * max|l|, rtol = 10 n eps: syevd/gesdd compute eigenvalues to an
// absolute accuracy of about p(n) eps ||A||, so closer pairs are numerically degenerate and their
// individual vectors are not determined by A; 1/gap terms there only amplify rounding.
// When a masked pair carries a cotangent component that the mask drops (the loss depends on the
// gauge), `on_gauge` decides: Throw (default) a tenax::Error naming the op, Warn on stderr, or
// Ignore. The same check covers the complex phase gauge (Im diag(V^H gV) != 0).
struct Degeneracy {
  enum class Mode { Exact, Mask, Lorentzian };
  enum class OnGauge { Throw, Warn, Ignore };
  Mode mode = Mode::Mask;
  double rtol = -1;        // < 0: 10 n eps of the dtype
  double epsilon = 1e-12;  // Lorentzian broadening
  OnGauge on_gauge = OnGauge::Throw;
};

}  // namespace tenax::linalg

namespace tenax::detail {

// Columns x_j minus rows x_i: D_ij = x_j - x_i for x of shape n x batch.
template <class R>
Tensor<R> pairwise_gaps(const Tensor<R>& x) {
  const std::int64_t n = x.shape()[0];
  const Shape batch = Shape(x.shape().begin() + 1, x.shape().end());
  const Shape full = with_batch(n, n, batch);
  return sub(expand(reshape(x, with_batch(1, n, batch)), full), expand(reshape(x, with_batch(n, 1, batch)), full));
}

inline double default_rtol(double eps, std::int64_t n) {
  return 10.0 * static_cast<double>(std::max<std::int64_t>(n, 1)) * eps;
}

// x_j + x_i for x of shape n x batch (the sums of singular values in the SVD rules).
template <class R>
Tensor<R> pairwise_sums(const Tensor<R>& x) {
  const std::int64_t n = x.shape()[0];
  const Shape batch = Shape(x.shape().begin() + 1, x.shape().end());
  const Shape full = with_batch(n, n, batch);
  return add(expand(reshape(x, with_batch(1, n, batch)), full), expand(reshape(x, with_batch(n, 1, batch)), full));
}

inline double mask_rtol(const linalg::Degeneracy& pol, double eps, std::int64_t n) {
  return pol.rtol >= 0 ? pol.rtol : default_rtol(eps, n);
}

}  // namespace tenax::detail

namespace tenax::ops {

// The 1/gap terms of the eigh, SVD and eig rules under the Exact or Mask policy, one kernel on the
// CPU (BatchedLinalg::inverse_pairs; generic::inverse_pairs elsewhere, the same operations in
// tensor ops): for x (n x batch), F_ij = 1/d_ij, d_ij = x_j - x_i (x_j + x_i when sums), 0 on the
// diagonal and, with mask, 0 where |d_ij| <= rtol max_k |x_k| (those pairs true in `masked`).
// Rules: where F_ij = 1/d_ij, dF_ij = -F_ij^2 dd_ij (0 where F is 0, as is the derivative of the
// masked and diagonal entries); the adjoint sends G to -conj(F^2) o G summed over rows (x_j) and
// columns (x_i, negated for gaps). Both are tensor ops, so every order works.
struct InversePairs {
  static constexpr const char* name = "inverse_pairs";
  static constexpr bool one_kernel = true;  // on the CPU, forward is one captured kernel (kernels/capture.hpp)
  static constexpr bool saves_outputs = true;
  bool sums;
  bool mask;
  double rtol;

  template <class T>
  std::tuple<Tensor<T>, Tensor<bool>> forward(const Tensor<T>& x) const {
    return detail::linalg_backend<T>(name, x.device()).inverse_pairs(x, sums, mask, rtol);
  }
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>& F = c.y0();
    const Tensor<T> dD = sums ? detail::pairwise_sums(c.dx0()) : detail::pairwise_gaps(c.dx0());
    return std::tuple{neg(mul(mul(F, F), dD)), Tensor<bool>()};
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    if (!c.gy0().defined()) return Tensor<T>();
    const Tensor<T>& F = c.y0();
    Tensor<T> F2 = mul(F, F);
    if constexpr (is_complex_v<T>) F2 = conj(F2);
    const Tensor<T> H = neg(mul(F2, c.gy0()));
    const Tensor<T> by_col = sum(H, {0}, false), by_row = sum(H, {1}, false);  // d_ij's x_j, x_i parts
    return sums ? add(by_col, by_row) : sub(by_col, by_row);
  }
};

}  // namespace tenax::ops

namespace tenax::detail {

// The InversePairs op under the Exact or Mask policy (real or complex x); `masked` is set under Mask.
template <class T>
Tensor<T> pairs_op(const Tensor<T>& x, bool sums, const linalg::Degeneracy& pol, Tensor<bool>* masked) {
  const bool mask = pol.mode == linalg::Degeneracy::Mode::Mask;
  const double rtol = mask_rtol(pol, std::numeric_limits<real_t<T>>::epsilon(), x.shape()[0]);
  auto [F, m] = detail::apply(ops::InversePairs{sums, mask, rtol}, x);
  if (masked && mask) *masked = m;
  return F;
}

// F = 1/D_ij off the diagonal (0 on it) under the policy, D the pairwise gaps (x_j - x_i) or sums
// (x_j + x_i) of x (n x batch, real; the Mask tolerance is rtol * max|x| per matrix); `masked`
// (optional output) marks the off-diagonal pairs the Mask policy zeroed.
template <class R>
Tensor<R> inverse_pairs(const Tensor<R>& x, bool sums, const linalg::Degeneracy& pol, Tensor<bool>* masked = nullptr) {
  const std::int64_t n = x.shape()[0];
  if (pol.mode != linalg::Degeneracy::Mode::Lorentzian) return pairs_op(x, sums, pol, masked);
  const Tensor<R> D = sums ? pairwise_sums(x) : pairwise_gaps(x);
  if (D.numel() == 0) return Tensor<R>::zeros(D.shape(), D.device());
  const Tensor<bool> diag = expand(cast<bool>(Tensor<R>::eye(n, n, D.device())), D.shape());
  return where(diag, Tensor<R>::zeros({}, D.device()), div(D, add(mul(D, D), static_cast<R>(pol.epsilon))));
}

// F_ij = 1/(x_j - x_i) with 0 on the diagonal, under the policy; `masked` (optional output) marks
// the off-diagonal pairs the Mask policy zeroed. x is n x batch (real).
template <class R>
Tensor<R> inverse_gaps(const Tensor<R>& x, const linalg::Degeneracy& pol, Tensor<bool>* masked = nullptr) {
  return inverse_pairs(x, false, pol, masked);
}

// F_ij = 1/(w_j - w_i) with 0 on the diagonal for complex values w (n x batch; eig), under the
// policy: Exact as written, Lorentzian conj(d)/(|d|^2 + epsilon), Mask zero where |d| <= rtol *
// max|w| per matrix; `masked` (optional output) marks the off-diagonal pairs the mask zeroed.
template <class C>
Tensor<C> inverse_complex_gaps(const Tensor<C>& w, const linalg::Degeneracy& pol, Tensor<bool>* masked = nullptr) {
  using R = real_t<C>;
  const std::int64_t n = w.shape()[0];
  if (pol.mode != linalg::Degeneracy::Mode::Lorentzian) return pairs_op(w, false, pol, masked);
  const Tensor<C> D = pairwise_gaps(w);
  const Device dev = D.device();
  if (D.numel() == 0) return Tensor<C>::zeros(D.shape(), dev);
  const Tensor<bool> diag = expand(cast<bool>(Tensor<R>::eye(n, n, dev)), D.shape());
  const Tensor<R> mag = abs(D);
  return where(diag, Tensor<C>::zeros({}, dev), div(conj(D), cast<C>(add(mul(mag, mag), static_cast<R>(pol.epsilon)))));
}

// 1/(x_j + x_i) with 0 on the diagonal, under the policy (for x >= 0 it is singular only where both
// values vanish).
template <class R>
Tensor<R> inverse_sums(const Tensor<R>& x, const linalg::Degeneracy& pol, Tensor<bool>* masked = nullptr) {
  return inverse_pairs(x, true, pol, masked);
}

// The gauge diagnostic's report(l, r) of the sizes l and r: read at once (the host form of a
// kernels/dispatch.hpp slot), or when the device's results are next read (its generic form).
using GaugeReport = std::function<void(double, double)>;
template <class R>
void gauge_report_now(const Tensor<R>& l, const Tensor<R>& r, const GaugeReport& report) {
  report(static_cast<double>(l.item()), static_cast<double>(r.item()));
}
template <class R>
void gauge_report_deferred(const Tensor<R>& l, const Tensor<R>& r, const GaugeReport& report) {
  defer_value_check(cast<double>(stack(std::vector<Tensor<R>>{l, r}, 0)).impl(),
                    [report](const double* v, std::int64_t) { report(v[0], v[1]); });
}

// The gauge diagnostic: `lost` holds the cotangent components a rule drops (zero for gauge-
// invariant losses, up to rounding); `ref` sets the scale. Where the host reads the sizes (and
// while tracing) it acts at once; on a device the two sizes stay there and the check runs when the
// device's results are next read (core/deferred_checks.hpp), so an eager backward pass through
// eigh or svd never waits for the device.
template <class T>
void gauge_check(const char* op, const linalg::Degeneracy& pol, const Tensor<T>& lost, const Tensor<T>& ref,
                 const char* what) {
  if (pol.on_gauge == linalg::Degeneracy::OnGauge::Ignore || !lost.defined() || lost.numel() == 0) return;
  using R = real_t<T>;
  const GaugeReport report = [op = std::string(op), on_gauge = pol.on_gauge, what = std::string(what)](double l,
                                                                                                       double r) {
    const double tol = std::sqrt(static_cast<double>(std::numeric_limits<R>::epsilon())) * std::max(1.0, r);
    if (!(l > tol)) return;
    std::string msg = "[" + op + "] the loss depends on the " + what + " (dropped cotangent component " +
                      std::to_string(l) + ", scale " + std::to_string(r) +
                      "): the gradient is not well defined; use a gauge-invariant loss, or set "
                      "Degeneracy::on_gauge to Warn/Ignore";
    if (on_gauge == linalg::Degeneracy::OnGauge::Throw) throw Error(msg);
    std::fprintf(stderr, "tenax warning: %s\n", msg.c_str());
  };
  NoGradGuard no_tape;  // (the sizes are not differentiated)
  ForwardOffGuard no_tangents;
  const Tensor<R> l = max(abs(lost));
  const Tensor<R> r = ref.numel() ? max(abs(ref)) : Tensor<R>::zeros({}, lost.device());
  // (While tracing, the check is a trace-time decision, as on the host: it reads at once, so that
  // trace() itself raises.)
  if (mode().tracer) return gauge_report_now<R>(l, r, report);
  dispatch<&gauge_report_now<R>, &gauge_report_deferred<R>>(lost.device(), l, r, report);
}

// i * Im diag(X) as a diagonal matrix (zero for real T).
template <class T>
Tensor<T> i_imdiag(const Tensor<T>& X) {
  if constexpr (is_complex_v<T>) {
    auto im = imag(diagonal(X));
    return diag_embed(complex(mul(im, real_t<T>(0)), im));
  } else {
    return mul(X, T(0));
  }
}

// Re diag(X) as a diagonal matrix of type T.
template <class T>
Tensor<T> re_diag(const Tensor<T>& X) {
  return diag_embed(cast<T>(real(diagonal(X))));
}

}  // namespace tenax::detail

namespace tenax::detail {

// Canonical gauge for eigen/singular vectors: scales each column j of the nb contiguous n x c
// matrices from v by a unit factor so that its first largest-magnitude entry is real and positive.
// Writes the one-hot selection matrices E[k_j, j] = 1 of those entries into E (as many matrices,
// overwritten); scale_also(b, j, f) applies column j's factor f of matrix b to a companion (V for
// SVD, keeping A = U S V^H).
template <class T, class F>
void canonicalize_columns(T* v, std::int64_t n, std::int64_t c, std::int64_t nb, T* E, F&& scale_also) {
  std::fill(E, E + n * c * nb, T(0));
  for (std::int64_t b = 0; b < nb; ++b) {
    T* p = v + b * n * c;
    for (std::int64_t j = 0; j < c; ++j) {
      std::int64_t k = 0;
      for (std::int64_t i = 1; i < n; ++i)
        if (std::abs(p[i + j * n]) > std::abs(p[k + j * n])) k = i;
      const auto a = std::abs(p[k + j * n]);
      if (a == 0) continue;
      const T f = fn::conj_of(p[k + j * n] / a);
      for (std::int64_t i = 0; i < n; ++i) p[i + j * n] *= f;
      p[k + j * n] = T(std::abs(p[k + j * n]));  // exactly real
      scale_also(b, j, f);
      E[b * n * c + k + j * n] = T(1);
    }
  }
}

// The same on tensors: v contiguous; `also` (may be undefined) gets the same column factors.
// Returns E (n x c x batch).
template <class T>
Tensor<T> canonicalize_columns(const Tensor<T>& v, const Tensor<T>& also) {
  const std::int64_t n = v.shape()[0], c = v.shape()[1], nb = mat_batch_count(v.shape());
  Tensor<T> E = Tensor<T>::empty(v.shape());
  const std::int64_t qn = also.defined() ? also.shape()[0] : 0;
  canonicalize_columns(v.mutable_data(), n, c, nb, E.mutable_data(), [&](std::int64_t b, std::int64_t j, T f) {
    if (qn == 0) return;
    T* q = also.mutable_data() + b * qn * c;
    for (std::int64_t i = 0; i < qn; ++i) q[i + j * qn] *= f;
  });
  return E;
}

// The column phase rates that keep the selected entries real: phi_j = -Im(dV[k_j, j]) / V[k_j, j]
// (zero for real types), as a 1 x c x batch row.
template <class T>
Tensor<real_t<T>> gauge_rates(const Tensor<T>& E, const Tensor<T>& V, const Tensor<T>& dV) {
  auto sel = [&](const Tensor<T>& X) { return sum(mul(E, X), {0}, true); };
  return neg(div(imag(sel(dV)), real(sel(V))));
}

}  // namespace tenax::detail
