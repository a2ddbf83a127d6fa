#pragma once
// U diag(g) V^H for small matrices as one op: the gradient of singular values and eigenvalues
// (gA = U diag(gs) V^H for svdvals, V diag(gw) V^H for eigvalsh) without scaling U's columns into
// a buffer and a gemm call (one kernel instead of two, m n k multiply-adds either way). Its CPU
// form is one kernel of plain loops per matrix; other devices run the generic form (the scaled
// columns and the product). It is linear in each operand and its rules are this op again, products
// and diag_product, so derivatives of any order take it.
#include <complex>
#include <cstdint>
#include <tuple>

#include "tenax/ad/apply.hpp"
#include "tenax/core/small_vec.hpp"
#include "tenax/kernels/dispatch.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/diag_product.hpp"
#include "tenax/ops/linalg/lu_tangent.hpp"
#include "tenax/ops/linalg/matmul.hpp"
#include "tenax/ops/shape/reshape.hpp"

namespace tenax {
namespace ops {

// Up to this many rows of U and V the rules use the op.
inline constexpr std::int64_t kScaledProductMaxN = 16;

struct ScaledProduct {
  static constexpr const char* name = "scaled_product";
  static constexpr bool one_kernel = true;      // one captured kernel (kernels/capture.hpp)
  static constexpr bool saves_outputs = false;  // (the rules read the inputs only)

  // U: m x k, g: k, V: n x k (one batch, m, n <= kScaledProductMaxN). Returns U diag(g) V^H:
  // m x n x batch.
  template <class T>
  Tensor<T> forward(const Tensor<T>& U, const Tensor<T>& g, const Tensor<T>& V) const {
    TENAX_CHECK(fits(U, g, V), name, "expected U m x k, g k and V n x k of one batch with m, n <= ", kScaledProductMaxN,
                " on one device, got ", U.shape(), ", ", g.shape(), " and ", V.shape(), " (", dtype_traits<T>::name,
                " on ", U.device().str(), ")");
    Tensor<T> P = Tensor<T>::empty(detail::with_batch(U.shape()[0], V.shape()[0], detail::mat_batch_shape(U.shape())),
                                   U.device());
    detail::dispatch<&ScaledProduct::host<T>, &ScaledProduct::generic<T>>(U.device(), P, U, g, V);
    return P;
  }
  template <class T>
  static bool fits(const Tensor<T>& U, const Tensor<T>& g, const Tensor<T>& V) {
    if (!U.defined() || !g.defined() || !V.defined() || U.dim() < 2 || g.dim() < 1 || V.dim() < 2) return false;
    const std::int64_t m = U.shape()[0], k = U.shape()[1], n = V.shape()[0];
    const Shape batch = detail::mat_batch_shape(U.shape());
    Shape gs{k};
    for (int d = 0; d < batch.size(); ++d) gs.push_back(batch[d]);
    return m >= 1 && n >= 1 && k >= 1 && m <= kScaledProductMaxN && n <= kScaledProductMaxN && k <= std::min(m, n) &&
           g.shape() == gs && V.shape() == detail::with_batch(n, k, batch) && numel_of(batch) > 0 &&
           g.device() == U.device() && V.device() == U.device();
  }
  // One captured kernel reading its operands in place (any strides).
  template <class T>
  static void host(const Tensor<T>& P, const Tensor<T>& U, const Tensor<T>& g, const Tensor<T>& V) {
    namespace lus = detail_lu_small;
    // g as a k x 1 matrix per batch entry, so that the operand helpers read it in place too.
    const std::int64_t k = g.shape()[0];
    lus::Operand go{detail::batch_offsets(g, detail::mat_batch_shape(U.shape()), 1), k, 1, g.strides()[0], k, false};
    go.dense = go.s0 == 1 || k <= 1;
    auto run = [u = lus::operand(U), gg = go, v = lus::operand(V)](char* const* p) {
      constexpr std::size_t kMax = kScaledProductMaxN * kScaledProductMaxN;
      detail::SmallVec<T, kMax> su(lus::scratch_size(u)), sv(lus::scratch_size(v));
      detail::SmallVec<T, kScaledProductMaxN> sg(lus::scratch_size(gg));
      const std::int64_t m = u.rows, k = u.cols, n = v.rows;
      for (std::size_t b = 0; b < u.off.size(); ++b) {
        const T* ub = lus::matrix(u, reinterpret_cast<const T*>(p[1]), b, su.data());
        const T* gb = lus::matrix(gg, reinterpret_cast<const T*>(p[2]), b, sg.data());
        const T* vb = lus::matrix(v, reinterpret_cast<const T*>(p[3]), b, sv.data());
        T* out = reinterpret_cast<T*>(p[0]) + static_cast<std::int64_t>(b) * m * n;
        for (std::int64_t c = 0; c < n; ++c)
          for (std::int64_t a = 0; a < m; ++a) {
            T s(0);
            for (std::int64_t j = 0; j < k; ++j) {
              if constexpr (is_complex_v<T>)
                s += ub[a + j * m] * gb[j] * std::conj(vb[c + j * n]);
              else
                s += ub[a + j * m] * gb[j] * vb[c + j * n];
            }
            out[a + c * m] = s;
          }
      }
    };
    const detail::TensorImpl* const outs[] = {P.impl().get()};
    const detail::TensorImpl* const ins[] = {U.impl().get(), g.impl().get(), V.impl().get()};
    detail::record_kernel_n(run, outs, ins);
  }
  // Other devices: U's columns scaled, then the product.
  template <class T>
  static void generic(const Tensor<T>& P, const Tensor<T>& U, const Tensor<T>& g, const Tensor<T>& V) {
    detail::copy_into(P, matmul(mul(U, detail::as_row(g)), V.mH()));
  }

  // Linear in each operand: the tangent is this op with one operand replaced by its tangent.
  template <class C>
  auto jvp(const C& c) const {
    return detail::trilinear_jvp(*this, c);
  }
  // P = sum_j g_j u_j v_j^H:  gU = G V diag(conj g),  gg = diag(U^H G V),  gV = G^H U diag(g).
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>&U = c.x0(), &g = c.x1(), &V = c.x2(), &G = c.gy0();
    const Tensor<T> row = detail::as_row(g);  // 1 x k (x batch): scales columns
    const auto [gU, gV] = detail::outer_cotangents(c, U, G, V, row);
    Tensor<T> gg;
    if (c.needs(1)) {
      gg = detail::diag_product_small(U, G, V);
      if (!gg.defined()) gg = diagonal(matmul(U.mH(), matmul(G, V)));
    }
    return std::tuple{gU, gg, gV};
  }
};

}  // namespace ops

namespace detail {
// U diag(g) V^H (m x n x batch) when the op takes the operands (small, one batch, no batch of
// tangent directions); undefined otherwise, for the caller's products.
template <class T>
Tensor<T> scaled_product_small(const Tensor<T>& U, const Tensor<T>& g, const Tensor<T>& V) {
  if (mode().tangent_batch_rank >= 0 || !ops::ScaledProduct::fits(U, g, V)) return Tensor<T>();
  return apply(ops::ScaledProduct{}, U, g, V);
}
}  // namespace detail
}  // namespace tenax
