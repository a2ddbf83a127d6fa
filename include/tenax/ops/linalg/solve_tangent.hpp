#pragma once
// The first-order cores of the solve rules (Solve in ops/linalg/solve.hpp, SavedLuSolve in
// ops/linalg/lu_solve.hpp) for small matrices, as ops of their own, on the factors A = P L U saved
// by the forward (packed LU and getrf's pivots), with S = op(A), op in {N, C}:
// - SolveTangentSmall: F = -S^-1 M X (the JVP's dX with M = op(dA));
// - SolveCotangentSmall: gB = S^-H G and -gB X^H (the VJP's gB and, up to op, gA).
// The rules' tensor ops are a product, a negation and a getrs, each a provider call or a kernel of
// its own; at n, k <= kSolveKernelMaxN one loop nest per matrix is several times faster. Their CPU
// form is one kernel, other devices run the generic form (those tensor ops). Like SavedLuSolve
// they take their derivatives in A (LU is a cache of A's factorization) and in M, X or G; their
// rules are these ops again and SavedLuSolve, so derivatives of any order take the kernels and no
// new factorization, and the choice of the kernel does not depend on what is differentiated.
#include <complex>
#include <cstdint>
#include <tuple>
#include <utility>

#include "tenax/ad/apply.hpp"
#include "tenax/core/small_vec.hpp"
#include "tenax/kernels/dispatch.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/lu_solve.hpp"
#include "tenax/ops/linalg/lu_tangent.hpp"

