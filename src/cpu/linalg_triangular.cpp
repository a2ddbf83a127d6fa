// The CPU's solve_triangular and triangular_matmul (ops/linalg/triangular.hpp): B (broadcast)
// copied into the result, A copied into scratch when BLAS cannot read its layout, then trsm or
// trmm per matrix; one kernel, which a prepared program captures (kernels/capture.hpp).
#include <functional>

#include "cpu_linalg.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/linalg/batched.hpp"
#include "tenax/ops/linalg/common.hpp"

namespace tenax::detail {

template <class T>
Tensor<T> CpuLinalg<T>::triangular_op(TriangularBlas r, const Tensor<T>& A, const Tensor<T>& B, bool left, bool upper,
                                      bool unit, blas::Trans trans) const {
  const char* name = r == TriangularBlas::trsm ? "solve_triangular" : "triangular_matmul";
  const Shape batch = broadcast_shapes(mat_batch_shape(A.shape()), mat_batch_shape(B.shape()), name);
  const std::int64_t m = B.shape()[0], n = B.shape()[1];
  Tensor<T> X = Tensor<T>::empty(with_batch(m, n, batch));
  if (X.numel() == 0) return X;  // nothing to do (the batch may still be huge)
  const bool a_ok = has_unit_row_stride(A);
  const Tensor<T> a = a_ok ? A : Tensor<T>::empty(A.shape());
  auto run = [copy_b = copy_to_contiguous(expand(B, X.shape())),
              copy_a = a_ok ? std::function<void(char*, char*)>() : copy_to_contiguous(A),
              scratch = a_ok ? ImplPtr() : a.impl(), aoff = batch_offsets(a, batch),
              lda = std::max<std::int64_t>(1, a.strides()[1]), m, n, r,
              side = left ? cpu::Side::Left : cpu::Side::Right, uplo = upper ? cpu::Uplo::Upper : cpu::Uplo::Lower,
              diag = unit ? cpu::Diag::Unit : cpu::Diag::NonUnit, trans](char* const* p) {
    copy_b(p[0], p[2]);
    if (scratch) copy_a(static_cast<char*>(scratch->data()), p[1]);
    const T* ap = reinterpret_cast<const T*>(scratch ? static_cast<char*>(scratch->data()) : p[1]);
    T* x = reinterpret_cast<T*>(p[0]);
    const std::int64_t ldx = std::max<std::int64_t>(1, m);
    for (std::size_t b = 0; b < aoff.size(); ++b) {
      T* xb = x + static_cast<std::int64_t>(b) * m * n;
      if (r == TriangularBlas::trsm)
        batched::cpu_triangular<TriangularBlas::trsm>(side, uplo, trans, diag, m, n, ap + aoff[b], lda, xb, ldx);
      else
        batched::cpu_triangular<TriangularBlas::trmm>(side, uplo, trans, diag, m, n, ap + aoff[b], lda, xb, ldx);
    }
  };
  record_kernel(run, X, A, B);
  return X;
}

#define TENAX_CPU_TRIANGULAR(T)                                                                                        \
  template Tensor<T> CpuLinalg<T>::triangular_op(TriangularBlas, const Tensor<T>&, const Tensor<T>&, bool, bool, bool, \
                                                 blas::Trans) const;
TENAX_CPU_LINALG_FOR_FLOATING(TENAX_CPU_TRIANGULAR)

}  // namespace tenax::detail
