#pragma once
// lu_factor (packed LU and LAPACK pivots), lu (P, L, U), for square, tall and wide matrices.
#include "tenax/ad/apply.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/permute_rows.hpp"
#include "tenax/ops/linalg/solve_triangular.hpp"
#include "tenax/ops/linalg/triangular_matmul.hpp"

namespace tenax {
namespace ops {

// Outputs: packed LU (m x n), pivots (min(m, n) x batch, LAPACK's 1-based interchanges), info.
struct LuFactor {
  static constexpr const char* name = "lu_factor";
  static constexpr bool one_kernel = true;  // on the CPU, forward is one captured kernel (kernels/capture.hpp)
  static constexpr bool saves_outputs = true;

  template <class T>
  std::tuple<Tensor<T>, Tensor<std::int32_t>, Tensor<std::int32_t>> forward(const Tensor<T>& A) const {
    if (!A.device().is_cpu()) return forward_generic(A);
    const std::int64_t m = A.shape()[0], n = A.shape()[1], k = std::min(m, n), nb = detail::mat_batch_count(A.shape());
    Tensor<T> LU = Tensor<T>::empty(A.shape());
    Shape ps{k};
    for (auto d : detail::mat_batch_shape(A.shape())) ps.push_back(d);
    Tensor<std::int32_t> piv = Tensor<std::int32_t>::empty(ps);
    Tensor<std::int32_t> info = detail::info_tensor(A.shape());
    // One captured kernel: A copied into LU, then getrf per matrix (a matrix with inf or NaN
    // keeps identity pivots).
    auto run = [copy = detail::copy_to_contiguous(A), m, n, k, nb](char* const* p) {
      copy(p[0], p[3]);
      std::int32_t* pv = reinterpret_cast<std::int32_t*>(p[1]);
      detail::fill_identity_pivots(pv, k, nb);
      detail::for_each_matrix(reinterpret_cast<T*>(p[0]), m, n, nb, [&](T* lu, std::int64_t b) {
        std::int32_t& inf = reinterpret_cast<std::int32_t*>(p[2])[b];
        if (!detail::all_finite(lu, m * n))
          inf = detail::kNonFiniteInfo;
        else
          inf = cpu::getrf<T>(m, n, lu, std::max<std::int64_t>(1, m), pv + b * k);
      });
    };
    detail::record_kernel_n(run, {LU.impl().get(), piv.impl().get(), info.impl().get()}, {A.impl().get()});
    return {LU, piv, info};
  }
  // The same on any device: getrf per matrix, then tensor ops (detail::batched).
  template <class T>
  std::tuple<Tensor<T>, Tensor<std::int32_t>, Tensor<std::int32_t>> forward_generic(const Tensor<T>& A) const {
    auto [LU, piv, info] = detail::batched::lu_of(A);
    return {LU, piv, LU.numel() == 0 ? info : detail::with_nonfinite(info, A)};
  }

  // A = P L U, L unit lower (m x k), U upper (k x n), k = min(m, n); P is locally constant.
  // With X = P^T dA (square case):
  //   C = L^-1 X U^-1;  dL = L tril(C, -1);  dU = triu(C) U;  dLU = dL + dU
  //   gA = P L^-H [tril(L^H gL, -1) + triu(gU U^H)] U^-H,  gL = tril(gLU, -1), gU = triu(gLU)
  // Wide (m < n, U = [U1 U2]):  C = L^-1 X1 U1^-1;  dU2 = L^-1 X2 - tril(C, -1) U2
  //   gA = P L^-H [ (tril(L^H gL - gU2 U2^H, -1) + triu(gU1 U1^H)) U1^-H ,  gU2 ]
  // Tall (m > n, L = [L1; L2]):  C = L1^-1 X1 U^-1;  dL2 = X2 U^-1 - L2 triu(C)
  //   P^T gA = [ L1^-H (tril(L1^H gL1, -1) + triu(gU U^H - L2^H gL2)) U^-H ;  gL2 U^-H ]
  // (MATH.md section 3.) U (U1) must be nonsingular.
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>& LU = c.y0();
    const std::int64_t m = LU.shape()[0], n = LU.shape()[1];
    const Tensor<T> X = detail::permute_rows(c.dx0(), detail::pivots_to_permutation(c.y1(), m));
    Tensor<T> dLU;
    if (m == n) {  // L and U read from the packed LU (triangular solves and products)
      auto Cm = lsolve(LU, rsolve_upper(LU, X));
      dLU = add(linalg::triangular_matmul(LU, tril(Cm, -1), false, true, true),
                linalg::triangular_matmul(LU, triu(Cm), true, false));
    } else if (m < n) {
      auto L = unit_lower(slice(LU, 1, 0, m), m), U = triu(LU);
      auto U1 = slice(U, 1, 0, m), U2 = slice(U, 1, m, n);
      auto Cm = lsolve(L, rsolve_upper(U1, slice(X, 1, 0, m)));
      auto left = add(matmul(L, tril(Cm, -1)), matmul(triu(Cm), U1));
      auto right = sub(lsolve(L, slice(X, 1, m, n)), matmul(tril(Cm, -1), U2));
      dLU = concat<T>({left, right}, 1);
    } else {
      auto U = triu(slice(LU, 0, 0, n));
      auto L1 = unit_lower(slice(LU, 0, 0, n), n), L2 = slice(LU, 0, n, m);
      auto Cm = lsolve(L1, rsolve_upper(U, slice(X, 0, 0, n)));
      auto top = add(matmul(L1, tril(Cm, -1)), matmul(triu(Cm), U));
      auto bottom = sub(rsolve_upper(U, slice(X, 0, n, m)), matmul(L2, triu(Cm)));
      dLU = concat<T>({top, bottom}, 0);
    }
    return std::tuple{dLU, Tensor<std::int32_t>(), Tensor<std::int32_t>()};
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>&LU = c.y0(), &g = c.gy0();
    const std::int64_t m = LU.shape()[0], n = LU.shape()[1];
    Tensor<T> PtgA;
    if (m == n) {  // L and U read from the packed LU (triangular products and solves)
      auto M = add(tril(linalg::triangular_matmul(LU, tril(g, -1), false, true, true, cpu::Trans::C), -1),
                   triu(linalg::triangular_matmul(LU, triu(g), true, false, false, cpu::Trans::C)));
      PtgA = lsolve_h(LU, rsolve_upper_h(LU, M));
    } else if (m < n) {
      auto L = unit_lower(slice(LU, 1, 0, m), m), U = triu(LU);
      auto U1 = slice(U, 1, 0, m), U2 = slice(U, 1, m, n);
      auto g1 = slice(g, 1, 0, m), gU2 = slice(g, 1, m, n);
      auto M = add(tril(sub(matmul(L.mH(), tril(g1, -1)), matmul(gU2, U2.mH())), -1), triu(matmul(triu(g1), U1.mH())));
      PtgA = concat<T>({lsolve_h(L, rsolve_upper_h(U1, M)), lsolve_h(L, gU2)}, 1);
    } else {
      auto U = triu(slice(LU, 0, 0, n));
      auto L1 = unit_lower(slice(LU, 0, 0, n), n), L2 = slice(LU, 0, n, m);
      auto g1 = slice(g, 0, 0, n), gL2 = slice(g, 0, n, m);
      auto M = add(tril(matmul(L1.mH(), tril(g1, -1)), -1), triu(sub(matmul(triu(g1), U.mH()), matmul(L2.mH(), gL2))));
      PtgA = concat<T>({lsolve_h(L1, rsolve_upper_h(U, M)), rsolve_upper_h(U, gL2)}, 0);
    }
    auto inv = detail::inverse_permutation(detail::pivots_to_permutation(c.y1(), m));
    return detail::permute_rows(PtgA, inv);
  }

