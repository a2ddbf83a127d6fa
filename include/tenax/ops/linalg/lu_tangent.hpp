#pragma once
// The square cores of the LU rules (LuRules, docs/MATH.md section 3) for small matrices: ops whose
// CPU form is one kernel (other devices run the generic form, the rule's tensor ops).
// - Tangents (LuTangentSmall): with C = L^-1 X U^-1 (L unit lower, U upper),
//   dL = L tril(C, -1),  dU = triu(C) U.
// - Cotangent (LuCotangentSmall): P^T gA = L^-H M U^-H, M = tril(L^H gL, -1) + triu(gU U^H).
// The rule's tensor ops take two triangular solves, two triangular products and the triangle
// masks, each a provider call or kernel of its own; at n <= kLuTangentKernelMaxN one loop nest
// per matrix is several times faster than those calls. First order only: they have no rules of
// their own (applied with apply_nondiff); derivative_call takes the rule's tensor ops instead where
// the result is differentiated again, and a traced graph re-executed under a derivative makes that
// choice again (trace/recorder.hpp).
#include <complex>
#include <cstdint>
#include <tuple>

#include "tenax/ad/apply.hpp"
#include "tenax/core/small_vec.hpp"
#include "tenax/kernels/dispatch.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/solve_triangular.hpp"
#include "tenax/ops/linalg/triangular_matmul.hpp"

namespace tenax {
namespace ops {

// Up to this order (rows of the square factors) LuRules uses the kernel. Each matrix's C lives on
// the stack (n^2 elements).
inline constexpr std::int64_t kLuTangentKernelMaxN = 16;

namespace detail_lu_small {

// A matrix operand (r x c x batch) of the small kernels, read in place with any strides: each
// matrix's first element (batch offsets) and its row and column steps, in elements. A dense matrix
// is read where it lies; any other is first gathered into scratch (r c elements).
struct Operand {
  detail::BatchOffsets off;
  std::int64_t rows = 0, cols = 0, s0 = 1, s1 = 0;
  bool dense = false;
};

template <class T>
Operand operand(const Tensor<T>& x) {
  const std::int64_t r = x.shape()[0], c = x.shape()[1];
  Operand o{detail::batch_offsets(x, detail::mat_batch_shape(x.shape())), r, c, x.strides()[0], x.strides()[1], false};
  o.dense = (o.s0 == 1 || r <= 1) && (o.s1 == r || c <= 1);
  return o;
}

// Scratch for o's matrices: none when it is read in place.
inline std::size_t scratch_size(const Operand& o) { return o.dense ? 0 : static_cast<std::size_t>(o.rows * o.cols); }

// Matrix b of operand o at base: where it lies when dense, else gathered into scratch
// (column-major, leading dimension o.rows).
template <class T>
const T* matrix(const Operand& o, const T* base, std::size_t b, T* scratch) {
  const T* m = base + o.off[b];
  if (o.dense) return m;
  for (std::int64_t j = 0; j < o.cols; ++j)
    for (std::int64_t i = 0; i < o.rows; ++i) scratch[i + j * o.rows] = m[i * o.s0 + j * o.s1];
  return scratch;
}

}  // namespace detail_lu_small

struct LuTangentSmall {
  static constexpr const char* name = "lu_tangent";
  static constexpr bool one_kernel = true;  // one captured kernel (kernels/capture.hpp)

