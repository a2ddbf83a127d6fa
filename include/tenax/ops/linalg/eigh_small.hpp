#pragma once
// The cores of the eigh rules (ops/linalg/eigh.hpp) for small matrices: ops whose CPU form is one
// kernel of plain loops per matrix (other devices run the generic form, the rule's tensor ops).
// - Tangent (EighTangentSmall): with P = V^H X V, d = diag(P) and dV = V (F o P).
// - Cotangent (EighCotangentSmall): gA = V (diag(g) + F o (K - K^H) / 2) V^H with K = V^H gV.
// The rule's tensor ops take three products and three or four elementwise steps, each a provider
// call or kernel of its own; at n <= kEighSmallMaxN one loop nest per matrix is several times
// faster. First order only, as the LU rule kernels (lu_tangent.hpp): they have no rules of their
// own (applied with apply_nondiff); derivative_call takes the tensor ops instead where the result
// is differentiated again, and a traced graph re-executed under a derivative makes that choice again
// (trace/recorder.hpp).
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
#include "tenax/ops/shape/diagonal.hpp"

namespace tenax {
namespace ops {

// Up to this order the eigh rules use the kernels (each matrix's intermediates on the stack).
inline constexpr std::int64_t kEighSmallMaxN = 16;

namespace detail_eigh_small {
// Whether V, and each of the others, is one n x n (x batch) shape on one device with
// 1 <= n <= kEighSmallMaxN, a nonempty batch.
template <class T, class... M>
bool square_fits(const Tensor<T>& V, const M&... m) {
  if (!V.defined() || V.dim() < 2 || (... || !m.defined())) return false;
  const std::int64_t n = V.shape()[0];
  return n >= 1 && n <= kEighSmallMaxN && V.shape()[1] == n && numel_of(detail::mat_batch_shape(V.shape())) > 0 &&
         (... && (m.shape() == V.shape() && m.device() == V.device()));
}
}  // namespace detail_eigh_small

struct EighTangentSmall {
  static constexpr const char* name = "eigh_tangent";
  static constexpr bool one_kernel = true;  // one captured kernel (kernels/capture.hpp)

