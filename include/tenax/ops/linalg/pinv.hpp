#pragma once
// pinv: the Moore-Penrose pseudo-inverse from the SVD (or, for Hermitian input, the eigendecomposition)
// with PyTorch's tolerance rule; matrix_rank: the number of singular values above that tolerance.
// Both run on every device (the factorization is the device backend's; the rest are public ops).
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <tuple>

#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/eigh.hpp"
#include "tenax/ops/linalg/info_check.hpp"
#include "tenax/ops/linalg/svd.hpp"
#include "tenax/ops/reduce/extremum.hpp"
#include "tenax/ops/reduce/sum.hpp"
#include "tenax/ops/shape/diagonal.hpp"
#include "tenax/ops/shape/triangle.hpp"

namespace tenax {
namespace detail {

// PyTorch's rule: singular values (or |eigenvalues|) s_i > max(atol, rtol * max_i s_i) are kept;
// rtol defaults to eps * max(m, n) unless atol > 0 is given alone (then rtol = 0).
struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

template <class T>
Tolerance resolve_tolerance(std::optional<double> atol, std::optional<double> rtol, const Shape& shape) {
  const double eps = std::numeric_limits<real_t<T>>::epsilon();
  const double a = atol.value_or(0.0);
  const double r = rtol ? *rtol : (a > 0 ? 0.0 : eps * static_cast<double>(std::max(shape[0], shape[1])));
  return {a, r};
}

template <class T>
void check_tolerance(const char* op, const Tolerance& tol, const Tensor<T>& A) {
  TENAX_CHECK(tol.atol >= 0 && tol.rtol >= 0, op, "atol ", tol.atol, " and rtol ", tol.rtol, " must be non-negative (",
              dtype_traits<T>::name, " ", A.shape(), " on ", A.device().str(), ")");
}

// Which of the values s (k x batch, non-negative) pass the tolerance of their matrix.
template <class R>
Tensor<bool> above_tolerance(const Tensor<R>& s, const Tolerance& tol) {
  const Tensor<R> smax = max(s, {0}, true);
  const Tensor<R> cut =
      maximum(mul(smax, static_cast<R>(tol.rtol)), Tensor<R>::scalar(static_cast<R>(tol.atol), s.device()));
  return gt(s, cut);
}

inline std::string eigensolver_failure(std::int32_t k) {
  if (k == kNonFiniteInfo) return kNonFiniteMessage;
  return "the eigensolver did not converge (info " + std::to_string(k) + ")";
}

// 1 / v where keep, else 0 (v is replaced by 1 where it is dropped, so no 1 / 0 is formed).
template <class R>
Tensor<R> kept_reciprocal(const Tensor<R>& v, const Tensor<bool>& keep) {
  const Device d = v.device();
  return where(keep, rdiv(where(keep, v, Tensor<R>::scalar(R(1), d)), R(1)), Tensor<R>::scalar(R(0), d));
}

// The derivative of the pseudo-inverse P = A^+ at constant rank (Golub and Pereyra 1973), from A
// and P alone (nothing is factorized again), in public ops (so every order works):
//   dP = -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P
//   gA = -P^H G P^H + (I - A P) G^H P P^H + P^H P G^H (I - P A)
// The products are ordered so that no m x m or n x n projector is formed.
template <class T>
Tensor<T> pinv_jvp(const Tensor<T>& A, const Tensor<T>& P, const Tensor<T>& dA) {
  const Tensor<T> dAh = dA.mH();
  const Tensor<T> t1 = neg(matmul(P, matmul(dA, P)));
  const Tensor<T> Y = sub(dAh, matmul(matmul(dAh, A), P));
  const Tensor<T> t2 = matmul(P, matmul(P.mH(), Y));
  const Tensor<T> Z = matmul(dAh, matmul(P.mH(), P));
  const Tensor<T> t3 = sub(Z, matmul(P, matmul(A, Z)));
  return add(add(t1, t2), t3);
}
template <class T>
Tensor<T> pinv_vjp(const Tensor<T>& A, const Tensor<T>& P, const Tensor<T>& G) {
  const Tensor<T> Gh = G.mH(), Ph = P.mH();
  const Tensor<T> t1 = neg(matmul(Ph, matmul(G, Ph)));
  const Tensor<T> W = matmul(Gh, matmul(P, Ph));
  const Tensor<T> t2 = sub(W, matmul(A, matmul(P, W)));
  const Tensor<T> V = matmul(matmul(Ph, P), Gh);
  const Tensor<T> t3 = sub(V, matmul(matmul(V, P), A));
  return add(add(t1, t2), t3);
}

// P = A^+ from the thin SVD (U, S, Vh) with the tolerance applied, and S, in tensor ops: the generic
// form of BatchedLinalg::pinv (the CPU runs it as one fused kernel, src/cpu/linalg_pinv.cpp), and
// lstsq's forward when B's batch is larger than A's.
template <class T>
std::tuple<Tensor<T>, Tensor<real_t<T>>> pinv_from_svd(const char* op, const Tensor<T>& A, const Tolerance& tol) {
  using R = real_t<T>;
  auto [U, S, Vh, info, E] = ops::Svd{false, true, true, linalg::Degeneracy{}, false}.forward(A);
  (void)E;
  raise_info(op, info, A.shape(), dtype_traits<T>::name, linalg::detail_svd::failure);
  const Tensor<R> sinv = kept_reciprocal(S, above_tolerance(S, tol));
  return {matmul(mul(Vh.mH(), cast<T>(as_row(sinv))), U.mH()), S};
}

}  // namespace detail

namespace ops {

// Outputs P = A^+ (n x m x batch) and the values the tolerance was applied to (the singular
// values, descending; for hermitian the eigenvalues' magnitudes in the eigensolver's order), which
// carry no derivative: the public wrappers return them detached.
struct Pinv {
  static constexpr const char* name = "pinv";
  static constexpr bool one_kernel = true;  // on the CPU, forward is one captured kernel (not hermitian)
  static constexpr bool saves_outputs = true;
  detail::Tolerance tol;
  bool hermitian = false;

