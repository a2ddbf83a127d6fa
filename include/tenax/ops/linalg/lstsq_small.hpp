#pragma once
// The cores of the lstsq rules (ops/linalg/lstsq.hpp, Lstsq: X = P B with P = A^+) for small
// matrices: ops whose CPU form is one kernel of plain loops per matrix (other devices run the
// generic form, the rule's tensor ops). With r = B - A X:
// - Tangent in A (LstsqTangentSmall):
//     dX = -P dA X + P P^H dA^H r + (Z - P A Z),  Z = dA^H P^H X.
// - Cotangent (LstsqCotangentSmall), with H = P^H gX (B's cotangent):
//     gA = -H X^H + r (P H)^H + (P^H X) (gX - P A gX)^H.
// The rule's tensor ops take nine (or eight) products and four elementwise steps, each a provider
// call or kernel of its own, for matrices and vectors of a few entries; one loop nest per matrix
// is several times faster. First order only, as the LU rule kernels (lu_tangent.hpp): no rules of
// their own (applied with apply_nondiff); derivative_call takes the tensor ops where the result is
// differentiated again, and a traced graph re-executed under a derivative makes that choice again.
#include <array>
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

namespace tenax {
namespace ops {

// Up to this many rows and columns of A (and columns of B) the lstsq rules use the kernels.
inline constexpr std::int64_t kLstsqSmallMaxN = 16;

namespace detail_lstsq_small {

// The operands' shapes: A m x n, B m x k, X n x k, P n x m, and the fourth (dA m x n, or gX
// n x k), of one batch on one device, m, n, k in 1..kLstsqSmallMaxN.
template <class T>
bool fits(const Tensor<T>& A, const Tensor<T>& B, const Tensor<T>& X, const Tensor<T>& P, const Tensor<T>& D,
          bool d_like_a) {
  if (!A.defined() || !B.defined() || !X.defined() || !P.defined() || !D.defined() || A.dim() < 2 || B.dim() < 2)
    return false;
  const std::int64_t m = A.shape()[0], n = A.shape()[1], k = B.shape()[1];
  const Shape batch = detail::mat_batch_shape(A.shape());
  auto in = [](std::int64_t v) { return v >= 1 && v <= kLstsqSmallMaxN; };
  return in(m) && in(n) && in(k) && numel_of(batch) > 0 && B.shape() == detail::with_batch(m, k, batch) &&
         X.shape() == detail::with_batch(n, k, batch) && P.shape() == detail::with_batch(n, m, batch) &&
         D.shape() == (d_like_a ? A.shape() : X.shape()) && B.device() == A.device() && X.device() == A.device() &&
         P.device() == A.device() && D.device() == A.device();
}

// out (r x c) = op(a) b, op(a) = a (r x q, ha false) or a^H (a q x r, ha true); b q x c, or with hb
// b^H (b c x q). Column-major, dense.
template <class T>
void prod(std::int64_t r, std::int64_t q, std::int64_t c, const T* a, bool ha, const T* b, bool hb, T* out) {
  for (std::int64_t j = 0; j < c; ++j)
    for (std::int64_t i = 0; i < r; ++i) {
      T s(0);
      for (std::int64_t l = 0; l < q; ++l)
        s += (ha ? fn::conj_of(a[l + i * q]) : a[i + l * r]) * (hb ? fn::conj_of(b[j + l * c]) : b[l + j * q]);
      out[i + j * r] = s;
    }
}

// The operands of one matrix of the batch (gathered where strided) for a kernel.
template <class T, std::size_t N>
struct Reader {
  std::array<detail_lu_small::Operand, N> ops;
  std::size_t scratch = 0;  // elements of the copies of the operands not read in place
  template <class... X>
  explicit Reader(const X&... x) : ops{detail_lu_small::operand(x)...} {
    for (const auto& o : ops) scratch += detail_lu_small::scratch_size(o);
  }
  // Matrix b of each operand into x, the operands' data at p[0..N), copies in sc (`scratch` elements).
  void matrices(const char* const* p, std::size_t b, T* sc, const T** x) const {
    for (std::size_t i = 0, at = 0; i < N; at += detail_lu_small::scratch_size(ops[i]), ++i)
      x[i] = detail_lu_small::matrix(ops[i], reinterpret_cast<const T*>(p[i]), b, sc + at);
  }
};

}  // namespace detail_lstsq_small

struct LstsqTangentSmall {
  static constexpr const char* name = "lstsq_tangent";
  static constexpr bool one_kernel = true;  // one captured kernel (kernels/capture.hpp)

