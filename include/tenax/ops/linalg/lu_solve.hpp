#pragma once
// lu_solve: solves op(A) X = B with the factors (LU, pivots) of lu_factor(A), op in {N, T, C}.
#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/dispatch.hpp"
#include "tenax/ops/binary/compare.hpp"
#include "tenax/ops/binary/where.hpp"
#include "tenax/ops/linalg/batched.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/info_check.hpp"
#include "tenax/ops/linalg/overflow.hpp"
#include "tenax/ops/linalg/permute_rows.hpp"
#include "tenax/ops/linalg/solve_triangular.hpp"

namespace tenax {
namespace ops {

struct LuSolve {
  static constexpr const char* name = "lu_solve";
  static constexpr bool one_kernel = true;  // its host form is one captured kernel (kernels/capture.hpp)
  static constexpr bool saves_outputs = true;
  cpu::Trans trans;

  template <class T>
  Tensor<T> forward(const Tensor<T>& LU, const Tensor<std::int32_t>& piv, const Tensor<T>& B) const {
    const Shape batch = detail::mat_batch_shape(LU.shape());
    const std::int64_t n = LU.shape()[0], k = B.shape()[1];
    Tensor<T> X = Tensor<T>::empty(detail::with_batch(n, k, batch), B.device());
    if (X.numel() == 0) return X;  // nothing to solve (the batch may still be huge)
    detail::dispatch<&LuSolve::host<T>, &LuSolve::generic<T>>(X.device(), *this, X, LU, piv, B);
    return X;
  }
  // One captured kernel: B (broadcast) copied into X, LU and the pivots into scratch when not
  // contiguous, then getrs per matrix.
  template <class T>
  static void host(const LuSolve& op, const Tensor<T>& X, const Tensor<T>& LU, const Tensor<std::int32_t>& piv,
                   const Tensor<T>& B) {
    const std::int64_t n = LU.shape()[0], k = B.shape()[1];
    using Copy = std::function<void(char*, char*)>;
    const bool lu_c = LU.impl()->is_contiguous(), piv_c = piv.impl()->is_contiguous();
    auto run = [copy_b = detail::copy_to_contiguous(expand(B, X.shape())),
                copy_lu = lu_c ? Copy() : Copy(detail::copy_to_contiguous(LU)),
                lu_s = lu_c ? detail::ImplPtr() : Tensor<T>::empty(LU.shape()).impl(),
                copy_piv = piv_c ? Copy() : Copy(detail::copy_to_contiguous(piv)),
                piv_s = piv_c ? detail::ImplPtr() : Tensor<std::int32_t>::empty(piv.shape()).impl(), n, k,
                nb = detail::mat_batch_count(X.shape()), piv_shape = piv.shape(), trans = op.trans](char* const* p) {
      copy_b(p[0], p[3]);
      if (lu_s) copy_lu(static_cast<char*>(lu_s->data()), p[1]);
      if (piv_s) copy_piv(static_cast<char*>(piv_s->data()), p[2]);
      const T* l = reinterpret_cast<const T*>(lu_s ? static_cast<char*>(lu_s->data()) : p[1]);
      const std::int32_t* ip = reinterpret_cast<const std::int32_t*>(piv_s ? static_cast<char*>(piv_s->data()) : p[2]);
      T* x = reinterpret_cast<T*>(p[0]);
      const std::int64_t ld = std::max<std::int64_t>(1, n);
      detail::check_pivots(name, ip, n, piv_shape);
      for (std::int64_t b = 0; b < nb; ++b)
        cpu::getrs<T>(trans, n, k, l + b * n * n, ld, ip + b * n, x + b * n * k, ld);
    };
    detail::record_kernel_n(run, {X.impl().get()}, {LU.impl().get(), piv.impl().get(), B.impl().get()});
  }
  // The backend's getrs. It follows the pivots, so they are checked first, on the device with every
  // call (also in a prepared program), the raise deferred to the next read; getrs gets pivots that
  // stay inside.
  template <class T>
  static void generic(const LuSolve& op, const Tensor<T>& X, const Tensor<T>& LU, const Tensor<std::int32_t>& piv,
                      const Tensor<T>& B) {
    detail::copy_into(X, expand(B, X.shape()));
    const Tensor<T> lu = contiguous(LU);
    const Tensor<std::int32_t> p = contiguous(piv);
    const Tensor<std::int32_t> safe = Tensor<std::int32_t>::empty(p.shape(), p.device());
    detail::batched::check_pivots_on_device(name, p, LU.shape()[0], Tensor<std::int64_t>(), safe);
    detail::batched::getrs(op.trans, lu, safe, X);
  }

