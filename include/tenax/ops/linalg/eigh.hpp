#pragma once
// eigh / eigvalsh: eigenvalues (ascending) and eigenvectors of Hermitian matrices.
#include <optional>

#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/linalg/batched.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/diag_product.hpp"
#include "tenax/ops/linalg/eigh_small.hpp"
#include "tenax/ops/linalg/info_check.hpp"
#include "tenax/ops/linalg/scaled_product.hpp"
#include "tenax/ops/linalg/spectral.hpp"

namespace tenax {
namespace ops {

// Outputs: eigenvalues w (n x batch, real), eigenvectors V (undefined when !vectors), info.
struct Eigh {
  static constexpr const char* name = "eigh";
  static constexpr bool one_kernel = true;  // on the CPU, forward is one captured kernel (kernels/capture.hpp)
  static constexpr bool saves_outputs = true;
  bool upper;
  bool vectors;   // compute V
  bool v_output;  // V is returned to the user (eigh), so the rules carry its derivative
  linalg::Degeneracy policy;
  bool canonical = false;  // first largest-magnitude entry of each eigenvector real positive
  // V's tangent is formed for a derivative of the rules that read V, not because V was returned
  // (set by for_derivatives on an eigvalsh): the JVP takes the products, as the eager eigvalsh does
  // while it records, so both give the same bits.
  bool derived = false;
  // The variant to run when a derivative is needed (re-executing a traced eigvalsh under AD).
  // V computed at trace time was read by recorded steps (a traced gradient's rule), so the
  // re-executed op carries V's derivative to them (jvp of a traced grad).
  Eigh for_derivatives() const {
    Eigh o = *this;
    o.derived = derived || !v_output;
    o.v_output = v_output || vectors;
    o.vectors = true;
    return o;
  }

  // w (ascending), V, info and the canonical gauge E per matrix: a matrix with inf or NaN in its
  // referenced triangle has info kNonFiniteInfo, a failed one NaN values and vectors. The device's
  // backend computes them (on the CPU one captured kernel, src/cpu/linalg_spectral.cpp).
  template <class T>
  std::tuple<Tensor<real_t<T>>, Tensor<T>, Tensor<std::int32_t>, Tensor<T>> forward(const Tensor<T>& A) const {
    return detail::linalg_backend<T>(name, A.device()).eigh(A, upper, vectors, canonical);
  }

  // A = V diag(l) V^H, dA Hermitian (the returned gA is Hermitian):
  //   P = V^H dA V;  dl = Re diag(P);  dV = V (F o P)
  //   K = V^H gV;    gA = V [diag(gl) + F o (K - K^H)/2] V^H
  // with F_ij = 1/(l_j - l_i) under the degeneracy policy (spectral.hpp). Without a V cotangent
  // the F term is skipped entirely (eigvalsh: gA = V diag(gl) V^H), so repeated eigenvalues are
  // harmless there.
  // Second order of eigvalsh: its rule uses V, so V's own derivative is needed when that rule is
  // differentiated. The JVP then also gives V's tangent when the input records gradients (forward
  // over reverse), and the VJP uses a V cotangent whenever one arrives (reverse over reverse);
  // neither happens at first order.
  // Canonical gauge (complex): the columns are rotated by phases that keep the selected entries
  // real, so dV gains V i diag(phi) with phi_j = -Im(dV[k_j, j]) / V[k_j, j]; its adjoint replaces
  // gV by gV - i E o (Im diag(V^H gV) / V[k, j]) (E selects the entries), which also makes the
  // cotangent phase-invariant. Real types: the sign choice is locally constant, no change.
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>& V = c.y1();
    const bool need_v = v_output || (V.defined() && is_grad_enabled() && c.x0().tracks_grad());
    // Eigenvalues only: diag(P), for small matrices one op (ops/linalg/diag_product.hpp).
    if (!need_v)
      if (const Tensor<T> d = detail::diag_product_small(V, c.dx0(), V); d.defined())
        return std::tuple{real(d), Tensor<T>(), Tensor<std::int32_t>(), Tensor<T>()};
    Tensor<T> dV, F;
    Tensor<real_t<T>> dw;
    if (need_v) {
      // For small matrices diag(P) and V (F o P) are one op (ops/linalg/eigh_small.hpp) where V is
      // returned; V's tangent for a derivative of the rules (eigvalsh while recording, `derived`)
      // takes the products.
      F = cast<T>(detail::inverse_gaps(c.y0(), policy));
      if (v_output && !derived)
        if (auto [d, dv] = detail::eigh_tangent_small(V, c.dx0(), F); d.defined()) dw = real(d), dV = dv;
    }
    if (!dw.defined()) {
      const auto P = matmul(V.mH(), matmul(c.dx0(), V));
      dw = real(diagonal(P));
      if (need_v) dV = matmul(V, mul(F, P));
    }
    if (need_v) {
      if constexpr (is_complex_v<T>) {
        if (canonical) {
          const auto phi = detail::gauge_rates(c.template y<3>(), V, dV);
          dV = add(dV, mul(V, complex(mul(phi, real_t<T>(0)), phi)));
        }
      }
    }
    return std::tuple{dw, dV, Tensor<std::int32_t>(), Tensor<T>()};
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>& V = c.y1();
    TENAX_CHECK(V.defined(), name, "internal error: eigenvectors were not computed for a gradient");
    Tensor<T> mid;
    if (c.gy0().defined()) mid = diag_embed(cast<T>(c.gy0()));
    if (c.gy1().defined()) {
      Tensor<T> gV = c.gy1();
      if constexpr (is_complex_v<T>) {
        if (canonical) {
          const auto& E = c.template y<3>();
          const auto im = imag(sum(mul(conj(V), gV), {0}, true));
          const auto r = real(sum(mul(E, V), {0}, true));
          gV = sub(gV, mul(E, complex(mul(im, real_t<T>(0)), div(im, r))));
        }
      }
      // K = V^H gV, formed where the gauge checks or the products read it (the small-matrix op
      // forms its own, so in a compiled program, where no check runs, its product is dead code).
      Tensor<T> K_;
      auto K = [&]() -> const Tensor<T>& {
        if (!K_.defined()) K_ = matmul(V.mH(), gV);
        return K_;
      };
      auto skew = [&] { return mul(sub(K(), K().mH()), T(0.5)); };
      Tensor<bool> masked;
      const auto F = cast<T>(detail::inverse_gaps(c.y0(), policy, &masked));
      if (policy.mode == linalg::Degeneracy::Mode::Mask && masked.defined())
        detail::gauge_check(name, policy, where(masked, skew(), Tensor<T>::zeros({}, V.device())), K(),
                            "eigenvector basis inside a degenerate eigenspace");
      if constexpr (is_complex_v<T>)
        detail::gauge_check(name, policy, imag(diagonal(K())), real(K()), "eigenvector phases");
      // For small matrices V (diag(gw) + F o skew) V^H is one op (ops/linalg/eigh_small.hpp).
      const Tensor<T> g = c.gy0().defined() ? cast<T>(c.gy0()) : Tensor<T>::zeros(c.y0().shape(), V.device());
      if (Tensor<T> gA = detail::eigh_cotangent_small(V, gV, F, g); gA.defined()) return gA;
      mid = detail::accumulate(mid, mul(F, skew()));
    }
    if (!mid.defined()) return Tensor<T>::zeros(c.x0().shape(), c.x0().device());
    if (!c.gy1().defined()) {
      // V diag(gw) V^H: for small matrices one op (ops/linalg/scaled_product.hpp), else V scaled by
      // columns times V^H (one gemm instead of two).
      const Tensor<T> gw = cast<T>(c.gy0());
      if (Tensor<T> gA = detail::scaled_product_small(V, gw, V); gA.defined()) return gA;
      return matmul(mul(V, detail::as_row(gw)), V.mH());
    }
    return matmul(V, matmul(mid, V.mH()));
  }
};

}  // namespace ops

