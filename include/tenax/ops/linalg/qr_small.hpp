#pragma once
// The cores of the QR rules (ops/linalg/qr.hpp, m >= n: Q m x n, R n x n) for small matrices: ops
// whose CPU form is one kernel of plain loops per matrix (other devices run the generic form, the
// rule's tensor ops).
// - Tangent (QrTangentSmall): dX = dA R^-1, S = triu(Q^H dX + (Q^H dX)^H) - Diag(..)/2,
//   dQ = dX - Q S, dR = S R.
// - Cotangent (QrCotangentSmall): W = R gR^H - gQ^H Q, gA = (gQ + Q copyltu(W)) R^-H.
// The rule's tensor ops take a triangular solve, two products, the fold and a triangular product
// (or a triangular product, two products, the fill, a sum and a triangular solve), each a provider
// call or kernel of its own; at n <= kQrSmallMaxN one loop nest per matrix is several times
// faster. First order only, as the LU rule kernels (lu_tangent.hpp): no rules of their own
// (applied with apply_nondiff); derivative_call takes the tensor ops where the result is
// differentiated again, and a traced graph re-executed under a derivative makes that choice again.
#include <complex>
#include <cstdint>
#include <tuple>

#include "tenax/ad/apply.hpp"
#include "tenax/core/small_vec.hpp"
#include "tenax/kernels/dispatch.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/lu_tangent.hpp"
#include "tenax/ops/linalg/matmul.hpp"
#include "tenax/ops/linalg/solve_triangular.hpp"
#include "tenax/ops/linalg/triangle_fold.hpp"
#include "tenax/ops/linalg/triangular_matmul.hpp"

namespace tenax {
namespace ops {

// Up to this many rows of A the QR rules use the kernels.
inline constexpr std::int64_t kQrSmallMaxN = 16;

namespace detail_qr_small {
// Q m x n and R n x n with n <= m <= kQrSmallMaxN, the others shaped like Q (like R where r_like),
// one nonempty batch on one device.
template <class T>
bool fits(const Tensor<T>& Q, const Tensor<T>& R, const Tensor<T>& D, const Tensor<T>& E, bool e_like_r) {
  if (!Q.defined() || !R.defined() || !D.defined() || !E.defined() || Q.dim() < 2) return false;
  const std::int64_t m = Q.shape()[0], n = Q.shape()[1];
  const Shape batch = detail::mat_batch_shape(Q.shape());
  return n >= 1 && n <= m && m <= kQrSmallMaxN && numel_of(batch) > 0 && R.shape() == detail::with_batch(n, n, batch) &&
         D.shape() == Q.shape() && E.shape() == (e_like_r ? R.shape() : Q.shape()) && R.device() == Q.device() &&
         D.device() == Q.device() && E.device() == Q.device();
}
}  // namespace detail_qr_small

struct QrTangentSmall {
  static constexpr const char* name = "qr_tangent";
  static constexpr bool one_kernel = true;  // one captured kernel (kernels/capture.hpp)