namespace tenax {
namespace ops {

// Up to this many rows of A and columns of X the solve rules use the kernels.
inline constexpr std::int64_t kSolveKernelMaxN = 16;

namespace detail_lu_small {

// Pivots (n x batch, int32) read in place: each matrix's first pivot and the step between pivots.
struct PivotOperand {
  detail::BatchOffsets off;
  std::int64_t step = 1;
  Shape shape;  // (for errors)
};

inline PivotOperand pivot_operand(const Tensor<std::int32_t>& piv, const Shape& batch) {
  return {detail::batch_offsets(piv, batch, 1), piv.strides()[0], piv.shape()};
}

// x (n x k, column-major) := f(A)^-1 x, or (f(A)^T)^-1 x when transposed, in place, for A = P L U
// packed in lu (n x n, column-major) with getrf's pivots pv (1-based, step ps); f is conj when cj
// (complex T), else the identity. Pivots outside 1..n raise an Error naming op (matrix b).
template <class T>
void lu_solve_in_place(const char* op, std::int64_t n, std::int64_t k, const T* lu, const std::int32_t* pv,
                       std::int64_t ps, bool transposed, bool cj, T* x, std::size_t b, const Shape& piv_shape) {
  auto at = [n](std::int64_t i, std::int64_t j) { return i + j * n; };
  auto f = [cj](const T& v) {
    if constexpr (is_complex_v<T>)
      return cj ? std::conj(v) : v;
    else
      return v;
  };
  for (std::int64_t i = 0; i < n; ++i)
    if (const std::int32_t v = pv[i * ps]; v < 1 || v > n)
      detail::bad_pivot(op, i, static_cast<std::int64_t>(b), v, n, piv_shape, Device::cpu());
  for (std::int64_t j = 0; j < k; ++j) {
    T* c = x + j * n;
    if (!transposed) {
      // L U x = P^T c: the interchanges in order, then L (unit lower) forward, U backward.
      for (std::int64_t i = 0; i < n; ++i)
        if (const std::int64_t p = pv[i * ps] - 1; p != i) std::swap(c[i], c[p]);
      for (std::int64_t q = 0; q < n; ++q) {
        const T w = c[q];
        for (std::int64_t i = q + 1; i < n; ++i) c[i] -= w * f(lu[at(i, q)]);
      }
      for (std::int64_t q = n - 1; q >= 0; --q) {
        c[q] /= f(lu[at(q, q)]);
        const T w = c[q];
        for (std::int64_t i = 0; i < q; ++i) c[i] -= w * f(lu[at(i, q)]);
      }
    } else {
      // U^T L^T P^T x = c: U^T (lower) forward, L^T (unit upper) backward, then the interchanges
      // in reverse order.
      for (std::int64_t i = 0; i < n; ++i) {
        T s = c[i];
        for (std::int64_t q = 0; q < i; ++q) s -= f(lu[at(q, i)]) * c[q];
        c[i] = s / f(lu[at(i, i)]);
      }
      for (std::int64_t i = n - 1; i >= 0; --i) {
        T s = c[i];
        for (std::int64_t q = i + 1; q < n; ++q) s -= f(lu[at(q, i)]) * c[q];
        c[i] = s;
      }
      for (std::int64_t i = n - 1; i >= 0; --i)
        if (const std::int64_t p = pv[i * ps] - 1; p != i) std::swap(c[i], c[p]);
    }
  }
}

// op(A)^-1 as (transposed, conjugated) for lu_solve_in_place, and op(A)^-H likewise.
inline std::pair<bool, bool> solve_flags(cpu::Trans op) { return {op != cpu::Trans::N, op == cpu::Trans::C}; }
inline std::pair<bool, bool> adjoint_solve_flags(cpu::Trans op) {
  // A^-H: (A^H)^-1;  (A^H)^-H = A^-1;  (A^T)^-H = conj(A)^-1.
  return {op == cpu::Trans::N, op != cpu::Trans::C};
}

}  // namespace detail_lu_small

namespace detail_solve_small {

// Whether the kernels take LU (n x n x batch), pivots (n x batch), M (n x n, the same batch) and
// X (n x k, the same batch): sizes within kSolveKernelMaxN, one device, nothing empty.
template <class T>
bool fits(const Tensor<T>& LU, const Tensor<std::int32_t>& piv, const Tensor<T>& M, const Tensor<T>& X) {
  if (!LU.defined() || !M.defined() || !X.defined() || !piv.defined() || LU.dim() < 2 || X.dim() < 2) return false;
  const std::int64_t n = LU.shape()[0], k = X.shape()[1];
  const Shape batch = detail::mat_batch_shape(LU.shape());
  return n >= 1 && n <= kSolveKernelMaxN && k >= 1 && k <= kSolveKernelMaxN && LU.shape()[1] == n &&
         X.shape() == detail::with_batch(n, k, batch) && M.shape() == LU.shape() &&
         piv.shape() == detail::with_batch(n, batch) && numel_of(batch) > 0 && piv.device() == LU.device() &&
         M.device() == LU.device() && X.device() == LU.device();
}

template <class T>
void check(const char* op, cpu::Trans trans, const Tensor<T>& LU, const Tensor<std::int32_t>& piv, const Tensor<T>& M,
           const Tensor<T>& X) {
  TENAX_CHECK(trans != cpu::Trans::T, op, "op = T is not supported (N or C)");
  TENAX_CHECK(fits(LU, piv, M, X), op, "expected LU n x n, pivots n, M n x n and X n x k (one batch, ",
              "1 <= n, k <= ", kSolveKernelMaxN, ", one device), got LU ", LU.shape(), ", pivots ", piv.shape(), ", ",
              M.shape(), " and ", X.shape(), " (", dtype_traits<T>::name, " on ", LU.device().str(), ")");
}

// op(M) for op in {N, C}, and the other op (the adjoint's: op(A)^H = adjoint(op)(A)).
template <class T>
Tensor<T> op_of(cpu::Trans op, const Tensor<T>& M) {
  return op == cpu::Trans::N ? M : M.mH();
}
// (op = T is rejected by check: (A^T)^-H = conj(A)^-1 has no op of its own.)
inline cpu::Trans adjoint(cpu::Trans op) { return op == cpu::Trans::N ? cpu::Trans::C : cpu::Trans::N; }

}  // namespace detail_solve_small

// With S = op(A), op in {N, C}, A = P L U (LU, pivots: A's factors, a cache of A without a
// derivative of its own, as in SavedLuSolve): F = -S^-1 M X.
struct SolveTangentSmall {
  static constexpr const char* name = "solve_tangent";
  static constexpr bool one_kernel = true;  // one captured kernel (kernels/capture.hpp)
  static constexpr bool saves_outputs = true;
  cpu::Trans trans;

