#pragma once
// diag(U^H M V) for small matrices as one op: the first-order tangent of singular values and
// eigenvalues (ds = Re diag(U^H dA V), dw = Re diag(V^H dA V)) without the two products, whose
// off-diagonal entries those rules never read (k (m n + m) multiply-adds instead of m n k + m k^2,
// and one kernel instead of two provider calls). Its CPU form is one kernel of plain loops per
// matrix; other devices run the generic form (the products and the diagonal). It is linear in each
// operand and its rules are this op again and products, so derivatives of any order take it.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <tuple>
#include <utility>

#include "tenax/ad/apply.hpp"
#include "tenax/core/small_vec.hpp"
#include "tenax/kernels/dispatch.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/lu_tangent.hpp"
#include "tenax/ops/linalg/matmul.hpp"
#include "tenax/ops/shape/diagonal.hpp"
#include "tenax/ops/shape/reshape.hpp"

namespace tenax {
namespace detail {
// The tangent of an op linear in each of its three operands (diag_product, scaled_product): the op
// with one operand replaced by its tangent, summed over the operands that carry one.
template <class Op, class C>
auto trilinear_jvp(const Op& op, const C& c) {
  using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
  Tensor<T> d;
  if (c.dx0().defined()) d = apply(op, c.dx0(), c.x1(), c.x2());
  if (c.dx1().defined()) d = accumulate(d, apply(op, c.x0(), c.dx1(), c.x2()));
  if (c.dx2().defined()) d = accumulate(d, apply(op, c.x0(), c.x1(), c.dx2()));
  return d;
}
// M V diag(conj g) and M^H U diag(g) (row: g as 1 x k (x batch)), each where c needs operand 0 and
// 2: the cotangents of U and V in diag(U^H M V) (M its middle operand) and in U diag(g) V^H (M the
// cotangent).
template <class C, class T>
std::pair<Tensor<T>, Tensor<T>> outer_cotangents(const C& c, const Tensor<T>& U, const Tensor<T>& M, const Tensor<T>& V,
                                                 const Tensor<T>& row) {
  Tensor<T> gU, gV;
  if (c.needs(0)) gU = mul(matmul(M, V), conj(row));
  if (c.needs(2)) gV = mul(matmul(M.mH(), U), row);
  return {gU, gV};
}
}  // namespace detail

namespace ops {

// Up to this many rows of U and V the rules use the op.
inline constexpr std::int64_t kDiagProductMaxN = 16;

struct DiagProduct {
  static constexpr const char* name = "diag_product";
  static constexpr bool one_kernel = true;      // one captured kernel (kernels/capture.hpp)
  static constexpr bool saves_outputs = false;  // (the rules read the inputs only)

