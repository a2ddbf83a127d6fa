#pragma once
// lu_factor (packed LU and LAPACK pivots), lu (P, L, U), for square, tall and wide matrices.
#include <algorithm>
#include <vector>

#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/info_check.hpp"
#include "tenax/ops/linalg/lu_tangent.hpp"
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

  // Packed LU (m x n), pivots (min(m, n) x batch) and info per matrix; a matrix with inf or NaN
  // gets info kNonFiniteInfo, NaN factors and identity pivots. The device's backend computes them
  // (on the CPU one captured kernel, src/cpu/linalg_lu.cpp).
  template <class T>
  std::tuple<Tensor<T>, Tensor<std::int32_t>, Tensor<std::int32_t>> forward(const Tensor<T>& A) const {
    return detail::linalg_backend<T>(name, A.device()).lu_factor(A);
  }

  // A = P L U, L unit lower (m x k), U upper (k x n), k = min(m, n); P is locally constant.
  // The rules are LuRules's, with L and U read from the packed LU.
  template <class C>
  auto jvp(const C& c) const;
  template <class C>
  auto vjp(const C& c) const;
};

// The derivative rules of A = P L U (docs/MATH.md section 3), shared by lu_factor (packed LU) and lu
// (P, L, U). With k = min(m, n), the factors in blocks:
//   L = [L1; L2] (L1 k x k unit lower, L2 (m - k) x k, tall only),
//   U = [U1, U2] (U1 k x k upper, U2 k x (n - k), wide only).
// L1 and U1 are only read through triangle-aware ops (unit-lower / upper trmm and trsm), so the
// packed LU's k x k block serves as both.
// Tangents, with X = P^T dA = [X11 X12; X21 .]:
//   C = L1^-1 X11 U1^-1;  dL1 = L1 tril(C, -1);  dU1 = triu(C) U1
//   dU2 = L1^-1 X12 - tril(C, -1) U2 (wide);  dL2 = X21 U1^-1 - L2 triu(C) (tall)
// Cotangents (gL = [gL1; gL2], gU = [gU1, gU2]; undefined = zero):
//   M = tril(L1^H gL1 - gU2 U2^H, -1) + triu(gU1 U1^H - L2^H gL2)
//   P^T gA = [L1^-H M U1^-H,  L1^-H gU2] (wide) or [L1^-H M U1^-H;  gL2 U1^-H] (tall)
// tril(L1^H gL1, -1) reads only gL1's strictly lower part and triu(gU1 U1^H) only gU1's upper
// part, so gL1 and gU1 may be the same full block (lu_factor's cotangent) without masking.
template <class T>
struct LuRules {
  Tensor<T> L1, U1, L2, U2;  // L2 / U2 undefined unless tall / wide

  // From the packed LU (m x n).
  static LuRules packed(const Tensor<T>& LU) {
    const std::int64_t m = LU.shape()[0], n = LU.shape()[1], k = std::min(m, n);
    const Tensor<T> block = m == n ? LU : slice(slice(LU, 0, 0, k), 1, 0, k);
    return {block, block, m > k ? slice(LU, 0, k, m) : Tensor<T>(), n > k ? slice(LU, 1, k, n) : Tensor<T>()};
  }
  // From L (m x k) and U (k x n).
  static LuRules unpacked(const Tensor<T>& L, const Tensor<T>& U) {
    const std::int64_t m = L.shape()[0], k = L.shape()[1], n = U.shape()[1];
    return {m > k ? slice(L, 0, 0, k) : L, n > k ? slice(U, 1, 0, k) : U, m > k ? slice(L, 0, k, m) : Tensor<T>(),
            n > k ? slice(U, 1, k, n) : Tensor<T>()};
  }

  struct Tangents {
    Tensor<T> dL1, dU1, dL2, dU2;  // dL2 / dU2 undefined unless tall / wide
  };
  Tangents tangents(const Tensor<T>& X) const {
    const std::int64_t m = X.shape()[0], n = X.shape()[1], k = std::min(m, n);
    const bool square = m == n;
    // Small square factors: one op (a CPU kernel) where the tangents are not differentiated again.
    if (square && n <= kLuTangentKernelMaxN && L1.shape() == X.shape() && U1.shape() == X.shape()) {
      auto [dL, dU] = detail::lu_tangent_small(L1, U1, X);
      return {std::move(dL), std::move(dU), Tensor<T>(), Tensor<T>()};
    }
    const Tensor<T> X11 = square ? X : slice(slice(X, 0, 0, k), 1, 0, k);
    const Tensor<T> Cm = lsolve(L1, rsolve_upper(U1, X11));
    const Tensor<T> low = tril(Cm, -1), up = triu(Cm);
    Tangents t{linalg::triangular_matmul(L1, low, false, true, true), linalg::triangular_matmul(U1, up, true, false),
               Tensor<T>(), Tensor<T>()};
    if (U2.defined()) t.dU2 = sub(lsolve(L1, slice(X, 1, k, n)), matmul(low, U2));
    if (L2.defined()) t.dL2 = sub(rsolve_upper(U1, slice(X, 0, k, m)), matmul(L2, up));
    return t;
  }