  // X = op(A)^-1 B with A = P L U (L unit lower, U upper, packed in LU).
  // In B (linear): dX = lu_solve(dB); gB = lu_solve(gX) with the adjoint op.
  // In LU, for op = N: dA = P (dL U + L dU) with dL = tril(dLU, -1), dU = triu(dLU), so
  //   dX = -U^-1 (L^-1 dL U + dU) X
  //   G = U^-H gX:  gLU = -tril(L^-H G X^H U^H, -1) - triu(G X^H).
  // For op = T or C the public lu_solve switches to `composite` when LU may be differentiated.
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>&LU = c.x0(), &X = c.y0();
    Tensor<T> r;
    if (c.dx2().defined()) r = detail::apply(*this, LU, c.x1(), c.dx2());
    if (c.dx0().defined()) {
      check_lu_derivative();
      auto L = unit_lower(LU), U = triu(LU);
      auto inner = add(matmul(linalg::solve_triangular(L, tril(c.dx0(), -1), false, true, true), U), triu(c.dx0()));
      auto t = linalg::solve_triangular(U, matmul(inner, X), true);
      r = detail::subtract(r, t);
    }
    return r;
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>&LU = c.x0(), &X = c.y0(), &gX = c.gy0();
    Tensor<T> gLU, gB;
    if (c.needs(2)) gB = sum_to(solve_adjoint(LU, c.x1(), gX), c.x2().shape());
    if (c.needs(0)) {
      check_lu_derivative();
      auto L = unit_lower(LU), U = triu(LU);
      auto G = linalg::solve_triangular(U, gX, true, true, false, cpu::Trans::C);
      auto GX = matmul(G, X.mH());
      auto lower = linalg::solve_triangular(L, matmul(GX, U.mH()), false, true, true, cpu::Trans::C);
      gLU = neg(add(tril(lower, -1), triu(GX)));
    }
    return std::tuple{gLU, Tensor<std::int32_t>(), gB};
  }

  // op(A)^-H G: (op(A)^H)^-1 G, i.e. N <-> C; for T, (A^T)^-H = conj(A)^-1 has no LAPACK flag:
  // conj(A^-1 conj(G)). When the result must be differentiable again (higher_order), it is built
  // from differentiable public ops instead (see composite), since this op's own derivative with
  // respect to LU exists for op = N only.
  template <class T>
  Tensor<T> solve_adjoint(const Tensor<T>& LU, const Tensor<std::int32_t>& piv, const Tensor<T>& G) const {
    if (detail::higher_order(LU, G)) {
      switch (trans) {
        case cpu::Trans::N:
          return composite(LU, piv, G, cpu::Trans::C);
        case cpu::Trans::C:
          return composite(LU, piv, G, cpu::Trans::N);
        default:
          return conj(composite(LU, piv, conj(G), cpu::Trans::N));
      }
    }
    switch (trans) {
      case cpu::Trans::N:
        return detail::apply(LuSolve{cpu::Trans::C}, LU, piv, G);
      case cpu::Trans::C:
        return detail::apply(LuSolve{cpu::Trans::N}, LU, piv, G);
      default:
        return conj(detail::apply(LuSolve{cpu::Trans::N}, LU, piv, conj(G)));
    }
  }

  // The call itself, through apply: for op = T or C, when LU may be differentiated, the solve is
  // built from differentiable public ops on LU's triangles instead (composite). The trace
  // recorder calls this when it re-executes a recorded lu_solve under a derivative (the choice
  // made while tracing saw no derivative).
  template <class T>
  Tensor<T> derivative_call(const Tensor<T>& LU, const Tensor<std::int32_t>& piv, const Tensor<T>& B) const {
    const bool lu_derivative = detail::differentiated_again(LU);
    if (trans != cpu::Trans::N && lu_derivative) return composite(LU, piv, B, trans);
    return detail::apply(*this, LU, piv, B);
  }