  // A: an input for the derivatives only; LU, pivots: A's factors; M: n x n; X: n x k.
  template <class T>
  Tensor<T> forward(const Tensor<T>& A, const Tensor<T>& LU, const Tensor<std::int32_t>& piv, const Tensor<T>& M,
                    const Tensor<T>& X) const {
    (void)A;
    detail_solve_small::check(name, trans, LU, piv, M, X);
    Tensor<T> F = Tensor<T>::empty(X.shape(), X.device());
    detail::dispatch<&SolveTangentSmall::host<T>, &SolveTangentSmall::generic<T>>(X.device(), *this, F, LU, piv, M, X);
    return F;
  }
  // One captured kernel reading its operands in place (any strides).
  template <class T>
  static void host(const SolveTangentSmall& op, const Tensor<T>& F, const Tensor<T>& LU,
                   const Tensor<std::int32_t>& piv, const Tensor<T>& M, const Tensor<T>& X) {
    namespace lus = detail_lu_small;
    const std::int64_t n = X.shape()[0], k = X.shape()[1];
    auto run = [n, k, lu = lus::operand(LU), pv = lus::pivot_operand(piv, detail::mat_batch_shape(LU.shape())),
                m = lus::operand(M), x = lus::operand(X), flags = lus::solve_flags(op.trans)](char* const* p) {
      constexpr std::size_t kMax = kSolveKernelMaxN * kSolveKernelMaxN;
      detail::SmallVec<T, kMax> slu(lus::scratch_size(lu)), sm(lus::scratch_size(m)), sx(lus::scratch_size(x));
      for (std::size_t b = 0; b < lu.off.size(); ++b) {
        const T* f = lus::matrix(lu, reinterpret_cast<const T*>(p[1]), b, slu.data());
        const T* mb = lus::matrix(m, reinterpret_cast<const T*>(p[3]), b, sm.data());
        const T* xb = lus::matrix(x, reinterpret_cast<const T*>(p[4]), b, sx.data());
        T* out = reinterpret_cast<T*>(p[0]) + static_cast<std::int64_t>(b) * n * k;
        // out = -(M X), then op(A)^-1 out.
        for (std::int64_t j = 0; j < k; ++j)
          for (std::int64_t i = 0; i < n; ++i) {
            T s(0);
            for (std::int64_t l = 0; l < n; ++l) s += mb[i + l * n] * xb[l + j * n];
            out[i + j * n] = -s;
          }
        lus::lu_solve_in_place(name, n, k, f, reinterpret_cast<const std::int32_t*>(p[2]) + pv.off[b], pv.step,
                               flags.first, flags.second, out, b, pv.shape);
      }
    };
    const detail::TensorImpl* const outs[] = {F.impl().get()};
    const detail::TensorImpl* const ins[] = {LU.impl().get(), piv.impl().get(), M.impl().get(), X.impl().get()};
    detail::record_kernel_n(run, outs, ins);
  }
  // Other devices: the same by tensor ops (a product, a negation, the backend's getrs).
  template <class T>
  static void generic(const SolveTangentSmall& op, const Tensor<T>& F, const Tensor<T>& LU,
                      const Tensor<std::int32_t>& piv, const Tensor<T>& M, const Tensor<T>& X) {
    detail::copy_into(F, LuSolve{op.trans}.forward(LU, piv, neg(matmul(M, X))));
  }

  // dF = -S^-1 (dS F + dM X + M dX): this op again, once per tangent (dS = op(dA)).
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>&A = c.x0(), &LU = c.x1(), &M = c.template x<3>(), &X = c.template x<4>();
    const Tensor<std::int32_t>& piv = c.x2();
    Tensor<T> dF;
    auto term = [&](const Tensor<T>& Mi, const Tensor<T>& Xi) {
      dF = detail::accumulate(dF, detail::apply(*this, A, LU, piv, Mi, Xi));
    };
    if (c.dx0().defined()) term(detail_solve_small::op_of(trans, c.dx0()), c.y0());
    if (c.template dx<3>().defined()) term(c.template dx<3>(), X);
    if (c.template dx<4>().defined()) term(M, c.template dx<4>());
    return dF;
  }
  // With R = S^-H gF (SolveCotangentSmall, which also gives -R F^H, whose op is gA):
  //   gM = -R X^H,  gX = -M^H R.  (Defined below SolveCotangentSmall.)
  template <class C>
  auto vjp(const C& c) const;
};

// With S = op(A) as above: gB = S^-H G and C = -gB X^H.
struct SolveCotangentSmall {
  static constexpr const char* name = "solve_cotangent";
  static constexpr bool one_kernel = true;  // one captured kernel (kernels/capture.hpp)
  static constexpr bool saves_outputs = true;
  cpu::Trans trans;