  // Q m x n, R n x n (m >= n), dA m x n, one batch. Returns (dQ, dR): m x n and n x n.
  template <class T>
  std::tuple<Tensor<T>, Tensor<T>> forward(const Tensor<T>& Q, const Tensor<T>& R, const Tensor<T>& dA) const {
    TENAX_CHECK(fits(Q, R, dA), name,
                "expected Q m x n, R n x n and dA m x n of one batch with n <= m <= ", kQrSmallMaxN,
                " on one device, got ", Q.shape(), ", ", R.shape(), " and ", dA.shape(), " (", dtype_traits<T>::name,
                " on ", Q.device().str(), ")");
    Tensor<T> dQ = Tensor<T>::empty(Q.shape(), Q.device()), dR = Tensor<T>::empty(R.shape(), Q.device());
    detail::dispatch<&QrTangentSmall::host<T>, &QrTangentSmall::generic<T>>(Q.device(), dQ, dR, Q, R, dA);
    return {dQ, dR};
  }
  template <class T>
  static bool fits(const Tensor<T>& Q, const Tensor<T>& R, const Tensor<T>& dA) {
    return detail_qr_small::fits(Q, R, dA, dA, false);
  }
  // One captured kernel reading its operands in place (any strides).
  template <class T>
  static void host(const Tensor<T>& dQ, const Tensor<T>& dR, const Tensor<T>& Q, const Tensor<T>& R,
                   const Tensor<T>& dA) {
    namespace lus = detail_lu_small;
    auto run = [q = lus::operand(Q), r = lus::operand(R), a = lus::operand(dA)](char* const* p) {
      constexpr std::size_t kMax = kQrSmallMaxN * kQrSmallMaxN;
      const std::int64_t m = q.rows, n = q.cols;
      detail::SmallVec<T, kMax> sq(lus::scratch_size(q)), sr(lus::scratch_size(r)), sa(lus::scratch_size(a)),
          X(static_cast<std::size_t>(m * n)), S(static_cast<std::size_t>(n * n));
      for (std::size_t b = 0; b < q.off.size(); ++b) {
        const auto bi = static_cast<std::int64_t>(b);
        one(m, n, lus::matrix(q, reinterpret_cast<const T*>(p[2]), b, sq.data()),
            lus::matrix(r, reinterpret_cast<const T*>(p[3]), b, sr.data()),
            lus::matrix(a, reinterpret_cast<const T*>(p[4]), b, sa.data()), X.data(), S.data(),
            reinterpret_cast<T*>(p[0]) + bi * m * n, reinterpret_cast<T*>(p[1]) + bi * n * n);
      }
    };
    const detail::TensorImpl* const outs[] = {dQ.impl().get(), dR.impl().get()};
    const detail::TensorImpl* const ins[] = {Q.impl().get(), R.impl().get(), dA.impl().get()};
    detail::record_kernel_n(run, outs, ins);
  }
  // Other devices: the rule's tensor ops.
  template <class T>
  static void generic(const Tensor<T>& dQ, const Tensor<T>& dR, const Tensor<T>& Q, const Tensor<T>& R,
                      const Tensor<T>& dA) {
    const auto [q, r] = composite(Q, R, dA);
    detail::copy_into(dQ, q);
    detail::copy_into(dR, r);
  }
  // The rule's tensor ops, differentiable.
  template <class T>
  static std::tuple<Tensor<T>, Tensor<T>> composite(const Tensor<T>& Q, const Tensor<T>& R, const Tensor<T>& dA) {
    const Tensor<T> dX = linalg::solve_triangular(R, dA, true, false);
    const Tensor<T> S = detail::triangle_fold(matmul(Q.mH(), dX), true, true);  // triu(M + M^H) - Diag(M + M^H)/2
    return {sub(dX, matmul(Q, S)), linalg::triangular_matmul(R, S, true, false)};
  }
  // The op where its result is not differentiated again, the composite where it is.
  template <class T>
  std::tuple<Tensor<T>, Tensor<T>> derivative_call(const Tensor<T>& Q, const Tensor<T>& R, const Tensor<T>& dA) const {
    if (detail::differentiated_again(Q, R, dA)) return composite(Q, R, dA);
    return detail::apply_nondiff(*this, Q, R, dA);
  }

  // One matrix, column-major; X: m n and S: n^2 scratch.
  template <class T>
  static void one(std::int64_t m, std::int64_t n, const T* Q, const T* R, const T* dA, T* X, T* S, T* dQ, T* dR) {
    using fn::conj_of;
    for (std::int64_t j = 0; j < n; ++j) {  // X = dA R^-1, column by column
      for (std::int64_t i = 0; i < m; ++i) X[i + j * m] = dA[i + j * m];
      for (std::int64_t l = 0; l < j; ++l) {
        const T w = R[l + j * n];
        for (std::int64_t i = 0; i < m; ++i) X[i + j * m] -= X[i + l * m] * w;
      }
      const T d = R[j + j * n];
      for (std::int64_t i = 0; i < m; ++i) X[i + j * m] /= d;
    }
    for (std::int64_t j = 0; j < n; ++j)  // M = Q^H X in S
      for (std::int64_t i = 0; i < n; ++i) {
        T s(0);
        for (std::int64_t a = 0; a < m; ++a) s += conj_of(Q[a + i * m]) * X[a + j * m];
        S[i + j * n] = s;
      }
    for (std::int64_t j = 0; j < n; ++j) {  // S = triu(M + M^H) - Diag(M + M^H) / 2, in place
      for (std::int64_t i = 0; i < j; ++i) S[i + j * n] = S[i + j * n] + conj_of(S[j + i * n]);
      const T dd = S[j + j * n] + conj_of(S[j + j * n]);
      S[j + j * n] = dd - dd * T(0.5);
    }
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = j + 1; i < n; ++i) S[i + j * n] = T(0);
    for (std::int64_t j = 0; j < n; ++j)  // dQ = X - Q S
      for (std::int64_t i = 0; i < m; ++i) {
        T s(0);
        for (std::int64_t l = 0; l <= j; ++l) s += Q[i + l * m] * S[l + j * n];
        dQ[i + j * m] = X[i + j * m] - s;
      }
    for (std::int64_t j = 0; j < n; ++j)  // dR = S R (upper)
      for (std::int64_t i = 0; i < n; ++i) {
        T s(0);
        for (std::int64_t l = i; l <= j; ++l) s += S[i + l * n] * R[l + j * n];
        dR[i + j * n] = s;
      }
  }
};

struct QrCotangentSmall {
  static constexpr const char* name = "qr_cotangent";
  static constexpr bool one_kernel = true;  // one captured kernel (kernels/capture.hpp)