  // A m x n, B m x k, X = P B n x k, P = A^+ n x m, dA m x n (one batch). Returns dX, n x k.
  template <class T>
  Tensor<T> forward(const Tensor<T>& A, const Tensor<T>& B, const Tensor<T>& X, const Tensor<T>& P,
                    const Tensor<T>& dA) const {
    TENAX_CHECK(fits(A, B, X, P, dA), name, "expected A m x n, B m x k, X n x k, P n x m and dA m x n of one batch ",
                "with m, n, k in 1..", kLstsqSmallMaxN, " on one device, got ", A.shape(), ", ", B.shape(), ", ",
                X.shape(), ", ", P.shape(), " and ", dA.shape(), " (", dtype_traits<T>::name, " on ", A.device().str(),
                ")");
    Tensor<T> dX = Tensor<T>::empty(X.shape(), X.device());
    detail::dispatch<&LstsqTangentSmall::host<T>, &LstsqTangentSmall::generic<T>>(A.device(), dX, A, B, X, P, dA);
    return dX;
  }
  template <class T>
  static bool fits(const Tensor<T>& A, const Tensor<T>& B, const Tensor<T>& X, const Tensor<T>& P,
                   const Tensor<T>& dA) {
    return detail_lstsq_small::fits(A, B, X, P, dA, true);
  }
  // One captured kernel reading its operands in place (any strides).
  template <class T>
  static void host(const Tensor<T>& dX, const Tensor<T>& A, const Tensor<T>& B, const Tensor<T>& X, const Tensor<T>& P,
                   const Tensor<T>& dA) {
    auto run = [rd = detail_lstsq_small::Reader<T, 5>(A, B, X, P, dA)](char* const* p) {
      constexpr std::size_t kMax = kLstsqSmallMaxN * kLstsqSmallMaxN;
      const auto& o = rd.ops;
      const std::int64_t m = o[0].rows, n = o[0].cols, k = o[1].cols;
      detail::SmallVec<T, 5 * kMax> sc(rd.scratch);  // the strided operands' copies
      detail::SmallVec<T, 6 * kMax> w(static_cast<std::size_t>(6 * kMax));
      for (std::size_t b = 0; b < o[0].off.size(); ++b) {
        const T* x[5];
        rd.matrices(p + 1, b, sc.data(), x);
        one(m, n, k, x[0], x[1], x[2], x[3], x[4], w.data(),
            reinterpret_cast<T*>(p[0]) + static_cast<std::int64_t>(b) * n * k);
      }
    };
    const detail::TensorImpl* const outs[] = {dX.impl().get()};
    const detail::TensorImpl* const ins[] = {A.impl().get(), B.impl().get(), X.impl().get(), P.impl().get(),
                                             dA.impl().get()};
    detail::record_kernel_n(run, outs, ins);
  }
  // Other devices: the rule's tensor ops.
  template <class T>
  static void generic(const Tensor<T>& dX, const Tensor<T>& A, const Tensor<T>& B, const Tensor<T>& X,
                      const Tensor<T>& P, const Tensor<T>& dA) {
    detail::copy_into(dX, composite(A, B, X, P, dA));
  }
  // The rule's tensor ops, differentiable.
  template <class T>
  static Tensor<T> composite(const Tensor<T>& A, const Tensor<T>& B, const Tensor<T>& X, const Tensor<T>& P,
                             const Tensor<T>& dA) {
    const Tensor<T> dAh = dA.mH(), r = sub(B, matmul(A, X));
    const Tensor<T> t1 = neg(matmul(P, matmul(dA, X)));
    const Tensor<T> t2 = matmul(P, matmul(P.mH(), matmul(dAh, r)));
    const Tensor<T> Z = matmul(dAh, matmul(P.mH(), X));
    return add(add(t1, t2), sub(Z, matmul(P, matmul(A, Z))));
  }
  // The op where its result is not differentiated again, the composite where it is.
  template <class T>
  Tensor<T> derivative_call(const Tensor<T>& A, const Tensor<T>& B, const Tensor<T>& X, const Tensor<T>& P,
                            const Tensor<T>& dA) const {
    if (detail::differentiated_again(A, B, X, P, dA)) return composite(A, B, X, P, dA);
    return detail::apply_nondiff(*this, A, B, X, P, dA);
  }

