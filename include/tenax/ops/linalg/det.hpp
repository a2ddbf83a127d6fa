#pragma once
// det of square matrices, from one LU factorization that the derivative rules reuse; at exactly
// singular matrices the rules use the adjugate from an SVD, so the gradient of this polynomial is
// right there too (adj(A) has rank 1 when rank A = n - 1, and is 0 below).
#include "tenax/ad/apply.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/lu_solve.hpp"
#include "tenax/ops/linalg/matmul.hpp"
#include "tenax/ops/linalg/slogdet.hpp"
#include "tenax/ops/linalg/svd.hpp"

namespace tenax {
namespace linalg {
template <Floating T>
Tensor<T> det(const Tensor<T>& A);
}  // namespace linalg

namespace detail {

// True when some matrix's determinant is exactly zero (read on the host).
template <class T>
bool any_singular(const Tensor<T>& d) {
  const Tensor<T> c = d.to(Device::cpu()).contiguous();
  for (std::int64_t b = 0; b < c.numel(); ++b)
    if (c.data()[b] == T(0)) return true;
  return false;
}

// adj(A), defined for every square A, from A = U diag(s) V^H:
//   adj(A) = adj(V^H) adj(diag s) adj(U) = det(U) det(V^H) V diag(p) U^H,  p_i = prod_{j != i} s_j
// (adj(M) = det(M) M^-1 for the unitary factors). p is a product with the i-th entry replaced by 1,
// so no division by a zero singular value. Written with public ops: differentiable.
template <class T>
Tensor<T> adjugate(const Tensor<T>& A) {
  const std::int64_t n = A.shape()[0];
  const Shape batch = mat_batch_shape(A.shape());
  // The op without the wrapper's info check: a matrix with inf or NaN gives a NaN adjugate (the
  // derivative rules run on whole batches, where other matrices may be fine).
  auto [U, S, Vh, info, E] = tenax::detail::apply(ops::Svd{false, true, true, linalg::Degeneracy{}}, A);
  const Tensor<T> I = Tensor<T>::eye(n, n, A.device());
  // M(j, i) = s_j off the diagonal, 1 on it; p = the product of each column.
  const Tensor<T> M = add(mul(unsqueeze(cast<T>(S), 1), sub(Tensor<T>::ones(Shape{n, n}, A.device()), I)), I);
  const Tensor<T> p = prod(M, {0}, true);  // 1 x n x batch
  const Tensor<T> scale = mul(linalg::det(U), linalg::det(Vh));
  return mul(matmul(mul(Vh.mH(), p), U.mH()), reshape(scale, with_batch(1, 1, batch)));
}

}  // namespace detail

namespace ops {

// Outputs: det (T), LU, pivots.
struct Det {
  static constexpr const char* name = "det";
  static constexpr bool one_kernel = true;  // on the CPU, forward is one captured kernel (kernels/capture.hpp)
  static constexpr bool saves_outputs = true;

  // det = sign * exp(log|det|) from slogdet's LU; on the CPU one captured kernel.
  template <class T>
  std::tuple<Tensor<T>, Tensor<T>, Tensor<std::int32_t>> forward(const Tensor<T>& A) const {
    if (!A.device().is_cpu()) {
      auto [sign, logabs, LU, piv] = Slogdet{}.forward(A);
      return {mul(sign, cast<T>(exp(logabs))), LU, piv};
    }
    using R = real_t<T>;
    const std::int64_t n = A.shape()[0], nb = detail::mat_batch_count(A.shape());
    const Shape batch = detail::mat_batch_shape(A.shape());
    Tensor<T> LU = Tensor<T>::empty(A.shape());
    Shape ps{n};
    for (auto d : batch) ps.push_back(d);
    Tensor<std::int32_t> piv = Tensor<std::int32_t>::empty(ps);
    Tensor<T> d = Tensor<T>::empty(batch);
    auto run = [copy = detail::copy_to_contiguous(A), n, nb](char* const* p) {
      copy(p[1], p[3]);
      detail::lu_determinants(reinterpret_cast<T*>(p[1]), reinterpret_cast<std::int32_t*>(p[2]), n, nb,
                              [&](std::int64_t b, T s, R l) { reinterpret_cast<T*>(p[0])[b] = s * T(std::exp(l)); });
    };
    detail::record_kernel_n(run, {d.impl().get(), LU.impl().get(), piv.impl().get()}, {A.impl().get()});
    return {d, LU, piv};
  }

  // d det = tr(adj(A) dA) = det tr(A^-1 dA) (one getrs with n right-hand sides on the saved LU);
  // gA = gdet adj(A)^H = (gdet conj(det)) A^-H (getrs 'C'). At an exactly singular A, adj(A) comes
  // from detail::adjugate instead. The solves are SavedLuSolve (differentiable in A to any order
  // on the same factors; a failed matrix's NaN factors give NaN derivatives, as the forward gives
  // NaN, instead of an error from inside a rule).
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>& A = c.x0();
    Tensor<T> d;
    if (detail::any_singular(c.y0())) {
      d = sum(diagonal(matmul(detail::adjugate(A), c.dx0())), {0});
    } else {
      const Tensor<T> AinvdA = detail::apply(SavedLuSolve{cpu::Trans::N}, A, c.y1(), c.y2(), c.dx0());
      d = mul(c.y0(), sum(diagonal(AinvdA), {0}));
    }
    return std::tuple{d, Tensor<T>(), Tensor<std::int32_t>()};
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>& A = c.x0();
    if (!c.gy0().defined()) return Tensor<T>::zeros(A.shape(), A.device());
    const std::int64_t n = A.shape()[0];
    const Shape batch = detail::mat_batch_shape(A.shape());
    if (detail::any_singular(c.y0()))
      return mul(detail::adjugate(A).mH(), reshape(c.gy0(), detail::with_batch(1, 1, batch)));
    const Tensor<T> coef = reshape(mul(c.gy0(), conj(c.y0())), detail::with_batch(1, 1, batch));
    const Tensor<T> AinvH =
        detail::apply(SavedLuSolve{cpu::Trans::C}, A, c.y1(), c.y2(), detail::batch_eye<T>(n, batch, A.device()));
    return mul(AinvH, coef);
  }
};

}  // namespace ops

namespace linalg {

// det A (from the LU factorization; NaN for non-finite input). Its gradient is exact also at
// singular A (the adjugate).
template <Floating T>
Tensor<T> det(const Tensor<T>& A) {
  detail::check_square("det", A);
  return std::get<0>(detail::apply(ops::Det{}, A));
}

}  // namespace linalg
}  // namespace tenax