  // Q m x n, R n x n (m >= n), gQ m x n, gR n x n, one batch. Returns gA, m x n.
  template <class T>
  Tensor<T> forward(const Tensor<T>& Q, const Tensor<T>& R, const Tensor<T>& gQ, const Tensor<T>& gR) const {
    TENAX_CHECK(fits(Q, R, gQ, gR), name,
                "expected Q m x n, R n x n, gQ m x n and gR n x n of one batch with n <= m <= ", kQrSmallMaxN,
                " on one device, got ", Q.shape(), ", ", R.shape(), ", ", gQ.shape(), " and ", gR.shape(), " (",
                dtype_traits<T>::name, " on ", Q.device().str(), ")");
    Tensor<T> gA = Tensor<T>::empty(Q.shape(), Q.device());
    detail::dispatch<&QrCotangentSmall::host<T>, &QrCotangentSmall::generic<T>>(Q.device(), gA, Q, R, gQ, gR);
    return gA;
  }
  template <class T>
  static bool fits(const Tensor<T>& Q, const Tensor<T>& R, const Tensor<T>& gQ, const Tensor<T>& gR) {
    return detail_qr_small::fits(Q, R, gQ, gR, true);
  }
  // One captured kernel reading its operands in place (any strides: a broadcast cotangent too).
  template <class T>
  static void host(const Tensor<T>& gA, const Tensor<T>& Q, const Tensor<T>& R, const Tensor<T>& gQ,
                   const Tensor<T>& gR) {
    namespace lus = detail_lu_small;
    auto run = [q = lus::operand(Q), r = lus::operand(R), gq = lus::operand(gQ),
                gr = lus::operand(gR)](char* const* p) {
      constexpr std::size_t kMax = kQrSmallMaxN * kQrSmallMaxN;
      const std::int64_t m = q.rows, n = q.cols;
      detail::SmallVec<T, kMax> sq(lus::scratch_size(q)), sr(lus::scratch_size(r)), sgq(lus::scratch_size(gq)),
          sgr(lus::scratch_size(gr)), W(static_cast<std::size_t>(n * n)), Y(static_cast<std::size_t>(m * n));
      for (std::size_t b = 0; b < q.off.size(); ++b) {
        one(m, n, lus::matrix(q, reinterpret_cast<const T*>(p[1]), b, sq.data()),
            lus::matrix(r, reinterpret_cast<const T*>(p[2]), b, sr.data()),
            lus::matrix(gq, reinterpret_cast<const T*>(p[3]), b, sgq.data()),
            lus::matrix(gr, reinterpret_cast<const T*>(p[4]), b, sgr.data()), W.data(), Y.data(),
            reinterpret_cast<T*>(p[0]) + static_cast<std::int64_t>(b) * m * n);
      }
    };
    const detail::TensorImpl* const outs[] = {gA.impl().get()};
    const detail::TensorImpl* const ins[] = {Q.impl().get(), R.impl().get(), gQ.impl().get(), gR.impl().get()};
    detail::record_kernel_n(run, outs, ins);
  }
  // Other devices: the rule's tensor ops.
  template <class T>
  static void generic(const Tensor<T>& gA, const Tensor<T>& Q, const Tensor<T>& R, const Tensor<T>& gQ,
                      const Tensor<T>& gR) {
    detail::copy_into(gA, composite(Q, R, gQ, gR));
  }
  // The rule's tensor ops, differentiable; an undefined gQ or gR is zero (at least one defined).
  template <class T>
  static Tensor<T> composite(const Tensor<T>& Q, const Tensor<T>& R, const Tensor<T>& gQ, const Tensor<T>& gR) {
    Tensor<T> W;
    if (gR.defined()) W = linalg::triangular_matmul(R, gR.mH(), true);
    if (gQ.defined()) W = detail::subtract(W, matmul(gQ.mH(), Q));
    Tensor<T> inner = matmul(Q, detail::triangle_fold(W, false, false));  // Q copyltu(W)
    if (gQ.defined()) inner = add(gQ, inner);
    return linalg::solve_triangular(R, inner, true, false, false, cpu::Trans::C);
  }
  // The op where its result is not differentiated again, the composite where it is.
  template <class T>
  Tensor<T> derivative_call(const Tensor<T>& Q, const Tensor<T>& R, const Tensor<T>& gQ, const Tensor<T>& gR) const {
    if (detail::differentiated_again(Q, R, gQ, gR)) return composite(Q, R, gQ, gR);
    return detail::apply_nondiff(*this, Q, R, gQ, gR);
  }

