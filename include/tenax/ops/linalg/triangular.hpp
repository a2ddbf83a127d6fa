#pragma once
// What solve_triangular and triangular_matmul share: their flags, the projection onto the triangle
// read, op(.), the op of the adjoint, the argument checks, the CPU kernel (B copied into the result,
// A into scratch when BLAS cannot read its layout, then one BLAS call per matrix) and the
// device-neutral forward (the same steps with tensor ops and the device's BLAS: cuBLAS on a GPU).
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

  // The forward of op(T)^-1 B / op(T) B (left) or B op(T)^-1 / B op(T) (right), R the routine
  // (trsm or trmm): the CPU kernel below on the CPU, the device-neutral forward elsewhere.
  template <detail::batched::TriangularBlas R, class T>
  Tensor<T> forward_with(std::string_view name, const Tensor<T>& A, const Tensor<T>& B) const {
    return B.device().is_cpu() ? cpu_forward<R>(name, A, B) : generic_forward<R>(name, A, B);
  }

  // The CPU forward: B (broadcast) copied into the result, A copied into scratch when BLAS cannot
  // read its layout, then R per matrix; one kernel, which a prepared program captures
  // (kernels/capture.hpp).
  template <detail::batched::TriangularBlas R, class T>
  Tensor<T> cpu_forward(std::string_view name, const Tensor<T>& A, const Tensor<T>& B) const {
    const Shape batch = broadcast_shapes(detail::mat_batch_shape(A.shape()), detail::mat_batch_shape(B.shape()), name);
    const std::int64_t m = B.shape()[0], n = B.shape()[1];
    Tensor<T> X = Tensor<T>::empty(detail::with_batch(m, n, batch));
    if (X.numel() == 0) return X;  // nothing to do (the batch may still be huge)
    const bool a_ok = detail::has_unit_row_stride(A);
    const Tensor<T> a = a_ok ? A : Tensor<T>::empty(A.shape());
    auto run = [copy_b = detail::copy_to_contiguous(expand(B, X.shape())),
                copy_a = a_ok ? std::function<void(char*, char*)>() : detail::copy_to_contiguous(A),
                scratch = a_ok ? detail::ImplPtr() : a.impl(), aoff = detail::batch_offsets(a, batch),
                lda = std::max<std::int64_t>(1, a.strides()[1]), m, n, side = left ? cpu::Side::Left : cpu::Side::Right,
                uplo = upper ? cpu::Uplo::Upper : cpu::Uplo::Lower, diag = unit ? cpu::Diag::Unit : cpu::Diag::NonUnit,
                trans = trans](char* const* p) {
      copy_b(p[0], p[2]);
      if (scratch) copy_a(static_cast<char*>(scratch->data()), p[1]);
      const T* ap = reinterpret_cast<const T*>(scratch ? static_cast<char*>(scratch->data()) : p[1]);
      T* x = reinterpret_cast<T*>(p[0]);
      for (std::size_t b = 0; b < aoff.size(); ++b)
        detail::batched::cpu_triangular<R>(side, uplo, trans, diag, m, n, ap + aoff[b], lda,
                                           x + static_cast<std::int64_t>(b) * m * n, std::max<std::int64_t>(1, m));
    };
    detail::record_kernel(run, X, A, B);
    return X;
  }

  // The device-neutral forward (what runs on a GPU; tests run it on the CPU against cpu_forward):
  // B broadcast into the result, A with a unit row stride, then the device's trsm or trmm per
  // matrix in place. Not a CPU kernel: a prepared program would capture only its copy, so the CPU
  // forwards use cpu_forward.
  template <detail::batched::TriangularBlas R, class T>
  Tensor<T> generic_forward(std::string_view name, const Tensor<T>& A, const Tensor<T>& B) const {
    const Shape batch = broadcast_shapes(detail::mat_batch_shape(A.shape()), detail::mat_batch_shape(B.shape()), name);
    Tensor<T> X = Tensor<T>::empty(detail::with_batch(B.shape()[0], B.shape()[1], batch), B.device());
    if (X.numel() == 0) return X;  // nothing to do (the batch may still be huge)
    detail::copy_into(X, expand(B, X.shape()));
    const Tensor<T> a = detail::unit_row_stride(A);
    detail::batched::triangular<R>(left ? cpu::Side::Left : cpu::Side::Right,
                                   upper ? cpu::Uplo::Upper : cpu::Uplo::Lower, trans,
                                   unit ? cpu::Diag::Unit : cpu::Diag::NonUnit, a, detail::batch_offsets(a, batch),
                                   std::max<std::int64_t>(1, a.strides()[1]), X);
    return X;
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
