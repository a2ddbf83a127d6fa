#pragma once
// det of square matrices, from one LU factorization that the derivative rules reuse; at exactly
// singular matrices (chosen per matrix of a batch) the rules use the adjugate from an SVD, so the
// gradient of this polynomial is right there too (adj(A) has rank 1 when rank A = n - 1, and is 0
// below).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/dispatch.hpp"
#include "tenax/ops/binary/compare.hpp"
#include "tenax/ops/binary/where.hpp"
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

// adj(A), defined for every square A, from A = U diag(s) V^H:
//   adj(A) = adj(V^H) adj(diag s) adj(U) = det(U) det(V^H) V diag(p) U^H,  p_i = prod_{j != i} s_j
// (adj(M) = det(M) M^-1 for the unitary factors). p is a product with the i-th entry replaced by 1,
// so no division by a zero singular value. Not recorded: ops::Adjugate below differentiates it.
template <class T>
Tensor<T> adjugate_value(const Tensor<T>& A) {
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

// The derivative of adj at A in a frame held fixed: with A = U diag(s) V^H,
// A + E = U (diag(s) + M) V^H for M = U^H E V, so adj(A + E) = c V adj(diag(s) + M) U^H with
// c = det(U) det(V^H), and
//   d adj(diag s)[M] = diag(P2 diag(M)) - P2 o M,   P2(i, k) = prod_{l != i, k} s_l (0 for i = k)
// (the cofactors of a diagonal matrix to first order). P2 is a product of singular values, not a
// quotient, so the derivative is exact at zero and repeated singular values (where the SVD's own
// rules lose terms or divide by zero), and no phase of U, V enters (c V N U^H is gauge-invariant).
// Written with public ops on a recorded SVD, so it is differentiable in turn.
template <class T>
struct AdjugateFrame {
  Tensor<T> U, Vh, c;  // c: 1 x 1 x batch
  Tensor<T> P2;        // n x n x batch, real-valued and symmetric
};

template <class T>
AdjugateFrame<T> adjugate_frame(const Tensor<T>& A) {
  const std::int64_t n = A.shape()[0];
  const Shape batch = mat_batch_shape(A.shape());
  auto [U, S, Vh, info, E] = tenax::detail::apply(ops::Svd{false, true, true, linalg::Degeneracy{}}, A);
  const Tensor<T> s = cast<T>(S);  // n x batch
  const Shape one = with_batch(1, 1, batch);
  // P2 = prod over l of F_l, F_l(i, k) = 1 where i = l or k = l, else s_l: n passes over n x n.
  Tensor<T> P2 = sub(Tensor<T>::ones(Shape{n, n}, A.device()), Tensor<T>::eye(n, n, A.device()));
  for (std::int64_t l = 0; l < n; ++l) {
    std::vector<std::uint8_t> m(static_cast<std::size_t>(n * n));
    for (std::int64_t k = 0; k < n; ++k)
      for (std::int64_t i = 0; i < n; ++i) m[static_cast<std::size_t>(i + k * n)] = i == l || k == l;
    const Tensor<bool> on = Tensor<bool>::from_col_major(Shape{n, n}, m, A.device());
    const Tensor<T> sl = reshape(s.slice(0, l, l + 1), one);
    P2 = mul(P2, where(on, Tensor<T>::ones({}, A.device()), sl));
  }
  return {U, Vh, reshape(mul(linalg::det(U), linalg::det(Vh)), one), P2};
}

// N = d adj(diag s)[M] = diag(P2 diag(M)) - P2 o M (P2's zero diagonal leaves M's diagonal out of
// the second term). Self-adjoint for the real inner product (P2 real and symmetric).
template <class T>
Tensor<T> adjugate_diag_jvp(const Tensor<T>& P2, const Tensor<T>& M) {
  const Tensor<T> dm = unsqueeze(diagonal(M, 0, 0, 1), 1);  // n x 1 x batch
  return sub(diag_embed(squeeze(matmul(P2, dm), 1)), mul(P2, M));
}

// Which matrices of a packed LU (n x n x batch) have a subnormal pivot (a nonzero |u_ii| below
// the smallest normal number): mask (batch shape, tensor ops on LU's device) and whether any
// does (read on the host, like split_singular's det).
struct SubnormalPivots {
  Tensor<bool> mask;
  bool any = false;
};
// By tensor ops, with one read (the generic form of a kernels/dispatch.hpp slot).
template <class T>
SubnormalPivots subnormal_pivots_generic(const Tensor<T>& LU) {
  using R = real_t<T>;
  const Device dev = LU.device();
  SubnormalPivots s;
  const Tensor<R> a = abs(diagonal(LU)), zero = Tensor<R>::scalar(R(0), dev);
  const Tensor<R> tiny = where(lt(a, Tensor<R>::scalar(std::numeric_limits<R>::min(), dev)),
                               where(gt(a, zero), Tensor<R>::scalar(R(1), dev), zero), zero);
  s.mask = gt(sum(tiny, {0}, false), zero);
  s.any = sum(tiny).to(Device::cpu()).item() > R(0);
  return s;
}
// The host form: the common answer, none, from a scan of the diagonal (no tensor ops), else the
// generic form. (cpu::tiny_pivot's max(|Re|, |Im|) is below the smallest normal number whenever
// |u_ii| is, so the scan finds every matrix the mask marks.)
template <class T>
SubnormalPivots subnormal_pivots_host(const Tensor<T>& LU) {
  const Tensor<T> c = LU.contiguous();
  const std::int64_t n = c.shape()[0], nb = mat_batch_count(c.shape());
  bool any = false;
  for (std::int64_t b = 0; b < nb && !any; ++b) any = cpu::has_tiny_diagonal(n, c.data() + b * n * n, n);
  return any ? subnormal_pivots_generic(LU) : SubnormalPivots{};
}
template <class T>
SubnormalPivots subnormal_pivots(const Tensor<T>& LU) {
  return dispatch<&subnormal_pivots_host<T>, &subnormal_pivots_generic<T>>(LU.device(), LU);
}

// The nearly singular test of split_singular below (det == 0, or min |u_ii| <= eps^(1/3) max |u_ii|)
// as a batch-shaped mask, by recorded tensor ops (a compiled program selects per matrix at run time).
template <class T>
Tensor<bool> near_singular_mask(const Tensor<T>& d, const Tensor<T>& LU) {
  using R = real_t<T>;
  NoGradGuard no_tape;
  ForwardOffGuard no_tangents;
  const Device dev = LU.device();
  const Tensor<R> a = abs(diagonal(LU));
  const Tensor<bool> z = eq(d, Tensor<T>::zeros({}, dev));
  return where(z, z,
               le(min(a, {0}, false),
                  mul(max(a, {0}, false), Tensor<R>::scalar(std::cbrt(std::numeric_limits<R>::epsilon()), dev))));
}
// How many matrices the test marks, and the mask when some but not all are: one mask read back (the
// generic form of a kernels/dispatch.hpp slot)...
struct NearSingular {
  std::int64_t count = 0;
  Tensor<bool> mask;
};
template <class T>
NearSingular near_singular_generic(const Tensor<T>& d, const Tensor<T>& LU) {
  NearSingular r;
  r.mask = near_singular_mask(d, LU);
  const Tensor<bool> c = r.mask.to(Device::cpu()).contiguous();
  for (std::int64_t b = 0; b < c.numel(); ++b) r.count += c.data()[b];
  return r;
}
// ... or counted by a scan of the pivots and det on the host, the mask made only for some.
template <class T>
NearSingular near_singular_host(const Tensor<T>& d, const Tensor<T>& LU) {
  using R = real_t<T>;
  const R tol = std::cbrt(std::numeric_limits<R>::epsilon());
  const std::int64_t n = LU.shape()[0];
  const Tensor<T> lu = LU.contiguous(), dc = d.contiguous();
  NearSingular r;
  for (std::int64_t b = 0; b < dc.numel(); ++b) {
    R lo = std::numeric_limits<R>::infinity(), hi = 0;
    bool nan = false;  // (the mask's min and max propagate NaN, and then it says no)
    for (std::int64_t i = 0; i < n; ++i) {
      const R a = std::abs(lu.data()[b * n * n + i * (n + 1)]);
      nan = nan || a != a;
      lo = std::min(lo, a);
      hi = std::max(hi, a);
    }
    r.count += dc.data()[b] == T(0) || (!nan && lo <= tol * hi);
  }
  if (r.count > 0 && r.count < dc.numel()) r.mask = near_singular_mask(d, LU);
  return r;
}

// Which matrices of a batch det's rules take through the adjugate: the exactly singular ones
// (det == 0), and, when the rule's result is differentiated again (near: differentiated_again),
// the nearly singular ones too: min |u_ii| <= eps^(1/3) max |u_ii| on the LU. There the LU rules'
// derivative, det A^-1 dA A^-1 - det tr(A^-1 dA) A^-1, cancels terms of size det / sigma_min^2 to
// a result of size det / sigma_min, losing about eps / sigma_min relative to it (all of it when A
// is singular up to rounding); the adjugate's frame rules lose nothing. The first derivative,
// det A^-H, is accurate at any condition, so it keeps the LU rules.
// None (the LU rule on the saved factors), all (the adjugate), or some. With some, each rule runs
// on a copy of the batch where the other rule's matrices are replaced by harmless ones, and `where`
// picks per matrix: the LU rule on A with the adjugate's matrices set to I (on the saved factors,
// with I's in their place: regular_factors), the adjugate on A with the others set to
// D = diag(1 + k / n^2), k = 1..n (distinct singular values whose products stay within [1, e], so
// no inf even in anomaly mode). Selecting never multiplies, so the replaced matrices contribute
// exact zeros, also to higher derivatives.
template <class T>
struct SingularSplit {
  enum Kind { kNone, kAll, kSome } kind = kNone;
  Tensor<bool> mask;  // batch shape: the adjugate's matrices (kSome only)
  Tensor<T> lu_A;     // A with the singular matrices set to I
  Tensor<T> adj_A;    // A with the regular matrices set to D
};

template <class T>
SingularSplit<T> split_singular(const Tensor<T>& A, const Tensor<T>& d, const Tensor<T>& LU, bool near) {
  SingularSplit<T> s;
  const std::int64_t n = A.shape()[0];
  const Shape batch = mat_batch_shape(A.shape());
  const Device dev = A.device();
  near = near && n > 0;
  std::int64_t count = 0;
  Tensor<bool> mask;  // batch shape, when it is not det == 0
  if (near) {
    NearSingular r = dispatch<&near_singular_host<T>, &near_singular_generic<T>>(dev, d, LU);
    count = r.count;
    mask = std::move(r.mask);
  } else {
    const Tensor<T> c = d.to(Device::cpu()).contiguous();
    for (std::int64_t b = 0; b < c.numel(); ++b) count += c.data()[b] == T(0);
  }
  if (count == 0) return s;
  if (count == d.numel()) {
    s.kind = SingularSplit<T>::kAll;
    return s;
  }
  s.kind = SingularSplit<T>::kSome;
  s.mask = mask.defined() ? mask : eq(d, Tensor<T>::zeros(batch, dev));
  const Tensor<bool> m = reshape(s.mask, with_batch(1, 1, batch));
  std::vector<T> dv(static_cast<std::size_t>(n * n), T(0));
  for (std::int64_t i = 0; i < n; ++i)
    dv[static_cast<std::size_t>(i * (n + 1))] = T(1.0 + static_cast<double>(i + 1) / static_cast<double>(n * n));
  const Tensor<T> D = Tensor<T>::from_col_major(Shape{n, n}, dv).to(A.device());
  s.lu_A = where(m, Tensor<T>::eye(n, n, A.device()), A);
  s.adj_A = where(m, A, D);
  return s;
}

// lu_A's determinant and LU factors without factorizing again: the saved ones for the regular
// matrices, and I's (det 1, LU = I, identity pivots) for the singular ones.
template <class T>
std::tuple<Tensor<T>, Tensor<T>, Tensor<std::int32_t>> regular_factors(const SingularSplit<T>& s, const Tensor<T>& d,
                                                                       const Tensor<T>& LU,
                                                                       const Tensor<std::int32_t>& piv) {
  const std::int64_t n = LU.shape()[0];
  const Shape batch = mat_batch_shape(LU.shape());
  const Device dev = LU.device();
  Shape pb{1};
  for (auto b : batch) pb.push_back(b);
  return {where(s.mask, Tensor<T>::ones({}, dev), d),
          where(reshape(s.mask, with_batch(1, 1, batch)), Tensor<T>::eye(n, n, dev), LU),
          where(reshape(s.mask, pb), identity_pivots(n, dev), piv)};
}

}  // namespace detail