  // One matrix: dense column-major operands; w: 6 kLstsqSmallMaxN^2 scratch.
  template <class T>
  static void one(std::int64_t m, std::int64_t n, std::int64_t k, const T* A, const T* B, const T* X, const T* P,
                  const T* dA, T* w, T* dX) {
    using detail_lstsq_small::prod;
    constexpr std::int64_t kMax = kLstsqSmallMaxN * kLstsqSmallMaxN;
    T *r = w, *u = w + kMax, *t1 = w + 2 * kMax, *v = w + 3 * kMax, *t2 = w + 4 * kMax, *z = w + 5 * kMax;
    prod(m, n, k, A, false, X, false, r);  // r = B - A X
    for (std::int64_t e = 0; e < m * k; ++e) r[e] = B[e] - r[e];
    prod(m, n, k, dA, false, X, false, u);  // t1 = -P (dA X)
    prod(n, m, k, P, false, u, false, t1);
    prod(n, m, k, dA, true, r, false, v);  // t2 = P (P^H (dA^H r))
    prod(m, n, k, P, true, v, false, u);
    prod(n, m, k, P, false, u, false, t2);
    prod(m, n, k, P, true, X, false, u);  // Z = dA^H (P^H X)
    prod(n, m, k, dA, true, u, false, z);
    prod(m, n, k, A, false, z, false, u);  // P (A Z)
    prod(n, m, k, P, false, u, false, v);
    for (std::int64_t e = 0; e < n * k; ++e) dX[e] = (-t1[e] + t2[e]) + (z[e] - v[e]);
  }
};

struct LstsqCotangentSmall {
  static constexpr const char* name = "lstsq_cotangent";
  static constexpr bool one_kernel = true;  // one captured kernel (kernels/capture.hpp)

  // A m x n, B m x k, X n x k, P n x m, gX n x k (one batch). Returns (gA, P^H gX): m x n and m x k.
  template <class T>
  std::tuple<Tensor<T>, Tensor<T>> forward(const Tensor<T>& A, const Tensor<T>& B, const Tensor<T>& X,
                                           const Tensor<T>& P, const Tensor<T>& gX) const {
    TENAX_CHECK(fits(A, B, X, P, gX), name, "expected A m x n, B m x k, X n x k, P n x m and gX n x k of one batch ",
                "with m, n, k in 1..", kLstsqSmallMaxN, " on one device, got ", A.shape(), ", ", B.shape(), ", ",
                X.shape(), ", ", P.shape(), " and ", gX.shape(), " (", dtype_traits<T>::name, " on ", A.device().str(),
                ")");
    Tensor<T> gA = Tensor<T>::empty(A.shape(), A.device()), H = Tensor<T>::empty(B.shape(), A.device());
    detail::dispatch<&LstsqCotangentSmall::host<T>, &LstsqCotangentSmall::generic<T>>(A.device(), gA, H, A, B, X, P,
                                                                                      gX);
    return {gA, H};
  }
  template <class T>
  static bool fits(const Tensor<T>& A, const Tensor<T>& B, const Tensor<T>& X, const Tensor<T>& P,
                   const Tensor<T>& gX) {
    return detail_lstsq_small::fits(A, B, X, P, gX, false);
  }
  // One captured kernel reading its operands in place (any strides).
  template <class T>
  static void host(const Tensor<T>& gA, const Tensor<T>& H, const Tensor<T>& A, const Tensor<T>& B, const Tensor<T>& X,
                   const Tensor<T>& P, const Tensor<T>& gX) {
    auto run = [rd = detail_lstsq_small::Reader<T, 5>(A, B, X, P, gX)](char* const* p) {
      constexpr std::size_t kMax = kLstsqSmallMaxN * kLstsqSmallMaxN;
      const auto& o = rd.ops;
      const std::int64_t m = o[0].rows, n = o[0].cols, k = o[1].cols;
      detail::SmallVec<T, 5 * kMax> sc(rd.scratch);  // the strided operands' copies
      detail::SmallVec<T, 5 * kMax> w(static_cast<std::size_t>(5 * kMax));
      for (std::size_t b = 0; b < o[0].off.size(); ++b) {
        const T* x[5];
        rd.matrices(p + 2, b, sc.data(), x);
        const auto bi = static_cast<std::int64_t>(b);
        one(m, n, k, x[0], x[1], x[2], x[3], x[4], w.data(), reinterpret_cast<T*>(p[0]) + bi * m * n,
            reinterpret_cast<T*>(p[1]) + bi * m * k);
      }
    };
    const detail::TensorImpl* const outs[] = {gA.impl().get(), H.impl().get()};
    const detail::TensorImpl* const ins[] = {A.impl().get(), B.impl().get(), X.impl().get(), P.impl().get(),
                                             gX.impl().get()};
    detail::record_kernel_n(run, outs, ins);
  }
  // Other devices: the rule's tensor ops.
  template <class T>
  static void generic(const Tensor<T>& gA, const Tensor<T>& H, const Tensor<T>& A, const Tensor<T>& B,
                      const Tensor<T>& X, const Tensor<T>& P, const Tensor<T>& gX) {
    const auto [a, h] = composite(A, B, X, P, gX);
    detail::copy_into(gA, a);
    detail::copy_into(H, h);
  }
  // The rule's tensor ops, differentiable.
  template <class T>
  static std::tuple<Tensor<T>, Tensor<T>> composite(const Tensor<T>& A, const Tensor<T>& B, const Tensor<T>& X,
                                                    const Tensor<T>& P, const Tensor<T>& gX) {
    const Tensor<T> H = matmul(P.mH(), gX);
    const Tensor<T> r = sub(B, matmul(A, X));
    const Tensor<T> t1 = neg(matmul(H, X.mH()));
    const Tensor<T> t2 = matmul(r, matmul(P, H).mH());
    const Tensor<T> t3 = matmul(matmul(P.mH(), X), sub(gX, matmul(P, matmul(A, gX))).mH());
    return {add(add(t1, t2), t3), H};
  }
  // The op where its result is not differentiated again, the composite where it is.
  template <class T>
  std::tuple<Tensor<T>, Tensor<T>> derivative_call(const Tensor<T>& A, const Tensor<T>& B, const Tensor<T>& X,
                                                   const Tensor<T>& P, const Tensor<T>& gX) const {
    if (detail::differentiated_again(A, B, X, P, gX)) return composite(A, B, X, P, gX);
    return detail::apply_nondiff(*this, A, B, X, P, gX);
  }