  // L and U: the n x n factors (L's strictly lower part and U's upper part are read, so both may
  // be the same packed LU); X: n x n, the same batch. Returns (dL, dU), n x n each.
  template <class T>
  std::tuple<Tensor<T>, Tensor<T>> forward(const Tensor<T>& L, const Tensor<T>& U, const Tensor<T>& X) const {
    const std::int64_t n = X.dim() >= 2 ? X.shape()[0] : -1;
    TENAX_CHECK(n >= 0 && n <= kLuTangentKernelMaxN && X.shape()[1] == n && L.shape() == X.shape() &&
                    U.shape() == X.shape() && L.device() == X.device() && U.device() == X.device(),
                name, "expected L, U and X of one shape n x n (x batch) with n <= ", kLuTangentKernelMaxN,
                " on one device, got shapes ", L.shape(), ", ", U.shape(), ", ", X.shape(), " on ", L.device().str(),
                ", ", U.device().str(), ", ", X.device().str());
    Tensor<T> dL = Tensor<T>::empty(X.shape(), X.device()), dU = Tensor<T>::empty(X.shape(), X.device());
    detail::dispatch<&LuTangentSmall::host<T>, &LuTangentSmall::generic<T>>(X.device(), dL, dU, L, U, X);
    return {dL, dU};
  }
  // One captured kernel reading the operands in place (any strides: a broadcast cotangent too).
  template <class T>
  static void host(const Tensor<T>& dL, const Tensor<T>& dU, const Tensor<T>& L, const Tensor<T>& U,
                   const Tensor<T>& X) {
    namespace lus = detail_lu_small;
    const std::int64_t n = X.shape()[0];
    auto run = [n, l = lus::operand(L), u = lus::operand(U), x = lus::operand(X)](char* const* p) {
      constexpr std::size_t kMax = kLuTangentKernelMaxN * kLuTangentKernelMaxN;
      const std::int64_t nn = n * n;
      // C, and scratch for the operands not read in place.
      detail::SmallVec<T, kMax> c(static_cast<std::size_t>(nn)), sl(lus::scratch_size(l)), su(lus::scratch_size(u)),
          sx(lus::scratch_size(x));
      for (std::size_t b = 0; b < x.off.size(); ++b) {
        const auto o = static_cast<std::int64_t>(b) * nn;
        one(n, lus::matrix(l, reinterpret_cast<const T*>(p[2]), b, sl.data()),
            lus::matrix(u, reinterpret_cast<const T*>(p[3]), b, su.data()),
            lus::matrix(x, reinterpret_cast<const T*>(p[4]), b, sx.data()), c.data(), reinterpret_cast<T*>(p[0]) + o,
            reinterpret_cast<T*>(p[1]) + o);
      }
    };
    const detail::TensorImpl* const outs[] = {dL.impl().get(), dU.impl().get()};
    const detail::TensorImpl* const ins[] = {L.impl().get(), U.impl().get(), X.impl().get()};
    detail::record_kernel_n(run, outs, ins);
  }
  // Other devices: the rule's tensor ops (composite).
  template <class T>
  static void generic(const Tensor<T>& dL, const Tensor<T>& dU, const Tensor<T>& L, const Tensor<T>& U,
                      const Tensor<T>& X) {
    const auto [l, u] = composite(L, U, X);
    detail::copy_into(dL, l);
    detail::copy_into(dU, u);
  }
  // The rule's tensor ops (two triangular solves, the masks, two triangular products),
  // differentiable.
  template <class T>
  static std::tuple<Tensor<T>, Tensor<T>> composite(const Tensor<T>& L, const Tensor<T>& U, const Tensor<T>& X) {
    const Tensor<T> C = linalg::solve_triangular(L, linalg::solve_triangular(U, X, true, false), false, true, true);
    return {linalg::triangular_matmul(L, tril(C, -1), false, true, true),
            linalg::triangular_matmul(U, triu(C), true, false)};
  }
  // The op where its result is not differentiated again, the composite where it is (also when a
  // traced graph holding this op is re-executed under a derivative: trace/recorder.hpp).
  template <class T>
  std::tuple<Tensor<T>, Tensor<T>> derivative_call(const Tensor<T>& L, const Tensor<T>& U, const Tensor<T>& X) const {
    if (detail::differentiated_again(L, U, X)) return composite(L, U, X);
    return detail::apply_nondiff(*this, L, U, X);
  }

  // One matrix, column-major n x n, c: n^2 scratch.
  template <class T>
  static void one(std::int64_t n, const T* L, const T* U, const T* X, T* c, T* dL, T* dU) {
    auto at = [n](std::int64_t i, std::int64_t j) { return i + j * n; };
    for (std::int64_t e = 0; e < n * n; ++e) c[e] = X[e];
    // C := L^-1 C, column by column (L unit lower).
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t k = 0; k < n; ++k) {
        const T w = c[at(k, j)];
        for (std::int64_t i = k + 1; i < n; ++i) c[at(i, j)] -= w * L[at(i, k)];
      }
    // C := C U^-1, column by column.
    for (std::int64_t j = 0; j < n; ++j) {
      for (std::int64_t k = 0; k < j; ++k) {
        const T w = U[at(k, j)];
        for (std::int64_t i = 0; i < n; ++i) c[at(i, j)] -= c[at(i, k)] * w;
      }
      const T d = U[at(j, j)];
      for (std::int64_t i = 0; i < n; ++i) c[at(i, j)] /= d;
    }
    // dL = L tril(C, -1): below the diagonal sum_{j < k <= i} L(i, k) C(k, j) with L(i, i) = 1.
    // dU = triu(C) U: on and above it sum_{i <= k <= j} C(i, k) U(k, j).
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i) {
        T sl(0), su(0);
        if (i > j) {
          sl = c[at(i, j)];
          for (std::int64_t k = j + 1; k < i; ++k) sl += L[at(i, k)] * c[at(k, j)];
        } else {
          for (std::int64_t k = i; k <= j; ++k) su += c[at(i, k)] * U[at(k, j)];
        }
        dL[at(i, j)] = sl;
        dU[at(i, j)] = su;
      }
  }
};