namespace ops {

// adj(A) of square matrices (detail::adjugate_value); the rules are detail::adjugate_frame's:
// dadj = c V N(U^H dA V) U^H, and gA = U N(conj(c) V^H gadj U) V^H (N is self-adjoint).
struct Adjugate {
  static constexpr const char* name = "adjugate";
  static constexpr bool saves_outputs = false;
  template <class T>
  Tensor<T> forward(const Tensor<T>& A) const {
    return detail::adjugate_value(A);
  }
  template <class C>
  auto jvp(const C& c) const {
    const auto f = detail::adjugate_frame(c.x0());
    const auto M = matmul(matmul(f.U.mH(), c.dx0()), f.Vh.mH());
    return mul(matmul(matmul(f.Vh.mH(), detail::adjugate_diag_jvp(f.P2, M)), f.U.mH()), f.c);
  }
  template <class C>
  auto vjp(const C& c) const {
    const auto f = detail::adjugate_frame(c.x0());
    const auto H = mul(matmul(matmul(f.Vh, c.gy0()), f.U), conj(f.c));
    return matmul(matmul(f.U, detail::adjugate_diag_jvp(f.P2, H)), f.Vh);
  }
};

// Outputs: det (T), LU, pivots.
struct Det {
  static constexpr const char* name = "det";
  static constexpr bool one_kernel = true;  // on the CPU, forward is one captured kernel (kernels/capture.hpp)
  static constexpr bool saves_outputs = true;