  template <class T>
  std::tuple<Tensor<T>, Tensor<real_t<T>>> forward(const Tensor<T>& A) const {
    using R = real_t<T>;
    if (hermitian) {
      auto [w, V, info, E] = Eigh{false, true, true, linalg::Degeneracy{}, false}.forward(A);
      (void)E;
      detail::raise_info("pinv", info, A.shape(), dtype_traits<T>::name, detail::eigensolver_failure);
      const Tensor<R> aw = abs(w);
      const Tensor<R> winv = detail::kept_reciprocal(w, detail::above_tolerance(aw, tol));
      return {matmul(mul(V, cast<T>(detail::as_row(winv))), V.mH()), aw};
    }
    auto [P, S, X] = detail::linalg_backend<T>(name, A.device()).pinv(name, A, Tensor<T>(), tol.atol, tol.rtol);
    return {P, S};
  }

  // detail::pinv_jvp / pinv_vjp: the pseudo-inverse's derivative from A and P.
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    return std::tuple{detail::pinv_jvp(c.x0(), c.y0(), c.dx0()), Tensor<real_t<T>>()};
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    if (!c.gy0().defined()) return std::tuple{Tensor<T>()};
    return std::tuple{detail::pinv_vjp(c.x0(), c.y0(), c.gy0())};
  }
};

// The number of values above the tolerance, per matrix (int64, batch-shaped); no derivative.
struct MatrixRank {
  static constexpr const char* name = "matrix_rank";
  detail::Tolerance tol;
  bool hermitian = false;