// The square core of the LU cotangent (LuRules::cotangent) for small matrices, on the CPU one
// kernel: P^T gA = L^-H M U^-H with M = tril(L^H gL, -1) + triu(gU U^H) (L unit lower, U upper;
// the rule's tensor ops: two triangular products, two masks, a sum and two triangular solves).
struct LuCotangentSmall {
  static constexpr const char* name = "lu_cotangent";
  static constexpr bool one_kernel = true;  // one captured kernel (kernels/capture.hpp)

  // L and U: the n x n factors (as LuTangentSmall); gL and gU: their cotangents, n x n, the same
  // batch. Returns P^T gA, n x n.
  template <class T>
  Tensor<T> forward(const Tensor<T>& L, const Tensor<T>& U, const Tensor<T>& gL, const Tensor<T>& gU) const {
    const std::int64_t n = L.dim() >= 2 ? L.shape()[0] : -1;
    TENAX_CHECK(n >= 0 && n <= kLuTangentKernelMaxN && L.shape()[1] == n && U.shape() == L.shape() &&
                    gL.shape() == L.shape() && gU.shape() == L.shape() && U.device() == L.device() &&
                    gL.device() == L.device() && gU.device() == L.device(),
                name, "expected L, U, gL and gU of one shape n x n (x batch) with n <= ", kLuTangentKernelMaxN,
                " on one device, got shapes ", L.shape(), ", ", U.shape(), ", ", gL.shape(), ", ", gU.shape(), " on ",
                L.device().str(), ", ", U.device().str(), ", ", gL.device().str(), ", ", gU.device().str());
    Tensor<T> out = Tensor<T>::empty(L.shape(), L.device());
    detail::dispatch<&LuCotangentSmall::host<T>, &LuCotangentSmall::generic<T>>(L.device(), out, L, U, gL, gU);
    return out;
  }
  // One captured kernel reading the operands in place (any strides: a broadcast cotangent too).
  template <class T>
  static void host(const Tensor<T>& out, const Tensor<T>& L, const Tensor<T>& U, const Tensor<T>& gL,
                   const Tensor<T>& gU) {
    namespace lus = detail_lu_small;
    const std::int64_t n = L.shape()[0];
    auto run = [n, l = lus::operand(L), u = lus::operand(U), gl = lus::operand(gL),
                gu = lus::operand(gU)](char* const* p) {
      constexpr std::size_t kMax = kLuTangentKernelMaxN * kLuTangentKernelMaxN;
      const std::int64_t nn = n * n;
      detail::SmallVec<T, kMax> sl(lus::scratch_size(l)), su(lus::scratch_size(u)), sgl(lus::scratch_size(gl)),
          sgu(lus::scratch_size(gu));
      for (std::size_t b = 0; b < l.off.size(); ++b)
        one(n, lus::matrix(l, reinterpret_cast<const T*>(p[1]), b, sl.data()),
            lus::matrix(u, reinterpret_cast<const T*>(p[2]), b, su.data()),
            lus::matrix(gl, reinterpret_cast<const T*>(p[3]), b, sgl.data()),
            lus::matrix(gu, reinterpret_cast<const T*>(p[4]), b, sgu.data()),
            reinterpret_cast<T*>(p[0]) + static_cast<std::int64_t>(b) * nn);
    };
    const detail::TensorImpl* const outs[] = {out.impl().get()};
    const detail::TensorImpl* const ins[] = {L.impl().get(), U.impl().get(), gL.impl().get(), gU.impl().get()};
    detail::record_kernel_n(run, outs, ins);
  }
  // Other devices: the rule's tensor ops (composite).
  template <class T>
  static void generic(const Tensor<T>& out, const Tensor<T>& L, const Tensor<T>& U, const Tensor<T>& gL,
                      const Tensor<T>& gU) {
    detail::copy_into(out, composite(L, U, gL, gU));
  }
  // The rule's tensor ops (two triangular products, the masks, a sum, two triangular solves),
  // differentiable.
  template <class T>
  static Tensor<T> composite(const Tensor<T>& L, const Tensor<T>& U, const Tensor<T>& gL, const Tensor<T>& gU) {
    constexpr auto C = cpu::Trans::C;
    const Tensor<T> M = add(tril(linalg::triangular_matmul(L, gL, false, true, true, C), -1),
                            triu(linalg::triangular_matmul(U, gU, true, false, false, C)));
    return linalg::solve_triangular(L, linalg::solve_triangular(U, M, true, false, false, C), false, true, true, C);
  }
  // As LuTangentSmall::derivative_call.
  template <class T>
  Tensor<T> derivative_call(const Tensor<T>& L, const Tensor<T>& U, const Tensor<T>& gL, const Tensor<T>& gU) const {
    if (detail::differentiated_again(L, U, gL, gU)) return composite(L, U, gL, gU);
    return detail::apply_nondiff(*this, L, U, gL, gU);
  }