  // det = (pivot parity) * prod(u_ii) per matrix, with the LU and pivots. The device's backend
  // computes it (on the CPU one captured kernel, a scaled product, src/cpu/linalg_lu.cpp).
  template <class T>
  std::tuple<Tensor<T>, Tensor<T>, Tensor<std::int32_t>> forward(const Tensor<T>& A) const {
    return detail::linalg_backend<T>(name, A.device()).det(A);
  }

  // d det = tr(adj(A) dA) = det tr(A^-1 dA) (one getrs with n right-hand sides on the saved LU);
  // gA = gdet adj(A)^H = (gdet conj(det)) A^-H (getrs 'C'). At an exactly singular A, adj(A) comes
  // from ops::Adjugate instead. The solves are SavedLuSolve (differentiable in A to any order
  // on the same factors; a failed matrix's NaN factors give NaN derivatives, as the forward gives
  // NaN, instead of an error from inside a rule).
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>& A = c.x0();
    const auto s = detail::split_singular(A, c.y0(), c.y1(), detail::differentiated_again(A, c.dx0()));
    auto by_adjugate = [&](const Tensor<T>& X) {
      return sum(diagonal(matmul(detail::apply(Adjugate{}, X), c.dx0())), {0});
    };
    const Shape mb = detail::with_batch(1, 1, detail::mat_batch_shape(A.shape()));
    // det tr(A^-1 dA); for a matrix with a subnormal pivot, whose A^-1 overflows where the
    // result is of ordinary size, tr(A^-1 (det dA)) instead (detail::subnormal_pivots).
    auto by_lu = [&](const Tensor<T>& X, const Tensor<T>& d, const Tensor<T>& LU, const Tensor<std::int32_t>& piv) {
      const Tensor<T> plain =
          mul(d, sum(diagonal(detail::apply(SavedLuSolve{cpu::Trans::N}, X, LU, piv, c.dx0())), {0}));
      const auto tiny = detail::subnormal_pivots(LU);
      if (!tiny.any) return plain;
      const Tensor<T> scaled =
          sum(diagonal(detail::apply(SavedLuSolve{cpu::Trans::N}, X, LU, piv, mul(c.dx0(), reshape(d, mb)))), {0});
      return where(tiny.mask, scaled, plain);
    };
    Tensor<T> d;
    if (s.kind == s.kAll) {
      d = by_adjugate(A);
    } else if (s.kind == s.kNone) {
      d = by_lu(A, c.y0(), c.y1(), c.y2());
    } else {
      const auto [dl, LU, piv] = detail::regular_factors(s, c.y0(), c.y1(), c.y2());
      d = where(s.mask, by_adjugate(s.adj_A), by_lu(s.lu_A, dl, LU, piv));
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
    const Shape mb = detail::with_batch(1, 1, batch);
    const auto s = detail::split_singular(A, c.y0(), c.y1(), detail::differentiated_again(A, c.gy0()));
    auto by_adjugate = [&](const Tensor<T>& X) { return mul(detail::apply(Adjugate{}, X).mH(), reshape(c.gy0(), mb)); };
    // (gdet conj(det)) A^-H; at a subnormal pivot A^-H (gdet conj(det) I) (as in jvp).
    auto by_lu = [&](const Tensor<T>& X, const Tensor<T>& d, const Tensor<T>& LU, const Tensor<std::int32_t>& piv) {
      const Tensor<T> coef = reshape(mul(c.gy0(), conj(d)), mb);
      const Tensor<T> eye = detail::batch_eye<T>(n, batch, X.device());
      const Tensor<T> plain = mul(detail::apply(SavedLuSolve{cpu::Trans::C}, X, LU, piv, eye), coef);
      const auto tiny = detail::subnormal_pivots(LU);
      if (!tiny.any) return plain;
      const Tensor<T> scaled = detail::apply(SavedLuSolve{cpu::Trans::C}, X, LU, piv, mul(eye, coef));
      return where(reshape(tiny.mask, mb), scaled, plain);
    };
    if (s.kind == s.kAll) return by_adjugate(A);
    if (s.kind == s.kNone) return by_lu(A, c.y0(), c.y1(), c.y2());
    const auto [dl, LU, piv] = detail::regular_factors(s, c.y0(), c.y1(), c.y2());
    return where(reshape(s.mask, mb), by_adjugate(s.adj_A), by_lu(s.lu_A, dl, LU, piv));
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

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_DET(T) TENAX_INSTANCE Tensor<T> det(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_DET)

}  // namespace linalg
}  // namespace tenax