  // op(A)^-1 G for A = P L U from differentiable ops (pivot_rows and triangular solves
  // reading the triangles of LU), so that its derivatives in LU and G exist to any order:
  //   N: U^-1 L^-1 P^T G;   T / C: P L^-op U^-op G.
  template <class T>
  static Tensor<T> composite(const Tensor<T>& LU, const Tensor<std::int32_t>& piv, const Tensor<T>& G, cpu::Trans op) {
    // G's batch dimensions broadcast to LU's (lu_solve checks this), and pivots are batched like LU.
    const std::int64_t n = LU.shape()[0];
    const Tensor<T> Gb = broadcast_to(G, detail::with_batch(n, G.shape()[1], detail::mat_batch_shape(LU.shape())));
    if (op == cpu::Trans::N) {
      const auto Y = linalg::solve_triangular(LU, detail::pivot_rows(Gb, piv), false, true, true);
      return linalg::solve_triangular(LU, Y, true);
    }
    const auto Y = linalg::solve_triangular(LU, Gb, true, true, false, op);
    const auto Z = linalg::solve_triangular(LU, Y, false, true, true, op);
    return detail::pivot_rows(Z, piv, true);
  }

 private:
  void check_lu_derivative() const {
    TENAX_CHECK(trans == cpu::Trans::N, name,
                "the derivative with respect to LU is implemented for op = N only; use solve(A, B) to "
                "differentiate with respect to A");
  }
  template <class T>
  static Tensor<T> unit_lower(const Tensor<T>& LU) {
    const std::int64_t n = LU.shape()[0];
    return add(tril(LU, -1), detail::batch_eye<T>(n, detail::mat_batch_shape(LU.shape()), LU.device()));
  }
};

}  // namespace ops

namespace detail {
// The solve rules' small kernels (ops/linalg/solve_tangent.hpp, included at the end).
template <class T>
bool solve_kernels_fit(cpu::Trans op, const Tensor<T>& LU, const Tensor<std::int32_t>& piv, const Tensor<T>& M,
                       const Tensor<T>& X);
template <class T>
Tensor<T> solve_tangent_small(cpu::Trans op, const Tensor<T>& A, const Tensor<T>& LU, const Tensor<std::int32_t>& piv,
                              const Tensor<T>& M, const Tensor<T>& X);
template <class T>
std::tuple<Tensor<T>, Tensor<T>> solve_cotangent_small(cpu::Trans op, const Tensor<T>& A, const Tensor<T>& LU,
                                                       const Tensor<std::int32_t>& piv, const Tensor<T>& G,
                                                       const Tensor<T>& X);
}  // namespace detail

namespace ops {

// op(A)^-1 B on the factors (LU, pivots) of A = P L U that solve, det or slogdet saved: the solves
// of their derivative rules. LU is a cache of A's factorization: the value is read from it, and the
// derivatives are taken in A (and B), with none in LU:
//   dX = op(A)^-1 (dB - op(dA) X);   gB = op(A)^-H gX;   gA = -(gB X^H) for N, its transpose for T,
//   its adjoint for C.
// They are this op again on the same factors, so derivatives of any order take no new
// factorization, and a graph traced from a function that differentiates solve (a training step)
// can be differentiated again: the derivative reaches A through this op's first input.
struct SavedLuSolve {
  static constexpr const char* name = "lu_solve";
  static constexpr bool one_kernel = true;
  static constexpr bool saves_outputs = true;
  cpu::Trans trans;