  // U: m x k, M: m x n, V: n x k (one batch, m, n <= kDiagProductMaxN). Returns diag(U^H M V):
  // k x batch.
  template <class T>
  Tensor<T> forward(const Tensor<T>& U, const Tensor<T>& M, const Tensor<T>& V) const {
    TENAX_CHECK(fits(U, M, V), name,
                "expected U m x k, M m x n and V n x k of one batch with m, n <= ", kDiagProductMaxN,
                " on one device, got ", U.shape(), ", ", M.shape(), " and ", V.shape(), " (", dtype_traits<T>::name,
                " on ", U.device().str(), ")");
    Tensor<T> d = Tensor<T>::empty(detail::with_batch(U.shape()[1], detail::mat_batch_shape(U.shape())), U.device());
    detail::dispatch<&DiagProduct::host<T>, &DiagProduct::generic<T>>(U.device(), d, U, M, V);
    return d;
  }
  template <class T>
  static bool fits(const Tensor<T>& U, const Tensor<T>& M, const Tensor<T>& V) {
    if (!U.defined() || !M.defined() || !V.defined() || U.dim() < 2 || M.dim() < 2 || V.dim() < 2) return false;
    const std::int64_t m = U.shape()[0], k = U.shape()[1], n = V.shape()[0];
    const Shape batch = detail::mat_batch_shape(U.shape());
    return m >= 1 && n >= 1 && k >= 1 && m <= kDiagProductMaxN && n <= kDiagProductMaxN && k <= std::min(m, n) &&
           M.shape() == detail::with_batch(m, n, batch) && V.shape() == detail::with_batch(n, k, batch) &&
           numel_of(batch) > 0 && M.device() == U.device() && V.device() == U.device();
  }
  // One captured kernel reading its operands in place (any strides).
  template <class T>
  static void host(const Tensor<T>& d, const Tensor<T>& U, const Tensor<T>& M, const Tensor<T>& V) {
    namespace lus = detail_lu_small;
    auto run = [u = lus::operand(U), mm = lus::operand(M), v = lus::operand(V)](char* const* p) {
      constexpr std::size_t kMax = kDiagProductMaxN * kDiagProductMaxN;
      detail::SmallVec<T, kMax> su(lus::scratch_size(u)), sm(lus::scratch_size(mm)), sv(lus::scratch_size(v));
      const std::int64_t m = u.rows, k = u.cols, n = v.rows;
      for (std::size_t b = 0; b < u.off.size(); ++b) {
        const T* ub = lus::matrix(u, reinterpret_cast<const T*>(p[1]), b, su.data());
        const T* mb = lus::matrix(mm, reinterpret_cast<const T*>(p[2]), b, sm.data());
        const T* vb = lus::matrix(v, reinterpret_cast<const T*>(p[3]), b, sv.data());
        T* out = reinterpret_cast<T*>(p[0]) + static_cast<std::int64_t>(b) * k;
        for (std::int64_t j = 0; j < k; ++j) {
          T s(0);
          for (std::int64_t a = 0; a < m; ++a) {
            T w(0);
            for (std::int64_t c = 0; c < n; ++c) w += mb[a + c * m] * vb[c + j * n];
            if constexpr (is_complex_v<T>)
              s += std::conj(ub[a + j * m]) * w;
            else
              s += ub[a + j * m] * w;
          }
          out[j] = s;
        }
      }
    };
    const detail::TensorImpl* const outs[] = {d.impl().get()};
    const detail::TensorImpl* const ins[] = {U.impl().get(), M.impl().get(), V.impl().get()};
    detail::record_kernel_n(run, outs, ins);
  }
  // Other devices: the products and the diagonal.
  template <class T>
  static void generic(const Tensor<T>& d, const Tensor<T>& U, const Tensor<T>& M, const Tensor<T>& V) {
    detail::copy_into(d, diagonal(matmul(U.mH(), matmul(M, V))));
  }

  // Linear in each operand: d(diag(U^H M V)) is this op with one operand replaced by its tangent.
  template <class C>
  auto jvp(const C& c) const {
    return detail::trilinear_jvp(*this, c);
  }
  // d_j = u_j^H M v_j:  gU = M V diag(conj g),  gM = U diag(g) V^H,  gV = M^H U diag(g).
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>&U = c.x0(), &M = c.x1(), &V = c.x2();
    const Tensor<T> row = detail::as_row(c.gy0());  // 1 x k (x batch): scales columns
    const auto [gU, gV] = detail::outer_cotangents(c, U, M, V, row);
    Tensor<T> gM;
    if (c.needs(1)) gM = matmul(mul(U, row), V.mH());
    return std::tuple{gU, gM, gV};
  }
};

}  // namespace ops

namespace detail {
// diag(U^H M V) (k x batch) when the op takes the operands (small, one batch, no batch of tangent
// directions); undefined otherwise, for the caller's products.
template <class T>
Tensor<T> diag_product_small(const Tensor<T>& U, const Tensor<T>& M, const Tensor<T>& V) {
  if (mode().tangent_batch_rank >= 0 || !ops::DiagProduct::fits(U, M, V)) return Tensor<T>();
  return apply(ops::DiagProduct{}, U, M, V);
}
}  // namespace detail
}  // namespace tenax