  // V: the eigenvectors, X: the tangent of A, F: the inverse gaps (n x n x batch each). Returns
  // (diag(P), V (F o P)) with P = V^H X V: n x batch and n x n x batch.
  template <class T>
  std::tuple<Tensor<T>, Tensor<T>> forward(const Tensor<T>& V, const Tensor<T>& X, const Tensor<T>& F) const {
    TENAX_CHECK(fits(V, X, F), name, "expected V, X and F of one shape n x n (x batch) with 1 <= n <= ", kEighSmallMaxN,
                " on one device, got ", V.shape(), ", ", X.shape(), " and ", F.shape(), " (", dtype_traits<T>::name,
                " on ", V.device().str(), ", ", X.device().str(), ", ", F.device().str(), ")");
    const std::int64_t n = V.shape()[0];
    Tensor<T> d = Tensor<T>::empty(detail::with_batch(n, detail::mat_batch_shape(V.shape())), V.device());
    Tensor<T> dV = Tensor<T>::empty(V.shape(), V.device());
    detail::dispatch<&EighTangentSmall::host<T>, &EighTangentSmall::generic<T>>(V.device(), d, dV, V, X, F);
    return {d, dV};
  }
  template <class T>
  static bool fits(const Tensor<T>& V, const Tensor<T>& X, const Tensor<T>& F) {
    return detail_eigh_small::square_fits(V, X, F);
  }
  // One captured kernel reading its operands in place (any strides).
  template <class T>
  static void host(const Tensor<T>& d, const Tensor<T>& dV, const Tensor<T>& V, const Tensor<T>& X,
                   const Tensor<T>& F) {
    namespace lus = detail_lu_small;
    auto run = [v = lus::operand(V), x = lus::operand(X), f = lus::operand(F)](char* const* p) {
      constexpr std::size_t kMax = kEighSmallMaxN * kEighSmallMaxN;
      const std::int64_t n = v.rows, nn = n * n;
      detail::SmallVec<T, kMax> sv(lus::scratch_size(v)), sx(lus::scratch_size(x)), sf(lus::scratch_size(f)),
          t(static_cast<std::size_t>(nn)), P(static_cast<std::size_t>(nn));
      for (std::size_t b = 0; b < v.off.size(); ++b) {
        const T* vb = lus::matrix(v, reinterpret_cast<const T*>(p[2]), b, sv.data());
        const T* xb = lus::matrix(x, reinterpret_cast<const T*>(p[3]), b, sx.data());
        const T* fb = lus::matrix(f, reinterpret_cast<const T*>(p[4]), b, sf.data());
        T* db = reinterpret_cast<T*>(p[0]) + static_cast<std::int64_t>(b) * n;
        T* ob = reinterpret_cast<T*>(p[1]) + static_cast<std::int64_t>(b) * nn;
        one(n, vb, xb, fb, t.data(), P.data(), db, ob);
      }
    };
    const detail::TensorImpl* const outs[] = {d.impl().get(), dV.impl().get()};
    const detail::TensorImpl* const ins[] = {V.impl().get(), X.impl().get(), F.impl().get()};
    detail::record_kernel_n(run, outs, ins);
  }
  // Other devices: the rule's tensor ops.
  template <class T>
  static void generic(const Tensor<T>& d, const Tensor<T>& dV, const Tensor<T>& V, const Tensor<T>& X,
                      const Tensor<T>& F) {
    const auto [dd, ddV] = composite(V, X, F);
    detail::copy_into(d, dd);
    detail::copy_into(dV, ddV);
  }
  // The rule's tensor ops (three products, the diagonal, the F product), differentiable.
  template <class T>
  static std::tuple<Tensor<T>, Tensor<T>> composite(const Tensor<T>& V, const Tensor<T>& X, const Tensor<T>& F) {
    const Tensor<T> P = matmul(V.mH(), matmul(X, V));
    return {diagonal(P), matmul(V, mul(F, P))};
  }
  // The op where its result is not differentiated again, the composite where it is.
  template <class T>
  std::tuple<Tensor<T>, Tensor<T>> derivative_call(const Tensor<T>& V, const Tensor<T>& X, const Tensor<T>& F) const {
    if (detail::differentiated_again(V, X, F)) return composite(V, X, F);
    return detail::apply_nondiff(*this, V, X, F);
  }

  // One matrix, column-major n x n; t and P: n^2 scratch each.
  template <class T>
  static void one(std::int64_t n, const T* V, const T* X, const T* F, T* t, T* P, T* d, T* dV) {
    using fn::conj_of;
    for (std::int64_t j = 0; j < n; ++j)  // t = X V
      for (std::int64_t i = 0; i < n; ++i) {
        T s(0);
        for (std::int64_t c = 0; c < n; ++c) s += X[i + c * n] * V[c + j * n];
        t[i + j * n] = s;
      }
    for (std::int64_t j = 0; j < n; ++j)  // P = V^H t, then F o P in t
      for (std::int64_t i = 0; i < n; ++i) {
        T s(0);
        for (std::int64_t a = 0; a < n; ++a) s += conj_of(V[a + i * n]) * t[a + j * n];
        P[i + j * n] = s;
      }
    for (std::int64_t e = 0; e < n * n; ++e) t[e] = F[e] * P[e];
    for (std::int64_t j = 0; j < n; ++j) {
      d[j] = P[j + j * n];
      for (std::int64_t i = 0; i < n; ++i) {  // dV = V (F o P)
        T s(0);
        for (std::int64_t a = 0; a < n; ++a) s += V[i + a * n] * t[a + j * n];
        dV[i + j * n] = s;
      }
    }
  }
};

struct EighCotangentSmall {
  static constexpr const char* name = "eigh_cotangent";
  static constexpr bool one_kernel = true;  // one captured kernel (kernels/capture.hpp)

