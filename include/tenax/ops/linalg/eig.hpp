#pragma once
// eig / eigvals: eigenvalues and right eigenvectors of general (non-Hermitian) matrices, complex
// for every input dtype, by the device backend's geev (LAPACK's on the CPU, cusolverDnXgeev on CUDA).
#include <complex>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/linalg/batched.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/info_check.hpp"
#include "tenax/ops/linalg/solve.hpp"
#include "tenax/ops/linalg/spectral.hpp"

namespace tenax {
namespace ops {

// Outputs: eigenvalues w (n x batch, complex, the solver's order), eigenvectors V (n x n x batch,
// complex; undefined when !vectors), info.
struct Eig {
  static constexpr const char* name = "eig";
  static constexpr bool one_kernel = true;  // on the CPU, forward is one captured kernel (kernels/capture.hpp)
  static constexpr bool saves_outputs = true;
  bool vectors;   // compute V
  bool v_output;  // V is returned to the user (eig), so the rules carry its derivative
  linalg::Degeneracy policy;
  // The variant to run when a derivative is needed (re-executing a traced eigvals under AD).
  Eig for_derivatives() const {
    Eig o = *this;
    o.v_output = v_output || vectors;
    o.vectors = true;
    return o;
  }

  // w, V with unit columns whose first largest-modulus entry is real and positive, and info per
  // matrix: a matrix with inf or NaN has info kNonFiniteInfo, a failed one (no convergence) NaN
  // values and vectors. The device's backend computes them (on the CPU one captured kernel,
  // src/cpu/linalg_spectral.cpp).
  template <class T>
  std::tuple<Tensor<std::complex<real_t<T>>>, Tensor<std::complex<real_t<T>>>, Tensor<std::int32_t>> forward(
      const Tensor<T>& A) const {
    return detail::linalg_backend<T>(name, A.device()).eig(A, vectors);
  }