  // P^T gA (m x n).
  Tensor<T> cotangent(const Tensor<T>& gL1, const Tensor<T>& gU1, const Tensor<T>& gL2, const Tensor<T>& gU2) const {
    const std::int64_t k = L1.shape()[0];
    // Small square factors: one op (a CPU kernel) where the cotangent is not differentiated again.
    if (!L2.defined() && !U2.defined() && gL1.defined() && gU1.defined() && k <= kLuTangentKernelMaxN &&
        U1.shape() == L1.shape() && gL1.shape() == L1.shape() && gU1.shape() == L1.shape())
      return detail::lu_cotangent_small(L1, U1, gL1, gU1);
    Tensor<T> low, up;
    if (gL1.defined()) low = linalg::triangular_matmul(L1, gL1, false, true, true, cpu::Trans::C);
    if (U2.defined() && gU2.defined()) low = detail::subtract(low, matmul(gU2, U2.mH()));
    if (gU1.defined()) up = linalg::triangular_matmul(U1, gU1, true, false, false, cpu::Trans::C);
    if (L2.defined() && gL2.defined()) up = detail::subtract(up, matmul(L2.mH(), gL2));
    Tensor<T> M;
    if (low.defined()) M = tril(low, -1);
    if (up.defined()) M = detail::accumulate(M, triu(up));
    if (!M.defined()) M = Tensor<T>::zeros(detail::with_batch(k, k, detail::mat_batch_shape(L1.shape())), L1.device());
    Tensor<T> top = lsolve_h(L1, rsolve_upper_h(U1, M));
    if (U2.defined()) return concat<T>({top, gU2.defined() ? lsolve_h(L1, gU2) : zeros_like_block(U2)}, 1);
    if (L2.defined()) return concat<T>({top, gL2.defined() ? rsolve_upper_h(U1, gL2) : zeros_like_block(L2)}, 0);
    return top;
  }

 private:
  static Tensor<T> zeros_like_block(const Tensor<T>& x) { return Tensor<T>::zeros(x.shape(), x.device()); }
  static Tensor<T> lsolve(const Tensor<T>& L, const Tensor<T>& B) {  // L^-1 B, L unit lower
    return linalg::solve_triangular(L, B, false, true, true);
  }
  static Tensor<T> lsolve_h(const Tensor<T>& L, const Tensor<T>& B) {  // L^-H B
    return linalg::solve_triangular(L, B, false, true, true, cpu::Trans::C);
  }
  static Tensor<T> rsolve_upper(const Tensor<T>& U, const Tensor<T>& B) {  // B U^-1
    return linalg::solve_triangular(U, B, true, false);
  }
  static Tensor<T> rsolve_upper_h(const Tensor<T>& U, const Tensor<T>& B) {  // B U^-H
    return linalg::solve_triangular(U, B, true, false, false, cpu::Trans::C);
  }
};

template <class C>
auto LuFactor::jvp(const C& c) const {
  using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
  const Tensor<T>& LU = c.y0();
  const auto t = LuRules<T>::packed(LU).tangents(detail::pivot_rows(c.dx0(), c.y1()));
  Tensor<T> dLU = add(t.dL1, t.dU1);
  if (t.dU2.defined()) dLU = concat<T>({dLU, t.dU2}, 1);
  if (t.dL2.defined()) dLU = concat<T>({dLU, t.dL2}, 0);
  return std::tuple{dLU, Tensor<std::int32_t>(), Tensor<std::int32_t>()};
}

