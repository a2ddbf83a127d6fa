// The CPU's eigh and svd (ops/linalg/eigh.hpp, svd.hpp): each one kernel that a prepared program
// captures (kernels/capture.hpp), its scratch held by the kernel.
#include <limits>
#include <optional>

#include "cpu_linalg.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/spectral.hpp"

namespace tenax::detail {

// A copied into V (scratch kept by the kernel for eigenvalues only), syevd per matrix, then the
// canonical gauge (E) when asked. A matrix with inf or NaN in its referenced triangle gets
// kNonFiniteInfo; a failed one NaN values and vectors.
template <class T>
std::tuple<Tensor<real_t<T>>, Tensor<T>, Tensor<std::int32_t>, Tensor<T>> CpuLinalg<T>::eigh(const Tensor<T>& A,
                                                                                             bool upper, bool vectors,
                                                                                             bool canonical) const {
  const std::int64_t n = A.shape()[0], nb = mat_batch_count(A.shape());
  Tensor<R> w = Tensor<R>::empty(with_batch(n, mat_batch_shape(A.shape())));
  Tensor<std::int32_t> info = info_tensor(A.shape());
  Tensor<T> V = vectors ? Tensor<T>::empty(A.shape()) : Tensor<T>();
  Tensor<T> E = canonical && vectors ? Tensor<T>::empty(A.shape()) : Tensor<T>();
  auto run = [copy = copy_to_contiguous(A), scratch = vectors ? std::optional<Scratch<T>>() : Scratch<T>(A.shape()), n,
              nb, vectors, upper](char* const* p) {
    T* const Vp = scratch ? scratch->get() : reinterpret_cast<T*>(p[1]);
    copy(reinterpret_cast<char*>(Vp), p[4]);
    for_each_matrix_parallel(Vp, n, n, nb, [&](T* v, std::int64_t b) {
      std::int32_t& inf = reinterpret_cast<std::int32_t*>(p[2])[b];
      bool finite = true;  // only the referenced triangle matters
      for (std::int64_t j = 0; j < n && finite; ++j)
        finite = upper ? all_finite(v + j * n, j + 1) : all_finite(v + j * n + j, n - j);
      R* wb = reinterpret_cast<R*>(p[0]) + b * n;
      inf = finite ? cpu::syevd<T>(vectors, upper ? cpu::Uplo::Upper : cpu::Uplo::Lower, n, v,
                                   std::max<std::int64_t>(1, n), wb)
                   : kNonFiniteInfo;
      if (inf != 0) {
        for (std::int64_t i = 0; i < n; ++i) wb[i] = std::numeric_limits<R>::quiet_NaN();
        for (std::int64_t i = 0; i < n * n; ++i) v[i] = T(std::numeric_limits<R>::quiet_NaN());
      }
    });
    if (p[3] != nullptr)
      canonicalize_columns(Vp, n, n, nb, reinterpret_cast<T*>(p[3]), [](std::int64_t, std::int64_t, T) {});
  };
  record_kernel_n(run, {w.impl().get(), impl_of(V), info.impl().get(), impl_of(E)}, {A.impl().get()});
  return {w, V, info, E};
}

// A copied into scratch, gesdd per matrix, then the canonical gauge (E; V = Vh^H gets U's column
// factors) when asked. A matrix with inf or NaN gets kNonFiniteInfo (reference gesdd can loop
// forever on them: checked first); a failed one NaN factors.
template <class T>
std::tuple<Tensor<T>, Tensor<real_t<T>>, Tensor<T>, Tensor<std::int32_t>, Tensor<T>> CpuLinalg<T>::svd(
    const Tensor<T>& A, bool full_matrices, bool compute_uv, bool canonical) const {
  const std::int64_t m = A.shape()[0], n = A.shape()[1], k = std::min(m, n);
  const Shape batch = mat_batch_shape(A.shape());
  const std::int64_t uc = full_matrices ? m : k, vr = full_matrices ? n : k, nb = mat_batch_count(A.shape());
  Tensor<R> S = Tensor<R>::empty(with_batch(k, batch));
  Tensor<T> U = compute_uv ? Tensor<T>::empty(with_batch(m, uc, batch)) : Tensor<T>();
  Tensor<T> Vh = compute_uv ? Tensor<T>::empty(with_batch(vr, n, batch)) : Tensor<T>();
  Tensor<std::int32_t> info = info_tensor(A.shape());
  Tensor<T> E = canonical && compute_uv ? Tensor<T>::empty(with_batch(m, uc, batch)) : Tensor<T>();
  const char jobz = !compute_uv ? 'N' : full_matrices ? 'A' : 'S';
  auto run = [copy = copy_to_contiguous(A), work = Scratch<T>(A.shape()), m, n, k, uc, vr, nb, jobz,
              compute_uv](char* const* p) {
    copy(reinterpret_cast<char*>(work.get()), p[5]);
    for_each_matrix_parallel(work.get(), m, n, nb, [&](T* a, std::int64_t b) {
      std::int32_t& inf = reinterpret_cast<std::int32_t*>(p[3])[b];
      R* s = reinterpret_cast<R*>(p[1]) + b * k;
      T* u = compute_uv ? reinterpret_cast<T*>(p[0]) + b * m * uc : nullptr;
      T* vt = compute_uv ? reinterpret_cast<T*>(p[2]) + b * vr * n : nullptr;
      inf = all_finite(a, m * n) ? cpu::gesdd<T>(jobz, m, n, a, std::max<std::int64_t>(1, m), s, u,
                                                 std::max<std::int64_t>(1, m), vt, std::max<std::int64_t>(1, vr))
                                 : kNonFiniteInfo;
      if (k == 0 && compute_uv) {
        // An empty A (m or n is 0) still has full unitary factors, identities; gesdd returns
        // without writing them.
        for (std::int64_t i = 0; i < m * uc; ++i) u[i] = T(i % (m + 1) == 0 ? 1 : 0);
        for (std::int64_t i = 0; i < vr * n; ++i) vt[i] = T(i % (vr + 1) == 0 ? 1 : 0);
      }
      if (inf != 0) {
        const R nan = std::numeric_limits<R>::quiet_NaN();
        for (std::int64_t i = 0; i < k; ++i) s[i] = nan;
        if (compute_uv) {
          for (std::int64_t i = 0; i < m * uc; ++i) u[i] = T(nan);
          for (std::int64_t i = 0; i < vr * n; ++i) vt[i] = T(nan);
        }
      }
    });
    if (p[4] != nullptr) {
      T* const vh = reinterpret_cast<T*>(p[2]);
      canonicalize_columns(reinterpret_cast<T*>(p[0]), m, uc, nb, reinterpret_cast<T*>(p[4]),
                           [&](std::int64_t b, std::int64_t j, T f) {
                             // column j of V = Vh^H scaled by f: row j of Vh
                             T* r = vh + b * vr * n + j;
                             for (std::int64_t i = 0; i < n; ++i) r[i * vr] = fn::conj_of(fn::conj_of(r[i * vr]) * f);
                           });
    }
  };
  record_kernel_n(run, {impl_of(U), S.impl().get(), impl_of(Vh), info.impl().get(), impl_of(E)}, {A.impl().get()});
  return {U, S, Vh, info, E};
}

// A copied into scratch, geev per matrix, then each eigenvector's phase fixed (the backend's
// convention). A matrix with inf or NaN gets kNonFiniteInfo (checked first: the QR iteration may
// not end on them); a failed one NaN values and vectors.
template <class T>
std::tuple<Tensor<std::complex<real_t<T>>>, Tensor<std::complex<real_t<T>>>, Tensor<std::int32_t>> CpuLinalg<T>::eig(
    const Tensor<T>& A, bool vectors) const {
  const std::int64_t n = A.shape()[0], nb = mat_batch_count(A.shape()), ldn = std::max<std::int64_t>(1, n);
  Tensor<C> w = Tensor<C>::empty(with_batch(n, mat_batch_shape(A.shape())));
  Tensor<C> V = vectors ? Tensor<C>::empty(A.shape()) : Tensor<C>();
  Tensor<std::int32_t> info = info_tensor(A.shape());
  auto run = [copy = copy_to_contiguous(A), work = Scratch<T>(A.shape()), n, nb, ldn, vectors](char* const* p) {
    copy(reinterpret_cast<char*>(work.get()), p[3]);
    for_each_matrix_parallel(work.get(), n, n, nb, [&](T* a, std::int64_t b) {
      std::int32_t& inf = reinterpret_cast<std::int32_t*>(p[2])[b];
      C* wb = reinterpret_cast<C*>(p[0]) + b * n;
      C* vb = vectors ? reinterpret_cast<C*>(p[1]) + b * n * n : nullptr;
      inf = all_finite(a, n * n) ? cpu::geev<T>(vectors, n, a, ldn, wb, vb, ldn) : kNonFiniteInfo;
      if (inf != 0) {
        const C nan(std::numeric_limits<R>::quiet_NaN(), std::numeric_limits<R>::quiet_NaN());
        for (std::int64_t i = 0; i < n; ++i) wb[i] = nan;
        if (vb != nullptr)
          for (std::int64_t i = 0; i < n * n; ++i) vb[i] = nan;
      } else if (vb != nullptr) {
        canonical_eigenvector_phases(n, vb, ldn);
      }
    });
  };
  record_kernel_n(run, {w.impl().get(), impl_of(V), info.impl().get()}, {A.impl().get()});
  return {w, V, info};
}

#define TENAX_CPU_SPECTRAL(T)                                                                                      \
  template std::tuple<Tensor<real_t<T>>, Tensor<T>, Tensor<std::int32_t>, Tensor<T>> CpuLinalg<T>::eigh(           \
      const Tensor<T>&, bool, bool, bool) const;                                                                   \
  template std::tuple<Tensor<T>, Tensor<real_t<T>>, Tensor<T>, Tensor<std::int32_t>, Tensor<T>> CpuLinalg<T>::svd( \
      const Tensor<T>&, bool, bool, bool) const;                                                                   \
  template std::tuple<Tensor<std::complex<real_t<T>>>, Tensor<std::complex<real_t<T>>>, Tensor<std::int32_t>>      \
  CpuLinalg<T>::eig(const Tensor<T>&, bool) const;
TENAX_CPU_LINALG_FOR_FLOATING(TENAX_CPU_SPECTRAL)

}  // namespace tenax::detail