 private:
  template <class T>
  static Tensor<T> unit_lower(const Tensor<T>& sq, std::int64_t k) {
    return add(tril(sq, -1), detail::batch_eye<T>(k, detail::mat_batch_shape(sq.shape()), sq.device()));
  }
  template <class T>
  static Tensor<T> lsolve(const Tensor<T>& L, const Tensor<T>& B) {  // L^-1 B, L unit lower
    return linalg::solve_triangular(L, B, false, true, true);
  }
  template <class T>
  static Tensor<T> lsolve_h(const Tensor<T>& L, const Tensor<T>& B) {  // L^-H B
    return linalg::solve_triangular(L, B, false, true, true, cpu::Trans::C);
  }
  template <class T>
  static Tensor<T> rsolve_upper(const Tensor<T>& U, const Tensor<T>& B) {  // B U^-1
    return linalg::solve_triangular(U, B, true, false);
  }
  template <class T>
  static Tensor<T> rsolve_upper_h(const Tensor<T>& U, const Tensor<T>& B) {  // B U^-H
    return linalg::solve_triangular(U, B, true, false, false, cpu::Trans::C);
  }
};

}  // namespace ops

namespace linalg {

// Packed LU factorization with partial pivoting: (LU, pivots, info). info per matrix: 0, or k > 0
// when U(k, k) is exactly zero (the factorization is still complete), or -1 for non-finite input.
template <Floating T>
std::tuple<Tensor<T>, Tensor<std::int32_t>, Tensor<std::int32_t>> lu_factor_ex(const Tensor<T>& A) {
  detail::check_matrix("lu_factor", A);
  return detail::apply(ops::LuFactor{}, A);
}

// Packed LU factorization (LU, pivots); throws LinAlgError for non-finite input. A singular A
// factorizes (U then has a zero pivot, which lu_factor_ex reports).
template <Floating T>
std::pair<Tensor<T>, Tensor<std::int32_t>> lu_factor(const Tensor<T>& A) {
  auto [LU, piv, info_any] = lu_factor_ex(A);
  const Tensor<std::int32_t> info = info_any.to(Device::cpu());
  for (std::int64_t b = 0; b < info.numel(); ++b) {
    if (info.data()[b] == detail::kNonFiniteInfo) {
      std::ostringstream o;
      o << "[lu_factor] the input contains inf or NaN" << detail::batch_index(A.shape(), b) << " (input shape "
        << A.shape() << ")";
      throw LinAlgError(o.str());
    }
  }
  return {LU, piv};
}

// A = P L U: P (m x m permutation), L (m x k unit lower), U (k x n upper), k = min(m, n).
// Differentiable through L and U (P is locally constant).
template <Floating T>
std::tuple<Tensor<T>, Tensor<T>, Tensor<T>> lu(const Tensor<T>& A) {
  auto [LU, piv] = lu_factor(A);
  const std::int64_t m = A.shape()[0], n = A.shape()[1], k = std::min(m, n);
  const Shape batch = detail::mat_batch_shape(A.shape());
  const Device dev = A.device();
  Tensor<T> L = add(tril(slice(LU, 1, 0, k), -1), expand(Tensor<T>::eye(m, k, dev), detail::with_batch(m, k, batch)));
  Tensor<T> U = triu(slice(LU, 0, 0, k));
  // P[perm[i], i] = 1: the transpose of the identity's rows gathered by perm.
  const auto perm = detail::pivots_to_permutation(piv, m);
  Tensor<T> P =
      contiguous(detail::permute_rows(expand(Tensor<T>::eye(m, m, dev), detail::with_batch(m, m, batch)), perm).mT());
  return {P, L, U};
}

}  // namespace linalg
}  // namespace tenax
