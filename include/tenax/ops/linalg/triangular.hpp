#pragma once
// What solve_triangular and triangular_matmul share: their flags, the projection onto the triangle
// read, op(.), the op of the adjoint, the argument checks and the forward (the device backend's
// triangular_op).
#include <algorithm>
#include <functional>

#include "tenax/ad/apply.hpp"
#include "tenax/ops/linalg/batched.hpp"
#include "tenax/ops/linalg/common.hpp"

namespace tenax {
namespace linalg {
using Trans = cpu::Trans;
}

namespace ops {

struct TriangularFlags {
  bool upper, left, unit;
  cpu::Trans trans;

  // P(d): the triangle read (strict when unit).
  template <class T>
  Tensor<T> project(const Tensor<T>& d) const {
    return upper ? triu(d, unit ? 1 : 0) : tril(d, unit ? -1 : 0);
  }
  // op(M) for this op (N, T or C); it is also op* of the cotangent rules (N->N, T->T, C->C).
  template <class T>
  Tensor<T> apply_op(const Tensor<T>& M) const {
    switch (trans) {
      case cpu::Trans::N:
        return M;
      case cpu::Trans::T:
        return M.mT();
      default:
        return M.mH();
    }
  }
  // The flags of the same op with op(T)^H in place of op(T). For op T, (T^T)^H = conj(T), which
  // is op N on conjugated operands: *conjugate is set, and the caller conjugates the other operand
  // and the result.
  TriangularFlags adjoint(bool* conjugate) const {
    TriangularFlags a = *this;
    *conjugate = trans == cpu::Trans::T;
    a.trans = trans == cpu::Trans::N ? cpu::Trans::C : cpu::Trans::N;
    return a;
  }
  // op applied with op(T)^H in place of op(T), to (A, G): the cotangent of the other operand.
  template <class Op, class T>
  static Tensor<T> apply_adjoint(const Op& op, const Tensor<T>& A, const Tensor<T>& G) {
    bool conjugate = false;
    const Op adj{op.adjoint(&conjugate)};
    return conjugate ? conj(detail::apply(adj, A, conj(G))) : detail::apply(adj, A, G);
  }

  // op(T)^-1 B / op(T) B (left) or B op(T)^-1 / B op(T) (right), R the routine (trsm or trmm),
  // with B and the batch of A broadcast: computed by the device's backend (on the CPU one captured
  // kernel, src/cpu/linalg_triangular.cpp).
  template <detail::TriangularBlas R, class T>
  Tensor<T> forward_with(std::string_view name, const Tensor<T>& A, const Tensor<T>& B) const {
    return detail::linalg_backend<T>(name, B.device()).triangular_op(R, A, B, left, upper, unit, trans);
  }
};

}  // namespace ops

namespace detail {

// The argument checks of solve_triangular and triangular_matmul: A square, B a matrix on A's
// device, A's order matching B's side, broadcastable batch dimensions.
template <class T>
void check_triangular_args(const char* op, const Tensor<T>& A, const Tensor<T>& B, bool left) {
  check_square(op, A);
  check_matrix(op, B, "B");
  TENAX_CHECK(A.device() == B.device(), op, "A on ", A.device().str(), " and B on ", B.device().str());
  const std::int64_t need = left ? B.shape()[0] : B.shape()[1];
  TENAX_CHECK(A.shape()[0] == need, op, "A of shape ", A.shape(), " does not match B of shape ", B.shape(),
              left ? " (left side: A is n x n, B is n x k; " : " (right side: A is n x n, B is k x n; ",
              dtype_traits<T>::name, " on ", A.device().str(), ")");
  const Shape ab = mat_batch_shape(A.shape()), bb = mat_batch_shape(B.shape());
  bool ok = true;
  for (int d = 0; d < std::min(ab.size(), bb.size()); ++d) ok = ok && (ab[d] == bb[d] || ab[d] == 1 || bb[d] == 1);
  TENAX_CHECK(ok, op, "the batch shapes of A ", ab, " and B ", bb, " do not broadcast (A ", A.shape(), ", B ",
              B.shape(), ", ", dtype_traits<T>::name, " on ", A.device().str(), ")");
}

}  // namespace detail
}  // namespace tenax