  // V: the eigenvectors, G: their cotangent, F: the inverse gaps (n x n x batch each), g: the
  // eigenvalues' cotangent (n x batch). Returns V (diag(g) + F o (K - K^H) / 2) V^H with K = V^H G:
  // n x n x batch.
  template <class T>
  Tensor<T> forward(const Tensor<T>& V, const Tensor<T>& G, const Tensor<T>& F, const Tensor<T>& g) const {
    TENAX_CHECK(fits(V, G, F, g), name,
                "expected V, G and F of one shape n x n (x batch) with 1 <= n <= ", kEighSmallMaxN,
                " and g n (x batch) on one device, got ", V.shape(), ", ", G.shape(), ", ", F.shape(), " and ",
                g.shape(), " (", dtype_traits<T>::name, " on ", V.device().str(), ")");
    Tensor<T> gA = Tensor<T>::empty(V.shape(), V.device());
    detail::dispatch<&EighCotangentSmall::host<T>, &EighCotangentSmall::generic<T>>(V.device(), gA, V, G, F, g);
    return gA;
  }
  template <class T>
  static bool fits(const Tensor<T>& V, const Tensor<T>& G, const Tensor<T>& F, const Tensor<T>& g) {
    return detail_eigh_small::square_fits(V, G, F) && g.defined() && g.device() == V.device() &&
           g.shape() == detail::with_batch(V.shape()[0], detail::mat_batch_shape(V.shape()));
  }
  // One captured kernel reading its operands in place (any strides).
  template <class T>
  static void host(const Tensor<T>& gA, const Tensor<T>& V, const Tensor<T>& G, const Tensor<T>& F,
                   const Tensor<T>& g) {
    namespace lus = detail_lu_small;
    // g as an n x 1 matrix per batch entry, so that the operand helpers read it in place too.
    const std::int64_t n = V.shape()[0];
    lus::Operand go{detail::batch_offsets(g, detail::mat_batch_shape(V.shape()), 1), n, 1, g.strides()[0], n, false};
    go.dense = go.s0 == 1 || n <= 1;
    auto run = [v = lus::operand(V), k = lus::operand(G), f = lus::operand(F), gg = go](char* const* p) {
      constexpr std::size_t kMax = kEighSmallMaxN * kEighSmallMaxN;
      const std::int64_t n = v.rows, nn = n * n;
      detail::SmallVec<T, kMax> sv(lus::scratch_size(v)), sk(lus::scratch_size(k)), sf(lus::scratch_size(f)),
          M(static_cast<std::size_t>(nn)), t(static_cast<std::size_t>(nn));
      detail::SmallVec<T, kEighSmallMaxN> sg(lus::scratch_size(gg));
      for (std::size_t b = 0; b < v.off.size(); ++b) {
        const T* vb = lus::matrix(v, reinterpret_cast<const T*>(p[1]), b, sv.data());
        const T* kb = lus::matrix(k, reinterpret_cast<const T*>(p[2]), b, sk.data());
        const T* fb = lus::matrix(f, reinterpret_cast<const T*>(p[3]), b, sf.data());
        const T* gb = lus::matrix(gg, reinterpret_cast<const T*>(p[4]), b, sg.data());
        one(n, vb, kb, fb, gb, M.data(), t.data(), reinterpret_cast<T*>(p[0]) + static_cast<std::int64_t>(b) * nn);
      }
    };
    const detail::TensorImpl* const outs[] = {gA.impl().get()};
    const detail::TensorImpl* const ins[] = {V.impl().get(), G.impl().get(), F.impl().get(), g.impl().get()};
    detail::record_kernel_n(run, outs, ins);
  }
  // Other devices: the rule's tensor ops.
  template <class T>
  static void generic(const Tensor<T>& gA, const Tensor<T>& V, const Tensor<T>& G, const Tensor<T>& F,
                      const Tensor<T>& g) {
    detail::copy_into(gA, composite(V, G, F, g));
  }
  // The rule's tensor ops (V^H G, the skew part, the F product, the diagonal, two products),
  // differentiable.
  template <class T>
  static Tensor<T> composite(const Tensor<T>& V, const Tensor<T>& G, const Tensor<T>& F, const Tensor<T>& g) {
    const Tensor<T> K = matmul(V.mH(), G);
    const Tensor<T> mid = add(diag_embed(g), mul(F, mul(sub(K, K.mH()), T(0.5))));
    return matmul(V, matmul(mid, V.mH()));
  }
  // The op where its result is not differentiated again, the composite where it is.
  template <class T>
  Tensor<T> derivative_call(const Tensor<T>& V, const Tensor<T>& G, const Tensor<T>& F, const Tensor<T>& g) const {
    if (detail::differentiated_again(V, G, F, g)) return composite(V, G, F, g);
    return detail::apply_nondiff(*this, V, G, F, g);
  }