  // A: an input for the derivatives only; LU, pivots: A's factors; G and X: n x k. Returns
  // (gB, C): n x k and n x n.
  template <class T>
  std::tuple<Tensor<T>, Tensor<T>> forward(const Tensor<T>& A, const Tensor<T>& LU, const Tensor<std::int32_t>& piv,
                                           const Tensor<T>& G, const Tensor<T>& X) const {
    (void)A;
    detail_solve_small::check(name, trans, LU, piv, LU, X);
    TENAX_CHECK(G.shape() == X.shape() && G.device() == X.device(), name, "the cotangent of shape ", G.shape(), " on ",
                G.device().str(), " does not match X of shape ", X.shape(), " on ", X.device().str());
    Tensor<T> gB = Tensor<T>::empty(X.shape(), X.device()), gA = Tensor<T>::empty(LU.shape(), X.device());
    detail::dispatch<&SolveCotangentSmall::host<T>, &SolveCotangentSmall::generic<T>>(X.device(), *this, gB, gA, LU,
                                                                                      piv, G, X);
    return {gB, gA};
  }
  // One captured kernel reading its operands in place (any strides: a broadcast cotangent too).
  template <class T>
  static void host(const SolveCotangentSmall& op, const Tensor<T>& gB, const Tensor<T>& gA, const Tensor<T>& LU,
                   const Tensor<std::int32_t>& piv, const Tensor<T>& G, const Tensor<T>& X) {
    namespace lus = detail_lu_small;
    const std::int64_t n = X.shape()[0], k = X.shape()[1];
    auto run = [n, k, lu = lus::operand(LU), pv = lus::pivot_operand(piv, detail::mat_batch_shape(LU.shape())),
                g = lus::operand(G), x = lus::operand(X), flags = lus::adjoint_solve_flags(op.trans)](char* const* p) {
      constexpr std::size_t kMax = kSolveKernelMaxN * kSolveKernelMaxN;
      detail::SmallVec<T, kMax> slu(lus::scratch_size(lu)), sx(lus::scratch_size(x));
      for (std::size_t b = 0; b < lu.off.size(); ++b) {
        const T* f = lus::matrix(lu, reinterpret_cast<const T*>(p[2]), b, slu.data());
        const T* xb = lus::matrix(x, reinterpret_cast<const T*>(p[5]), b, sx.data());
        const auto o = static_cast<std::int64_t>(b);
        T* gb = reinterpret_cast<T*>(p[0]) + o * n * k;
        T* ga = reinterpret_cast<T*>(p[1]) + o * n * n;
        const T* gx = reinterpret_cast<const T*>(p[4]) + g.off[b];
        for (std::int64_t j = 0; j < k; ++j)
          for (std::int64_t i = 0; i < n; ++i) gb[i + j * n] = gx[i * g.s0 + j * g.s1];
        lus::lu_solve_in_place(name, n, k, f, reinterpret_cast<const std::int32_t*>(p[3]) + pv.off[b], pv.step,
                               flags.first, flags.second, gb, b, pv.shape);
        // -gB X^H
        for (std::int64_t l = 0; l < n; ++l)
          for (std::int64_t i = 0; i < n; ++i) {
            T s(0);
            for (std::int64_t j = 0; j < k; ++j) {
              if constexpr (is_complex_v<T>)
                s += gb[i + j * n] * std::conj(xb[l + j * n]);
              else
                s += gb[i + j * n] * xb[l + j * n];
            }
            ga[i + l * n] = -s;
          }
      }
    };
    const detail::TensorImpl* const outs[] = {gB.impl().get(), gA.impl().get()};
    const detail::TensorImpl* const ins[] = {LU.impl().get(), piv.impl().get(), G.impl().get(), X.impl().get()};
    detail::record_kernel_n(run, outs, ins);
  }
  // Other devices: the same by tensor ops (the backend's getrs with the adjoint op, a product, a
  // negation).
  template <class T>
  static void generic(const SolveCotangentSmall& op, const Tensor<T>& gB, const Tensor<T>& gA, const Tensor<T>& LU,
                      const Tensor<std::int32_t>& piv, const Tensor<T>& G, const Tensor<T>& X) {
    const Tensor<T> b = LuSolve{detail_solve_small::adjoint(op.trans)}.forward(LU, piv, G);
    detail::copy_into(gB, b);
    detail::copy_into(gA, neg(matmul(b, X.mH())));
  }