  // One matrix: dense column-major operands; w: 5 kLstsqSmallMaxN^2 scratch.
  template <class T>
  static void one(std::int64_t m, std::int64_t n, std::int64_t k, const T* A, const T* B, const T* X, const T* P,
                  const T* gX, T* w, T* gA, T* H) {
    using detail_lstsq_small::prod;
    constexpr std::int64_t kMax = kLstsqSmallMaxN * kLstsqSmallMaxN;
    T *r = w, *q = w + kMax, *y = w + 2 * kMax, *c = w + 3 * kMax, *t = w + 4 * kMax;
    prod(m, n, k, P, true, gX, false, H);  // H = P^H gX
    prod(m, n, k, A, false, X, false, r);  // r = B - A X
    for (std::int64_t e = 0; e < m * k; ++e) r[e] = B[e] - r[e];
    prod(n, m, k, P, false, H, false, q);   // q = P H
    prod(m, n, k, P, true, X, false, y);    // y = P^H X
    prod(m, n, k, A, false, gX, false, c);  // c = gX - P (A gX)
    prod(n, m, k, P, false, c, false, t);
    for (std::int64_t e = 0; e < n * k; ++e) c[e] = gX[e] - t[e];
    // gA = (-H X^H + r q^H) + y c^H, each entry in that order.
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i) {
        T s1(0), s2(0), s3(0);
        for (std::int64_t l = 0; l < k; ++l) {
          s1 += H[i + l * m] * fn::conj_of(X[j + l * n]);
          s2 += r[i + l * m] * fn::conj_of(q[j + l * n]);
          s3 += y[i + l * m] * fn::conj_of(c[j + l * n]);
        }
        gA[i + j * m] = (-s1 + s2) + s3;
      }
  }
};

}  // namespace ops

namespace detail {
// dX of lstsq in the direction dA (as above) for small matrices; undefined when the op does not
// take the operands (large, broadcast batches, a batch of tangent directions).
template <class T>
Tensor<T> lstsq_tangent_small(const Tensor<T>& A, const Tensor<T>& B, const Tensor<T>& X, const Tensor<T>& P,
                              const Tensor<T>& dA) {
  if (mode().tangent_batch_rank >= 0 || !ops::LstsqTangentSmall::fits(A, B, X, P, dA)) return Tensor<T>();
  // In the JVP rule A and B carry the tangents being pushed (forward mode is off while the rule
  // runs), which do not make dX differentiated again: recording does, or a tangent of dA.
  if (differentiated_again(X, P, dA) || (is_grad_enabled() && (A.tracks_grad() || B.tracks_grad())))
    return ops::LstsqTangentSmall::composite(A, B, X, P, dA);
  return apply_nondiff(ops::LstsqTangentSmall{}, A, B, X, P, dA);
}
// (gA, P^H gX) of lstsq for small matrices; undefined when the op does not take the operands.
template <class T>
std::tuple<Tensor<T>, Tensor<T>> lstsq_cotangent_small(const Tensor<T>& A, const Tensor<T>& B, const Tensor<T>& X,
                                                       const Tensor<T>& P, const Tensor<T>& gX) {
  if (mode().tangent_batch_rank >= 0 || !ops::LstsqCotangentSmall::fits(A, B, X, P, gX)) return {};
  return ops::LstsqCotangentSmall{}.derivative_call(A, B, X, P, gX);
}
}  // namespace detail
}  // namespace tenax