  template <class T>
  Tensor<std::int64_t> forward(const Tensor<T>& A) const {
    using R = real_t<T>;
    Tensor<R> s;
    Tensor<std::int32_t> info;
    if (hermitian) {
      auto [w, V, i, E] = Eigh{false, false, false, linalg::Degeneracy{}, false}.forward(A);
      s = abs(w), info = i;
    } else {
      auto [U, S, Vh, i, E] = Svd{false, false, false, linalg::Degeneracy{}, false}.forward(A);
      s = S, info = i;
    }
    detail::raise_info("matrix_rank", info, A.shape(), dtype_traits<T>::name,
                       hermitian ? detail::eigensolver_failure : linalg::detail_svd::failure);
    return cast<std::int64_t>(sum(cast<R>(detail::above_tolerance(s, tol)), {0}, false));
  }
};

}  // namespace ops

namespace linalg {
namespace detail_pinv {

// The pseudo-inverse of empty matrices (n x m x batch, zeros), connected to A's graph.
template <class T>
Tensor<T> empty_pinv(const Tensor<T>& A) {
  return mul(A.mH(), T(0));
}

// tril(A, -1) + tril(A, -1)^H + Re diag(A): the Hermitian matrix given by A's lower triangle.
template <class T>
Tensor<T> lower_hermitian(const Tensor<T>& A) {
  const Tensor<T> lo = tril(A, -1);
  return add(add(lo, lo.mH()), diag_embed(cast<T>(real(diagonal(A)))));
}

}  // namespace detail_pinv

// The pseudo-inverse of each matrix of A (m x n -> n x m), torch.linalg.pinv: singular values
// s_i <= max(atol, rtol * s_max) are treated as zero; rtol defaults to eps * max(m, n) unless only
// atol > 0 is given. hermitian: A is Hermitian (only its lower triangle is read, as in eigh) and the
// eigendecomposition replaces the SVD. Differentiable where the rank is constant (the derivative
// does not factorize again); tangents of a hermitian call are taken as Hermitian.
template <Floating T>
Tensor<T> pinv(const Tensor<T>& A, std::optional<double> atol = {}, std::optional<double> rtol = {},
               bool hermitian = false) {
  tenax::detail::check_matrix("pinv", A);
  if (hermitian) tenax::detail::check_square("pinv", A);
  const auto tol = tenax::detail::resolve_tolerance<T>(atol, rtol, A.shape());
  tenax::detail::check_tolerance("pinv", tol, A);
  if (A.numel() == 0) return detail_pinv::empty_pinv(A);
  // hermitian: the rules read A itself, so they get the Hermitian matrix the eigensolver sees (the
  // lower triangle mirrored, the diagonal's real part); its derivative reaches that triangle.
  const Tensor<T> In = hermitian ? detail_pinv::lower_hermitian(A) : A;
  return std::get<0>(tenax::detail::apply(ops::Pinv{tol, hermitian}, In));
}

// The numerical rank of each matrix of A (int64, batch-shaped; torch.linalg.matrix_rank): the number
// of singular values (hermitian: |eigenvalues|) above max(atol, rtol * s_max), with pinv's defaults.
template <Floating T>
Tensor<std::int64_t> matrix_rank(const Tensor<T>& A, std::optional<double> atol = {}, std::optional<double> rtol = {},
                                 bool hermitian = false) {
  tenax::detail::check_matrix("matrix_rank", A);
  if (hermitian) tenax::detail::check_square("matrix_rank", A);
  const auto tol = tenax::detail::resolve_tolerance<T>(atol, rtol, A.shape());
  tenax::detail::check_tolerance("matrix_rank", tol, A);
  if (A.numel() == 0) return Tensor<std::int64_t>::zeros(tenax::detail::mat_batch_shape(A.shape()), A.device());
  return tenax::detail::apply_nondiff(ops::MatrixRank{tol, hermitian}, A);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_PINV(T)                                                                        \
  TENAX_INSTANCE Tensor<T> pinv(const Tensor<T>&, std::optional<double>, std::optional<double>, bool); \
  TENAX_INSTANCE Tensor<std::int64_t> matrix_rank(const Tensor<T>&, std::optional<double>, std::optional<double>, bool);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_PINV)

}  // namespace linalg
}  // namespace tenax