  template <class T>
  Tensor<T> forward(const Tensor<T>& A, const Tensor<T>& LU, const Tensor<std::int32_t>& piv,
                    const Tensor<T>& B) const {
    (void)A;  // an input for its derivatives only
    return LuSolve{trans}.forward(LU, piv, B);
  }

  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    Tensor<T> r = c.template dx<3>();
    // Small matrices, the tangent in A only: one kernel (ops/linalg/solve_tangent.hpp).
    if (c.dx0().defined() && !r.defined() && detail::solve_kernels_fit(trans, c.x1(), c.x2(), op_of(c.dx0()), c.y0()) &&
        !detail::nonfinite_on_host(c.y0()))
      return detail::solve_tangent_small(trans, c.x0(), c.x1(), c.x2(), op_of(c.dx0()), c.y0());
    if (c.dx0().defined()) {
      const Tensor<T> t = detail::nonfinite_on_host(c.y0()) ? detail::matmul_past_overflow(op_of(c.dx0()), c.y0(), true)
                                                            : matmul(op_of(c.dx0()), c.y0());
      r = detail::subtract(r, t);
    }
    if (!r.defined()) return Tensor<T>();
    return detail::apply(*this, c.x0(), c.x1(), c.x2(), r);
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>&A = c.x0(), &LU = c.x1(), &gX = c.gy0();
    const Tensor<std::int32_t>& piv = c.x2();
    // Small matrices, both cotangents: one kernel (ops/linalg/solve_tangent.hpp).
    if (c.needs(0) && detail::solve_kernels_fit(trans, LU, piv, LU, gX) && gX.shape() == c.y0().shape() &&
        !detail::nonfinite_on_host(c.y0())) {
      auto [gB, gA] = detail::solve_cotangent_small(trans, A, LU, piv, gX, c.y0());
      return std::tuple{op_of(gA), Tensor<T>(), Tensor<std::int32_t>(),
                        c.needs(3) ? sum_to(gB, c.template x<3>().shape()) : Tensor<T>()};
    }
    Tensor<T> gB;
    switch (trans) {
      case cpu::Trans::N:
        gB = detail::apply(SavedLuSolve{cpu::Trans::C}, A, LU, piv, gX);
        break;
      case cpu::Trans::C:
        gB = detail::apply(SavedLuSolve{cpu::Trans::N}, A, LU, piv, gX);
        break;
      default:  // (A^T)^-H = conj(A^-1 conj(.))
        gB = conj(detail::apply(SavedLuSolve{cpu::Trans::N}, A, LU, piv, conj(gX)));
    }
    Tensor<T> gA;
    // gB X^H = (op(A)^-1 B gB^H)^H, a solve, when X overflowed (as in Solve::vjp).
    if (c.needs(0))
      gA = op_of(neg(detail::nonfinite_on_host(c.y0())
                         ? detail::apply(*this, A, LU, piv, matmul(c.template x<3>(), gB.mH())).mH()
                         : matmul(gB, c.y0().mH())));
    return std::tuple{gA, Tensor<T>(), Tensor<std::int32_t>(),
                      c.needs(3) ? sum_to(gB, c.template x<3>().shape()) : Tensor<T>()};
  }

 private:
  // op(M): M, M^T or M^H (op is its own inverse map on the pairing, so gA = op(-gB X^H) too).
  template <class T>
  Tensor<T> op_of(const Tensor<T>& M) const {
    return trans == cpu::Trans::N ? M : trans == cpu::Trans::T ? M.mT() : M.mH();
  }
};

// Per matrix of packed LU factors: k > 0 when U(k, k) is the first exactly zero pivot, else 0
// (lu_factor_ex's code for a singular matrix). No derivative; on the CPU one captured kernel, so a
// traced lu_solve checks each run's factors.
struct ZeroPivotInfo {
  static constexpr const char* name = "zero_pivot_info";
  static constexpr bool one_kernel = true;  // its host form (kernels/capture.hpp)
  template <class T>
  Tensor<std::int32_t> forward(const Tensor<T>& LU) const {
    return detail::dispatch<&ZeroPivotInfo::host<T>, &ZeroPivotInfo::generic<T>>(LU.device(), LU);
  }
  // One captured scan of the diagonals.
  template <class T>
  static Tensor<std::int32_t> host(const Tensor<T>& LU_in) {
    const std::int64_t n = LU_in.shape()[0], nb = detail::mat_batch_count(LU_in.shape());
    const Tensor<T> LU = LU_in.impl()->is_contiguous() ? LU_in : LU_in.contiguous();
    Tensor<std::int32_t> info = Tensor<std::int32_t>::empty(detail::mat_batch_shape(LU_in.shape()), LU_in.device());
    detail::record_kernel_n(
        [n, nb](char* const* p) {
          auto* out = reinterpret_cast<std::int32_t*>(p[0]);
          const T* lu = reinterpret_cast<const T*>(p[1]);
          for (std::int64_t b = 0; b < nb; ++b) {
            out[b] = 0;
            for (std::int64_t i = 0; i < n; ++i)
              if (lu[b * n * n + i * (n + 1)] == T(0)) {
                out[b] = static_cast<std::int32_t>(i + 1);
                break;
              }
          }
        },
        {info.impl().get()}, {LU.impl().get()});
    return info;
  }
  // By tensor ops on the device (nothing recorded, nothing read back): n - i where U(i, i) == 0,
  // maximised, is the first zero pivot.
  template <class T>
  static Tensor<std::int32_t> generic(const Tensor<T>& LU) {
    using R = real_t<T>;
    const std::int64_t n = LU.shape()[0];
    const Device dev = LU.device();
    if (n == 0) return Tensor<std::int32_t>::zeros(detail::mat_batch_shape(LU.shape()), dev);
    NoGradGuard no_grad;
    detail::ForwardOffGuard no_fw;
    std::vector<R> ramp(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) ramp[static_cast<std::size_t>(i)] = R(n - i);
    const Tensor<R> zero = Tensor<R>::zeros({}, dev);
    const Tensor<R> m = max(
        where(eq(abs(diagonal(LU, 0, 0, 1)), zero), Tensor<R>::from_col_major(Shape{n}, ramp, dev), zero), {0}, false);
    return cast<std::int32_t>(where(eq(m, zero), zero, rsub(m, R(n + 1))));
  }
};

}  // namespace ops