  // One matrix, column-major n x n (G: the eigenvectors' cotangent); M and t: n^2 scratch each.
  template <class T>
  static void one(std::int64_t n, const T* V, const T* G, const T* F, const T* g, T* M, T* t, T* gA) {
    using fn::conj_of;
    T* K = gA;  // K = V^H G, in the output until M is formed
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i) {
        T s(0);
        for (std::int64_t a = 0; a < n; ++a) s += conj_of(V[a + i * n]) * G[a + j * n];
        K[i + j * n] = s;
      }
    for (std::int64_t j = 0; j < n; ++j)  // M = diag(g) + F o (K - K^H) / 2
      for (std::int64_t i = 0; i < n; ++i) {
        const T m = F[i + j * n] * ((K[i + j * n] - conj_of(K[j + i * n])) * T(0.5));
        M[i + j * n] = i == j ? g[j] + m : m;
      }
    for (std::int64_t j = 0; j < n; ++j)  // t = M V^H
      for (std::int64_t i = 0; i < n; ++i) {
        T s(0);
        for (std::int64_t a = 0; a < n; ++a) s += M[i + a * n] * conj_of(V[j + a * n]);
        t[i + j * n] = s;
      }
    for (std::int64_t j = 0; j < n; ++j)  // gA = V t
      for (std::int64_t i = 0; i < n; ++i) {
        T s(0);
        for (std::int64_t a = 0; a < n; ++a) s += V[i + a * n] * t[a + j * n];
        gA[i + j * n] = s;
      }
  }
};

}  // namespace ops

namespace detail {
// (diag(V^H X V), V (F o V^H X V)) for small matrices (as above); undefined when the op does not
// take the operands (large, no batch, a batch of tangent directions), for the caller's products.
template <class T>
std::tuple<Tensor<T>, Tensor<T>> eigh_tangent_small(const Tensor<T>& V, const Tensor<T>& X, const Tensor<T>& F) {
  if (mode().tangent_batch_rank >= 0 || !ops::EighTangentSmall::fits(V, X, F)) return {};
  return ops::EighTangentSmall{}.derivative_call(V, X, F);
}
// V (diag(g) + F o (K - K^H) / 2) V^H with K = V^H G for small matrices; undefined when the op does
// not take the operands.
template <class T>
Tensor<T> eigh_cotangent_small(const Tensor<T>& V, const Tensor<T>& G, const Tensor<T>& F, const Tensor<T>& g) {
  if (mode().tangent_batch_rank >= 0 || !ops::EighCotangentSmall::fits(V, G, F, g)) return Tensor<T>();
  return ops::EighCotangentSmall{}.derivative_call(V, G, F, g);
}
}  // namespace detail
}  // namespace tenax