namespace linalg {
namespace detail_eigh {
template <class T>
auto run(const Tensor<T>& A, bool upper, bool vectors, bool v_output, const Degeneracy& pol, const char* op,
         bool canonical = false) {
  tenax::detail::check_square(op, A);
  auto r = tenax::detail::apply(ops::Eigh{upper, vectors, v_output, pol, canonical}, A);
  tenax::detail::raise_info(op, std::get<2>(r), A.shape(), dtype_traits<T>::name, [](std::int32_t k) {
    if (k == tenax::detail::kNonFiniteInfo) return std::string(tenax::detail::kNonFiniteMessage);
    return "the eigensolver did not converge (info " + std::to_string(k) + ")";
  });
  return r;
}
}  // namespace detail_eigh

// Eigenvalues (ascending, n x batch) and orthonormal eigenvectors (columns) of the Hermitian
// matrices given by their lower (default) or upper triangle. Derivatives follow `policy` for
// repeated eigenvalues. canonical_gauge: each eigenvector's first largest-magnitude entry is made
// real and positive (a sign for real types), which makes V a differentiable function of A away
// from ties; the rules account for it.
// Input convention (PyTorch's): only one triangle is read, tangents are taken as Hermitian, and
// the returned gradient is Hermitian.
template <Floating T>
std::pair<Tensor<real_t<T>>, Tensor<T>> eigh(const Tensor<T>& A, bool upper = false, Degeneracy policy = {},
                                             bool canonical_gauge = false) {
  auto [w, V, info, E] = detail_eigh::run(A, upper, true, true, policy, "eigh", canonical_gauge);
  return {w, V};
}

// Eigenvalues only. The eigenvectors are computed anyway when a derivative may be needed (the
// input records gradients or carries a tangent), since the rule gA = V diag(gw) V^H needs them.
template <Floating T>
Tensor<real_t<T>> eigvalsh(const Tensor<T>& A, bool upper = false) {
  detail::check_defined("eigvalsh", A);
  const bool need_v = tenax::detail::differentiated_again(A);
  auto [w, V, info, E] = detail_eigh::run(A, upper, need_v, false, Degeneracy{}, "eigvalsh");
  return w;
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_EIGH(T)                                                                          \
  TENAX_INSTANCE std::pair<Tensor<real_t<T>>, Tensor<T>> eigh(const Tensor<T>&, bool, Degeneracy, bool); \
  TENAX_INSTANCE Tensor<real_t<T>> eigvalsh(const Tensor<T>&, bool);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_EIGH)

}  // namespace linalg
}  // namespace tenax