  // One matrix, column-major n x n; z gets M, then M U^-H, then L^-H M U^-H in place.
  template <class T>
  static void one(std::int64_t n, const T* L, const T* U, const T* gL, const T* gU, T* z) {
    auto at = [n](std::int64_t i, std::int64_t j) { return i + j * n; };
    auto cj = [](const T& x) {
      if constexpr (is_complex_v<T>)
        return std::conj(x);
      else
        return x;
    };
    // M: below the diagonal (L^H gL)(i, j) = gL(i, j) + sum_{k > i} conj(L(k, i)) gL(k, j); on and
    // above it (gU U^H)(i, j) = sum_{k >= j} gU(i, k) conj(U(j, k)).
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i) {
        T s(0);
        if (i > j) {
          s = gL[at(i, j)];
          for (std::int64_t k = i + 1; k < n; ++k) s += cj(L[at(k, i)]) * gL[at(k, j)];
        } else {
          for (std::int64_t k = j; k < n; ++k) s += gU[at(i, k)] * cj(U[at(j, k)]);
        }
        z[at(i, j)] = s;
      }
    // z := z U^-H: Y U^H = M, columns from the last (U^H is lower, its (k, j) = conj(U(j, k))).
    for (std::int64_t j = n - 1; j >= 0; --j) {
      for (std::int64_t k = j + 1; k < n; ++k) {
        const T w = cj(U[at(j, k)]);
        for (std::int64_t i = 0; i < n; ++i) z[at(i, j)] -= z[at(i, k)] * w;
      }
      const T d = cj(U[at(j, j)]);
      for (std::int64_t i = 0; i < n; ++i) z[at(i, j)] /= d;
    }
    // z := L^-H z: L^H is unit upper, its (i, k) = conj(L(k, i)); rows from the last.
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = n - 1; i >= 0; --i) {
        T s = z[at(i, j)];
        for (std::int64_t k = i + 1; k < n; ++k) s -= cj(L[at(k, i)]) * z[at(k, j)];
        z[at(i, j)] = s;
      }
  }
};

}  // namespace ops

namespace detail {
// (dL, dU) = (L tril(C, -1), triu(C) U), C = L^-1 X U^-1, for small square factors: the kernel, or
// the tensor ops where the result is differentiated again.
template <class T>
std::tuple<Tensor<T>, Tensor<T>> lu_tangent_small(const Tensor<T>& L, const Tensor<T>& U, const Tensor<T>& X) {
  return ops::LuTangentSmall{}.derivative_call(L, U, X);
}
// P^T gA = L^-H (tril(L^H gL, -1) + triu(gU U^H)) U^-H for small square factors (as above).
template <class T>
Tensor<T> lu_cotangent_small(const Tensor<T>& L, const Tensor<T>& U, const Tensor<T>& gL, const Tensor<T>& gU) {
  return ops::LuCotangentSmall{}.derivative_call(L, U, gL, gU);
}
}  // namespace detail
}  // namespace tenax