  // One matrix, column-major; W: n^2 and Y: m n scratch.
  template <class T>
  static void one(std::int64_t m, std::int64_t n, const T* Q, const T* R, const T* gQ, const T* gR, T* W, T* Y, T* gA) {
    using fn::conj_of;
    for (std::int64_t j = 0; j < n; ++j)  // W = R gR^H - gQ^H Q (R upper)
      for (std::int64_t i = 0; i < n; ++i) {
        T s(0), t(0);
        for (std::int64_t l = i; l < n; ++l) s += R[i + l * n] * conj_of(gR[j + l * n]);
        for (std::int64_t a = 0; a < m; ++a) t += conj_of(gQ[a + i * m]) * Q[a + j * m];
        W[i + j * n] = s - t;
      }
    for (std::int64_t j = 0; j < n; ++j) {  // copyltu(W), in place: the lower triangle mirrored, Re diag
      W[j + j * n] = T(std::real(W[j + j * n]));
      for (std::int64_t i = 0; i < j; ++i) W[i + j * n] = conj_of(W[j + i * n]);
    }
    for (std::int64_t j = 0; j < n; ++j)  // Y = gQ + Q copyltu(W)
      for (std::int64_t i = 0; i < m; ++i) {
        T s(0);
        for (std::int64_t l = 0; l < n; ++l) s += Q[i + l * m] * W[l + j * n];
        Y[i + j * m] = gQ[i + j * m] + s;
      }
    for (std::int64_t j = n; j-- > 0;) {  // gA = Y R^-H: gA R^H = Y, last column first
      for (std::int64_t i = 0; i < m; ++i) gA[i + j * m] = Y[i + j * m];
      for (std::int64_t l = j + 1; l < n; ++l) {
        const T w = conj_of(R[j + l * n]);
        for (std::int64_t i = 0; i < m; ++i) gA[i + j * m] -= gA[i + l * m] * w;
      }
      const T d = conj_of(R[j + j * n]);
      for (std::int64_t i = 0; i < m; ++i) gA[i + j * m] /= d;
    }
  }
};

}  // namespace ops

namespace detail {
// (dQ, dR) of the reduced QR (m >= n) for small matrices; undefined when the op does not take the
// operands (large, wide, a batch of tangent directions), for the rule's tensor ops.
template <class T>
std::tuple<Tensor<T>, Tensor<T>> qr_tangent_small(const Tensor<T>& Q, const Tensor<T>& R, const Tensor<T>& dA) {
  if (mode().tangent_batch_rank >= 0 || !ops::QrTangentSmall::fits(Q, R, dA)) return {};
  return ops::QrTangentSmall{}.derivative_call(Q, R, dA);
}
// gA of the reduced QR (m >= n) for small matrices; undefined when the op does not take the operands.
template <class T>
Tensor<T> qr_cotangent_small(const Tensor<T>& Q, const Tensor<T>& R, const Tensor<T>& gQ, const Tensor<T>& gR) {
  if (mode().tangent_batch_rank >= 0 || !ops::QrCotangentSmall::fits(Q, R, gQ, gR)) return Tensor<T>();
  return ops::QrCotangentSmall{}.derivative_call(Q, R, gQ, gR);
}
}  // namespace detail
}  // namespace tenax