template <class C>
auto LuFactor::vjp(const C& c) const {
  using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
  const Tensor<T>&LU = c.y0(), &g = c.gy0();
  const std::int64_t m = LU.shape()[0], n = LU.shape()[1], k = std::min(m, n);
  const Tensor<T> g1 = m == n ? g : slice(slice(g, 0, 0, k), 1, 0, k);
  const Tensor<T> PtgA = LuRules<T>::packed(LU).cotangent(g1, g1, m > k ? slice(g, 0, k, m) : Tensor<T>(),
                                                          n > k ? slice(g, 1, k, n) : Tensor<T>());
  return detail::pivot_rows(PtgA, c.y1(), true);
}

// Outputs P (m x m), L (m x k), U (k x n), and the pivots and info, which linalg::lu does not
// return. One op instead of lu_factor followed by unpacking ops: its forward writes the three
// factors in one kernel, and its rules take L's and U's cotangents directly.
struct Lu {
  static constexpr const char* name = "lu";
  static constexpr bool one_kernel = true;  // on the CPU, forward is one captured kernel (kernels/capture.hpp)
  static constexpr bool saves_outputs = true;

  // P (m x m), L (m x k, unit lower), U (k x n), pivots and info per matrix, from one getrf; a
  // matrix with inf or NaN as in lu_factor. The device's backend computes them (on the CPU one
  // captured kernel, src/cpu/linalg_lu.cpp).
  template <class T>
  std::tuple<Tensor<T>, Tensor<T>, Tensor<T>, Tensor<std::int32_t>, Tensor<std::int32_t>> forward(
      const Tensor<T>& A) const {
    return detail::linalg_backend<T>(name, A.device()).lu(A);
  }

  // LuRules with L and U; P is locally constant (its cotangent is dropped).
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>&L = c.y1(), &U = c.y2();
    const auto t = LuRules<T>::unpacked(L, U).tangents(detail::pivot_rows(c.dx0(), c.template y<3>()));
    Tensor<T> dL = t.dL2.defined() ? concat<T>(std::vector<Tensor<T>>{t.dL1, t.dL2}, 0) : t.dL1;
    Tensor<T> dU = t.dU2.defined() ? concat<T>(std::vector<Tensor<T>>{t.dU1, t.dU2}, 1) : t.dU1;
    return std::tuple{Tensor<T>(), dL, dU, Tensor<std::int32_t>(), Tensor<std::int32_t>()};
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>&L = c.y1(), &U = c.y2(), &gL = c.gy1(), &gU = c.gy2();
    const std::int64_t m = L.shape()[0], k = L.shape()[1], n = U.shape()[1];
    if (!gL.defined() && !gU.defined()) return Tensor<T>();
    const auto block = [](const Tensor<T>& g, int dim, std::int64_t from, std::int64_t to, std::int64_t size) {
      if (!g.defined() || from >= to) return Tensor<T>();
      return from == 0 && to == size ? g : slice(g, dim, from, to);
    };
    const Tensor<T> PtgA = LuRules<T>::unpacked(L, U).cotangent(block(gL, 0, 0, k, m), block(gU, 1, 0, k, n),
                                                                block(gL, 0, k, m, m), block(gU, 1, k, n, n));
    return detail::pivot_rows(PtgA, c.template y<3>(), true);
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
  auto [LU, piv, info] = lu_factor_ex(A);
  detail::raise_info("lu_factor", info, A.shape(), dtype_traits<T>::name, detail::nonfinite_failure, true);
  return {LU, piv};
}

// A = P L U: P (m x m permutation), L (m x k unit lower), U (k x n upper), k = min(m, n).
// Differentiable through L and U (P is locally constant and returned without a gradient); throws
// LinAlgError for non-finite input.
template <Floating T>
std::tuple<Tensor<T>, Tensor<T>, Tensor<T>> lu(const Tensor<T>& A) {
  detail::check_matrix("lu", A);
  auto [P, L, U, piv, info] = detail::apply(ops::Lu{}, A);
  detail::raise_info("lu", info, A.shape(), dtype_traits<T>::name, detail::nonfinite_failure, true);
  return {P.detach(), L, U};
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_LU(T)                                                                                      \
  TENAX_INSTANCE std::tuple<Tensor<T>, Tensor<std::int32_t>, Tensor<std::int32_t>> lu_factor_ex(const Tensor<T>&); \
  TENAX_INSTANCE std::pair<Tensor<T>, Tensor<std::int32_t>> lu_factor(const Tensor<T>&);                           \
  TENAX_INSTANCE std::tuple<Tensor<T>, Tensor<T>, Tensor<T>> lu(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_LU)

}  // namespace linalg
}  // namespace tenax