  // d gB = -S^-H dS^H gB + S^-H dG (SolveTangentSmall with the adjoint op, SavedLuSolve);
  // dC = -(d gB X^H + gB dX^H).
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>&A = c.x0(), &LU = c.x1(), &X = c.template x<4>(), &gB = c.y0();
    const Tensor<std::int32_t>& piv = c.x2();
    const cpu::Trans adj = detail_solve_small::adjoint(trans);
    Tensor<T> dgB, dC;
    if (c.dx0().defined())
      dgB = detail::apply(SolveTangentSmall{adj}, A, LU, piv, detail_solve_small::op_of(adj, c.dx0()), gB);
    if (c.template dx<3>().defined())
      dgB = detail::accumulate(dgB, detail::apply(SavedLuSolve{adj}, A, LU, piv, c.template dx<3>()));
    if (dgB.defined()) dC = neg(matmul(dgB, X.mH()));
    if (c.template dx<4>().defined()) dC = detail::subtract(dC, matmul(gB, c.template dx<4>().mH()));
    return std::tuple{dgB, dC};
  }
  // Cotangents hB (of gB) and hC (of C): hB' = hB - hC X, gX = -hC^H gB; Z = S^-1 hB' = gG, and
  // gA = op(-gB Z^H), where (Z, -Z gB^H) is this op with the adjoint op on (hB', gB).
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>&A = c.x0(), &LU = c.x1(), &X = c.template x<4>(), &gB = c.y0(), &hC = c.gy1();
    const Tensor<std::int32_t>& piv = c.x2();
    const cpu::Trans adj = detail_solve_small::adjoint(trans);
    Tensor<T> hB = c.gy0(), gA, Z, gX;
    if (hC.defined()) {
      hB = detail::subtract(hB, matmul(hC, X));
      if (c.needs(4)) gX = neg(matmul(hC.mH(), gB));
    }
    if (hB.defined()) {
      if (c.needs(0)) {
        auto [z, m] = detail::apply(SolveCotangentSmall{adj}, A, LU, piv, hB, gB);
        Z = z;
        gA = trans == cpu::Trans::N ? m.mH() : m;  // op(gS) with gS = -gB Z^H = m^H
      } else if (c.needs(3)) {
        Z = detail::apply(SavedLuSolve{trans}, A, LU, piv, hB);
      }
    }
    return std::tuple{gA, Tensor<T>(), Tensor<std::int32_t>(), c.needs(3) ? Z : Tensor<T>(), gX};
  }
};

template <class C>
auto SolveTangentSmall::vjp(const C& c) const {
  using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
  const Tensor<T>&A = c.x0(), &LU = c.x1(), &M = c.template x<3>(), &X = c.template x<4>(), &gF = c.gy0();
  const Tensor<std::int32_t>& piv = c.x2();
  Tensor<T> gA, R;
  if (c.needs(0)) {
    auto [r, g] = detail::apply(SolveCotangentSmall{trans}, A, LU, piv, gF, c.y0());
    R = r;
    gA = detail_solve_small::op_of(trans, g);
  } else {
    R = detail::apply(SavedLuSolve{detail_solve_small::adjoint(trans)}, A, LU, piv, gF);
  }
  return std::tuple{gA, Tensor<T>(), Tensor<std::int32_t>(), c.needs(3) ? neg(matmul(R, X.mH())) : Tensor<T>(),
                    c.needs(4) ? neg(matmul(M.mH(), R)) : Tensor<T>()};
}

}  // namespace ops

namespace detail {

// Whether the solve rules take the kernels (declared in ops/linalg/lu_solve.hpp): op N or C, small
// operands of one batch, and no batch of tangent or cotangent directions (ad/apply.hpp).
template <class T>
bool solve_kernels_fit(cpu::Trans op, const Tensor<T>& LU, const Tensor<std::int32_t>& piv, const Tensor<T>& M,
                       const Tensor<T>& X) {
  return op != cpu::Trans::T && mode().tangent_batch_rank < 0 && ops::detail_solve_small::fits(LU, piv, M, X);
}
// -op(A)^-1 M X (differentiable: ops::SolveTangentSmall).
template <class T>
Tensor<T> solve_tangent_small(cpu::Trans op, const Tensor<T>& A, const Tensor<T>& LU, const Tensor<std::int32_t>& piv,
                              const Tensor<T>& M, const Tensor<T>& X) {
  return apply(ops::SolveTangentSmall{op}, A, LU, piv, M, X);
}
// (gB, -gB X^H) with gB = op(A)^-H G (differentiable: ops::SolveCotangentSmall).
template <class T>
std::tuple<Tensor<T>, Tensor<T>> solve_cotangent_small(cpu::Trans op, const Tensor<T>& A, const Tensor<T>& LU,
                                                       const Tensor<std::int32_t>& piv, const Tensor<T>& G,
                                                       const Tensor<T>& X) {
  return apply(ops::SolveCotangentSmall{op}, A, LU, piv, G, X);
}

}  // namespace detail
}  // namespace tenax
