// The CPU's cholesky and qr (ops/linalg/cholesky.hpp, qr.hpp): each one kernel that a prepared
// program captures (kernels/capture.hpp), its scratch held by the kernel.
#include <limits>

#include "cpu_linalg.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/linalg/common.hpp"

namespace tenax::detail {

// A copied into L, then potrf per matrix; a matrix with inf or NaN in its lower triangle gets
// kNonFiniteInfo, and a failed one NaN.
template <class T>
std::tuple<Tensor<T>, Tensor<std::int32_t>> CpuLinalg<T>::cholesky(const Tensor<T>& A) const {
  const std::int64_t n = A.shape()[0], nb = mat_batch_count(A.shape());
  Tensor<T> L = Tensor<T>::empty(A.shape());
  Tensor<std::int32_t> info = info_tensor(A.shape());
  auto run = [copy = copy_to_contiguous(A), n, nb](char* const* p) {
    copy(p[0], p[2]);
    for_each_matrix(reinterpret_cast<T*>(p[0]), n, n, nb, [&](T* l, std::int64_t b) {
      std::int32_t& inf = reinterpret_cast<std::int32_t*>(p[1])[b];
      bool finite = true;
      for (std::int64_t j = 0; j < n && finite; ++j) finite = all_finite(l + j * n + j, n - j);
      inf = finite ? cpu::potrf<T>(cpu::Uplo::Lower, n, l, std::max<std::int64_t>(1, n)) : kNonFiniteInfo;
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < j; ++i) l[i + j * n] = T(0);
      if (inf != 0)
        for (std::int64_t i = 0; i < n * n; ++i) l[i] = T(std::numeric_limits<real_t<T>>::quiet_NaN());
    });
  };
  record_kernel_n(run, {L.impl().get(), info.impl().get()}, {A.impl().get()});
  return {L, info};
}

// A copied into scratch, geqrf per matrix, R's upper triangle read out and Q formed by
// orgqr/ungqr; the scratch and tau stay with the kernel. A matrix with inf or NaN raises.
template <class T>
std::tuple<Tensor<T>, Tensor<T>> CpuLinalg<T>::qr(const Tensor<T>& A, bool complete, bool compute_q,
                                                  bool positive_diag) const {
  const std::int64_t m = A.shape()[0], n = A.shape()[1], k = std::min(m, n);
  const Shape batch = mat_batch_shape(A.shape());
  const std::int64_t qc = complete ? m : k, rr = complete ? m : k, nb = mat_batch_count(A.shape());
  Tensor<T> R = Tensor<T>::empty(with_batch(rr, n, batch));
  Tensor<T> Q = compute_q ? Tensor<T>::empty(with_batch(m, qc, batch)) : Tensor<T>();
  const std::int64_t tk = std::max<std::int64_t>(k, 1);
  auto run = [copy = copy_to_contiguous(A), work = Scratch<T>(A.shape()), tau = Scratch<T>(with_batch(tk, 1, batch)),
              shape = A.shape(), m, n, k, tk, qc, rr, nb, compute_q, positive_diag](char* const* p) {
    copy(reinterpret_cast<char*>(work.get()), p[2]);
    T* const Qp = reinterpret_cast<T*>(p[0]);
    T* const Rp = reinterpret_cast<T*>(p[1]);
    std::fill(Rp, Rp + rr * n * nb, T(0));
    const std::int64_t ld = std::max<std::int64_t>(1, m);
    for_each_matrix_parallel(work.get(), m, n, nb, [&](T* a, std::int64_t b) {
      T* t = tau.get() + b * tk;
      if (!all_finite(a, m * n))  // a LinAlgError, like the other decompositions
        raise_nonfinite("qr", shape, b, dtype_traits<T>::name, Device::cpu());
      cpu::geqrf<T>(m, n, a, ld, t);
      T* r = Rp + b * rr * n;
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i <= std::min(j, rr - 1); ++i) r[i + j * rr] = a[i + j * m];
      T* q = compute_q ? Qp + b * m * qc : nullptr;
      if (compute_q) {
        for (std::int64_t j = 0; j < qc; ++j)
          for (std::int64_t i = 0; i < m; ++i) q[i + j * m] = j < n ? a[i + j * m] : T(0);
        cpu::orgqr<T>(m, qc, k, q, ld, t);
      }
      if (positive_diag) {
        for (std::int64_t i = 0; i < k; ++i) {
          if (std::real(r[i + i * rr]) >= 0) continue;
          for (std::int64_t j = 0; j < n; ++j) r[i + j * rr] = -r[i + j * rr];
          if (compute_q)
            for (std::int64_t s = 0; s < m; ++s) q[s + i * m] *= T(-1);
        }
      }
    });
  };
  record_kernel_n(run, {impl_of(Q), R.impl().get()}, {A.impl().get()});
  return {Q, R};
}

#define TENAX_CPU_CHOLESKY_QR(T)                                                                       \
  template std::tuple<Tensor<T>, Tensor<std::int32_t>> CpuLinalg<T>::cholesky(const Tensor<T>&) const; \
  template std::tuple<Tensor<T>, Tensor<T>> CpuLinalg<T>::qr(const Tensor<T>&, bool, bool, bool) const;
TENAX_CPU_LINALG_FOR_FLOATING(TENAX_CPU_CHOLESKY_QR)

}  // namespace tenax::detail