namespace detail {

inline std::string singular_factors(std::int32_t info) {
  return "the factors are singular: U(" + std::to_string(info) + ", " + std::to_string(info) + ") is exactly zero";
}

}  // namespace detail

namespace linalg {

// Solves op(A) X = B given (LU, pivots) = lu_factor(A). B is n x k; the batch dimensions of LU
// (with its pivots) and B broadcast both ways.
// Throws LinAlgError naming the batch element when U has an exactly zero pivot (a singular A).
template <Floating T>
Tensor<T> lu_solve(const Tensor<T>& LU, const Tensor<std::int32_t>& pivots, const Tensor<T>& B,
                   Trans trans = Trans::N) {
  constexpr const char* op = "lu_solve";
  detail::check_square(op, LU, "LU");
  detail::check_matrix(op, B, "B");
  TENAX_CHECK(pivots.defined(), op, "undefined pivots (LU of shape ", LU.shape(), ")");
  TENAX_CHECK(B.shape()[0] == LU.shape()[0], op, "LU of shape ", LU.shape(), " does not match B of shape ", B.shape(),
              " (", dtype_traits<T>::name, " on ", LU.device().str(), ")");
  TENAX_CHECK(pivots.dim() >= 1 && pivots.shape()[0] == LU.shape()[0] &&
                  detail::mat_batch_shape(LU.shape()) == Shape(pivots.shape().begin() + 1, pivots.shape().end()),
              op, "pivots of shape ", pivots.shape(), " do not match LU of shape ", LU.shape(), " (",
              dtype_traits<T>::name, " on ", LU.device().str(), ")");
  const Shape bb = detail::mat_batch_shape(B.shape()), lb = detail::mat_batch_shape(LU.shape());
  // The batch dimensions of LU (with its pivots) and B broadcast both ways, as in solve (checked
  // here to name both shapes); X has the broadcast batch shape.
  Shape bc;
  bool batch_ok = true;
  for (int d = 0; d < std::max(lb.size(), bb.size()); ++d) {
    const std::int64_t x = d < lb.size() ? lb[d] : 1, y = d < bb.size() ? bb[d] : 1;
    batch_ok = batch_ok && (y == x || y == 1 || x == 1);
    bc.push_back(x == 1 ? y : x);
  }
  TENAX_CHECK(batch_ok, op, "the batch shapes of LU ", lb, " and B ", bb, " do not broadcast (LU ", LU.shape(), ", B ",
              B.shape(), ", ", dtype_traits<T>::name, " on ", LU.device().str(), ")");
  TENAX_CHECK(pivots.device() == LU.device() && B.device() == LU.device(), op, "inputs on different devices (LU on ",
              LU.device().str(), ", pivots on ", pivots.device().str(), ", B on ", B.device().str(), ")");
  // Singular factors (lu_factor accepts a singular A) would give inf/NaN: raised, like solve.
  if (LU.shape()[0] > 0 && LU.numel() > 0)
    detail::raise_info(op, detail::apply_nondiff(ops::ZeroPivotInfo{}, LU), LU.shape(), dtype_traits<T>::name,
                       detail::singular_factors);
  if (bc == lb) return ops::LuSolve{trans}.derivative_call(LU, pivots, B);
  // LU's batch broadcast to B's (stride-0 views; the gradient of LU sums over the copies)
  const std::int64_t n = LU.shape()[0];
  const Shape ps = detail::with_batch(n, bc);
  return ops::LuSolve{trans}.derivative_call(broadcast_to(LU, detail::with_batch(n, n, bc)), broadcast_to(pivots, ps),
                                             B);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_LU_SOLVE(T) \
  TENAX_INSTANCE Tensor<T> lu_solve(const Tensor<T>&, const Tensor<std::int32_t>&, const Tensor<T>&, Trans);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_LU_SOLVE)

}  // namespace linalg
}  // namespace tenax

#include "tenax/ops/linalg/solve_tangent.hpp"  // (the small kernels declared above)