  // A V = V diag(w), first-order perturbation theory in the gauge of unit-norm eigenvectors
  // (PyTorch's): with P = V^-1 dA V and F_ij = 1/(w_j - w_i) (0 on the diagonal; the degeneracy
  // policy, spectral.hpp):
  //   dw = diag(P);   C = F o P;   dV = V (C - diag(Re diag(V^H V C)))
  //   K = V^H gV;     gA = V^-H (diag(gw) + conj(F) o (K - V^H V diag(Re diag K))) V^H
  // (real A: the real part). The V^-1 products are solves with V (public, so every order works);
  // the gauge diagnostic flags a loss that depends on the eigenvectors' phases (Im diag K != 0) or,
  // under Mask, on the basis of a (numerically) repeated eigenvalue's eigenspace.
  template <class Ctx>
  auto jvp(const Ctx& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    using C = std::complex<real_t<T>>;
    const Tensor<C>& V = c.y1();
    const Tensor<C> dA = cast<C>(c.dx0());
    const Tensor<C> P = linalg::solve(V, matmul(dA, V));
    const Tensor<C> dw = contiguous(diagonal(P));
    Tensor<C> dV;
    if (v_output || (V.defined() && is_grad_enabled() && c.x0().tracks_grad())) {
      const Tensor<C> Cm = mul(detail::inverse_complex_gaps(c.y0(), policy), P);
      const Tensor<real_t<T>> d = real(diagonal(matmul(matmul(V.mH(), V), Cm)));
      dV = matmul(V, sub(Cm, diag_embed(cast<C>(d))));
    }
    return std::tuple{dw, dV, Tensor<std::int32_t>()};
  }
  template <class Ctx>
  auto vjp(const Ctx& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    using C = std::complex<real_t<T>>;
    const Tensor<C>& V = c.y1();
    TENAX_CHECK(V.defined(), name, "internal error: eigenvectors were not computed for a gradient");
    if (!c.gy0().defined() && !c.gy1().defined()) return std::tuple{Tensor<T>()};
    Tensor<C> rhs;  // diag(gw) V^H + (conj(F) o (K - V^H V diag(Re diag K))) V^H
    if (c.gy1().defined()) {
      const Tensor<C> K = matmul(V.mH(), c.gy1());
      const Tensor<C> rel = sub(K, mul(matmul(V.mH(), V), detail::as_row(cast<C>(real(diagonal(K))))));
      Tensor<bool> masked;
      const Tensor<C> F = detail::inverse_complex_gaps(c.y0(), policy, &masked);
      if (policy.mode == linalg::Degeneracy::Mode::Mask && masked.defined())
        detail::gauge_check(name, policy, where(masked, rel, Tensor<C>::zeros({}, rel.device())), K,
                            "eigenvector basis inside a degenerate eigenspace");
      detail::gauge_check(name, policy, imag(diagonal(K)), real(K), "eigenvector phases");
      Tensor<C> mid = mul(conj(F), rel);
      if (c.gy0().defined()) mid = add(mid, diag_embed(c.gy0()));
      rhs = matmul(mid, V.mH());
    } else {
      // diag(gw) V^H scales the rows of V^H: no product.
      const Tensor<C>& gw = c.gy0();
      rhs = mul(V.mH(), reshape(gw, detail::with_batch(gw.shape()[0], 1, detail::mat_batch_shape(V.shape()))));
    }
    const Tensor<C> gA = linalg::solve(V.mH(), rhs);
    if constexpr (is_complex_v<T>)
      return std::tuple{gA};
    else
      return std::tuple{real(gA)};
  }
};

}  // namespace ops

namespace linalg {
namespace detail_eig {

template <class T>
auto run(const Tensor<T>& A, bool vectors, bool v_output, const Degeneracy& pol, const char* op, bool check = true) {
  tenax::detail::check_square(op, A);
  auto r = tenax::detail::apply(ops::Eig{vectors, v_output, pol}, A);
  if (check)
    tenax::detail::raise_info(op, std::get<2>(r), A.shape(), dtype_traits<T>::name, [](std::int32_t k) {
      if (k == tenax::detail::kNonFiniteInfo) return std::string(tenax::detail::kNonFiniteMessage);
      return "the QR iteration did not converge (info " + std::to_string(k) + ")";
    });
  return r;
}

}  // namespace detail_eig

// Eigenvalues (n x batch) and right eigenvectors (columns of n x n x batch) of each square matrix
// of A (torch.linalg.eig): A V = V diag(w), both complex for every dtype (std::complex<T> for real
// T), eigenvalues in the solver's order (LAPACK's), eigenvectors of unit 2-norm with their first
// largest-modulus entry real and positive. Derivatives are those of the unit-norm gauge: a loss
// must not depend on the eigenvectors' phases (the gauge diagnostic raises, per `policy`), and
// repeated eigenvalues follow `policy` (spectral.hpp). A defective matrix (V singular) has no
// derivative: the rules' solves with V raise.
template <Floating T>
std::pair<Tensor<std::complex<real_t<T>>>, Tensor<std::complex<real_t<T>>>> eig(const Tensor<T>& A,
                                                                                Degeneracy policy = {}) {
  auto [w, V, info] = detail_eig::run(A, true, true, policy, "eig");
  return {w, V};
}

// As eig, without the check: info holds, per matrix, 0 on success, k > 0 when the QR iteration
// did not converge (LAPACK's info), -1 when the input is not finite; failed matrices get NaN values
// and vectors.
template <Floating T>
std::tuple<Tensor<std::complex<real_t<T>>>, Tensor<std::complex<real_t<T>>>, Tensor<std::int32_t>> eig_ex(
    const Tensor<T>& A, Degeneracy policy = {}) {
  return detail_eig::run(A, true, true, policy, "eig", false);
}

// Eigenvalues only (torch.linalg.eigvals). The eigenvectors are computed anyway when a derivative
// may be needed (the input records gradients or carries a tangent): gA = V^-H diag(gw) V^H.
template <Floating T>
Tensor<std::complex<real_t<T>>> eigvals(const Tensor<T>& A) {
  tenax::detail::check_defined("eigvals", A);
  const bool need_v = tenax::detail::differentiated_again(A);
  auto [w, V, info] = detail_eig::run(A, need_v, false, Degeneracy{}, "eigvals");
  return w;
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_EIG(T)                                                                                      \
  TENAX_INSTANCE std::pair<Tensor<std::complex<real_t<T>>>, Tensor<std::complex<real_t<T>>>> eig(const Tensor<T>&,  \
                                                                                                 Degeneracy);       \
  TENAX_INSTANCE std::tuple<Tensor<std::complex<real_t<T>>>, Tensor<std::complex<real_t<T>>>, Tensor<std::int32_t>> \
  eig_ex(const Tensor<T>&, Degeneracy);                                                                             \
  TENAX_INSTANCE Tensor<std::complex<real_t<T>>> eigvals(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_EIG)

}  // namespace linalg
}  // namespace tenax
