#pragma once
// triangle_fold: the Hermitian folds of one triangle that the QR rules take (docs/MATH.md section
// 4), as one op: on the CPU one kernel (src/cpu/linalg_fold.cpp), elsewhere
// generic::triangle_fold, the same operations in tensor ops and the same bits.
#include <tuple>

#include "tenax/ad/apply.hpp"
#include "tenax/backend/backend.hpp"
#include "tenax/ops/linalg/common.hpp"

namespace tenax {
namespace ops {

// For square X (n x n x batch) and the strict triangle t (upper or lower):
//   fold: Y = X + X^H in t, Re diag(X) on the diagonal (as (X + X^H)_ii - (X + X^H)_ii / 2), 0 in
//         the other triangle: triu(X + X^H) - Diag(X + X^H) / 2 for the upper one;
//   fill: Y = X in t, its conjugate transpose in the other triangle, Re diag(X) on the diagonal:
//         copyltu(X) = tril(X, -1) + tril(X, -1)^H + Re Diag(X) for the lower one.
// Both are real-linear and each is the other's adjoint (for the inner product Re <G, Y>), so the
// JVP is the op itself and the VJP the other fold of the same triangle.
struct TriangleFold {
  static constexpr const char* name = "triangle_fold";
  static constexpr bool one_kernel = true;  // on the CPU, forward is one captured kernel (kernels/capture.hpp)
  static constexpr bool saves_outputs = false;
  bool fold;
  bool upper;

  template <class T>
  Tensor<T> forward(const Tensor<T>& X) const {
    detail::check_square(name, X);
    return detail::linalg_backend<T>(name, X.device()).triangle_fold(X, fold, upper);
  }
  template <class C>
  auto jvp(const C& c) const {
    return detail::apply(TriangleFold{fold, upper}, c.dx0());
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    if (!c.gy0().defined()) return Tensor<T>();
    return detail::apply(TriangleFold{!fold, upper}, c.gy0());
  }
};

}  // namespace ops

namespace detail {
template <class T>
Tensor<T> triangle_fold(const Tensor<T>& X, bool fold, bool upper) {
  return detail::apply(ops::TriangleFold{fold, upper}, X);
}
}  // namespace detail
}  // namespace tenax
