// The CPU's LU-based factorizations (ops/linalg/lu.hpp, solve.hpp, slogdet.hpp, det.hpp): each
// one kernel that a prepared program captures (kernels/capture.hpp). A matrix with a subnormal
// pivot is copied again and refactored (cpu::getrf_exact).
#include <limits>
#include <vector>

#include "cpu_linalg.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/slogdet.hpp"

namespace tenax::detail {

// A copied into LU, then getrf per matrix (a matrix with inf or NaN gets NaN factors and identity
// pivots).
template <class T>
std::tuple<Tensor<T>, Tensor<std::int32_t>, Tensor<std::int32_t>> CpuLinalg<T>::lu_factor(const Tensor<T>& A) const {
  const std::int64_t m = A.shape()[0], n = A.shape()[1], k = std::min(m, n), nb = detail::mat_batch_count(A.shape());
  Tensor<T> LU = Tensor<T>::empty(A.shape());
  const Shape ps = detail::with_batch(k, detail::mat_batch_shape(A.shape()));
  Tensor<std::int32_t> piv = Tensor<std::int32_t>::empty(ps);
  Tensor<std::int32_t> info = detail::info_tensor(A.shape());
  // One captured kernel: A copied into LU, then getrf per matrix (a matrix with inf or NaN
  // gets NaN factors and identity pivots).
  auto run = [copy = detail::copy_to_contiguous(A), m, n, k, nb](char* const* p) {
    copy(p[0], p[3]);
    std::int32_t* pv = reinterpret_cast<std::int32_t*>(p[1]);
    detail::Reload<T, decltype(copy)> reload(copy, p[3], nb, m * n);
    detail::for_each_matrix(reinterpret_cast<T*>(p[0]), m, n, nb, [&](T* lu, std::int64_t b) {
      std::int32_t& inf = reinterpret_cast<std::int32_t*>(p[2])[b];
      if (!detail::all_finite(lu, m * n)) {
        inf = detail::kNonFiniteInfo;
        detail::mark_nonfinite_lu(lu, m * n, pv + b * k, k);
      } else {
        inf = cpu::getrf_exact<T>(m, n, lu, std::max<std::int64_t>(1, m), pv + b * k, [&](T* a) { reload(a, b); });
      }
    });
  };
  detail::record_kernel_n(run, {LU.impl().get(), piv.impl().get(), info.impl().get()}, {A.impl().get()});
  return {LU, piv, info};
}

// A copied into whichever of L (m >= n) or U (m < n) has its shape, getrf there in place (a matrix
// with inf or NaN gets NaN factors and identity pivots), then the other triangle moved out and P
// written from the pivots.
template <class T>
std::tuple<Tensor<T>, Tensor<T>, Tensor<T>, Tensor<std::int32_t>, Tensor<std::int32_t>> CpuLinalg<T>::lu(
    const Tensor<T>& A) const {
  const std::int64_t m = A.shape()[0], n = A.shape()[1], k = std::min(m, n), nb = detail::mat_batch_count(A.shape());
  const Shape batch = detail::mat_batch_shape(A.shape());
  Tensor<T> P = Tensor<T>::empty(detail::with_batch(m, m, batch));
  Tensor<T> L = Tensor<T>::empty(detail::with_batch(m, k, batch));
  Tensor<T> U = Tensor<T>::empty(detail::with_batch(k, n, batch));
  const Shape ps = detail::with_batch(k, batch);
  Tensor<std::int32_t> piv = Tensor<std::int32_t>::empty(ps);
  Tensor<std::int32_t> info = detail::info_tensor(A.shape());
  // One captured kernel: A copied into whichever of L (m >= n) or U (m < n) has its shape, getrf
  // there in place (a matrix with inf or NaN gets NaN factors and identity pivots), then the other triangle
  // moved out and P written from the pivots.
  auto run = [copy = detail::copy_to_contiguous(A), m, n, k, nb](char* const* p) {
    const bool tall = m >= n;
    T* const Pp = reinterpret_cast<T*>(p[0]);
    T* const Lp = reinterpret_cast<T*>(p[1]);
    T* const Up = reinterpret_cast<T*>(p[2]);
    std::int32_t* const pv = reinterpret_cast<std::int32_t*>(p[3]);
    std::int32_t* const inf = reinterpret_cast<std::int32_t*>(p[4]);
    copy(reinterpret_cast<char*>(tall ? Lp : Up), p[5]);
    SmallVec<std::int64_t, 16> perm(static_cast<std::size_t>(m));  // (no allocation per run up to 16 rows)
    detail::Reload<T, decltype(copy)> reload(copy, p[5], nb, m * n);
    detail::for_each_matrix(tall ? Lp : Up, m, n, nb, [&](T* lu, std::int64_t b) {
      if (detail::all_finite(lu, m * n)) {
        inf[b] = cpu::getrf_exact<T>(m, n, lu, std::max<std::int64_t>(1, m), pv + b * k, [&](T* a) { reload(a, b); });
      } else {
        inf[b] = detail::kNonFiniteInfo;
        detail::mark_nonfinite_lu(lu, m * n, pv + b * k, k);
      }
      T* l = Lp + b * m * k;
      T* u = Up + b * k * n;
      for (std::int64_t j = 0; j < k; ++j) {  // the k x k block: split into L's and U's triangles
        for (std::int64_t i = 0; i < j; ++i) {
          if (tall) u[i + j * k] = l[i + j * m];
          l[i + j * m] = T(0);
        }
        if (tall) u[j + j * k] = l[j + j * m];
        l[j + j * m] = T(1);
        for (std::int64_t i = j + 1; i < k; ++i) {
          if (!tall) l[i + j * m] = u[i + j * k];
          u[i + j * k] = T(0);
        }
      }
      // P[perm[i], i] = 1 with (P^T A)[i, :] = A[perm[i], :].
      T* q = Pp + b * m * m;
      std::fill(q, q + m * m, T(0));
      detail::permutation_of_pivots(pv + b * k, k, m, perm.data());
      for (std::int64_t i = 0; i < m; ++i) q[perm[static_cast<std::size_t>(i)] + i * m] = T(1);
    });
  };
  detail::record_kernel_n(run, {P.impl().get(), L.impl().get(), U.impl().get(), piv.impl().get(), info.impl().get()},
                          {A.impl().get()});
  return {P, L, U, piv, info};
}

// A copied into LU and B (broadcast) into X, then getrf and getrs per matrix (a matrix with inf or
// NaN gets NaN factors, identity pivots and a NaN X).
template <class T>
std::tuple<Tensor<T>, Tensor<T>, Tensor<std::int32_t>, Tensor<std::int32_t>> CpuLinalg<T>::solve(
    const Tensor<T>& A, const Tensor<T>& B) const {
  const std::int64_t n = A.shape()[0], k = B.shape()[1];
  const Shape batch = detail::mat_batch_shape(A.shape());
  const std::int64_t nb = detail::mat_batch_count(A.shape());
  Tensor<T> LU = Tensor<T>::empty(A.shape());
  const Shape ps = detail::with_batch(n, batch);
  Tensor<std::int32_t> piv = Tensor<std::int32_t>::empty(ps);
  Tensor<std::int32_t> info = detail::info_tensor(A.shape());
  Tensor<T> X = Tensor<T>::empty(detail::with_batch(n, k, batch), B.device());
  // One captured kernel: A copied into LU and B (broadcast) into X, then getrf and getrs per
  // matrix (a matrix with inf or NaN gets NaN factors, identity pivots and a NaN X).
  auto run = [copy_a = detail::copy_to_contiguous(A), copy_b = detail::copy_to_contiguous(expand(B, X.shape())), n, k,
              nb](char* const* p) {
    copy_a(p[1], p[4]);
    copy_b(p[0], p[5]);
    std::int32_t* pv = reinterpret_cast<std::int32_t*>(p[2]);
    const std::int64_t ld = std::max<std::int64_t>(1, n);
    detail::Reload<T, decltype(copy_a)> reload(copy_a, p[4], nb, n * n);
    detail::for_each_matrix(reinterpret_cast<T*>(p[1]), n, n, nb, [&](T* lu, std::int64_t b) {
      std::int32_t& inf = reinterpret_cast<std::int32_t*>(p[3])[b];
      if (!detail::all_finite(lu, n * n)) {
        inf = detail::kNonFiniteInfo;
        detail::mark_nonfinite_lu(lu, n * n, pv + b * n, n);
      } else {
        inf = cpu::getrf_exact<T>(n, n, lu, ld, pv + b * n, [&](T* a) { reload(a, b); });
      }
      T* x = reinterpret_cast<T*>(p[0]) + b * n * k;
      if (inf == 0) {
        cpu::getrs<T>(cpu::Trans::N, n, k, lu, ld, pv + b * n, x, ld);
      } else {
        const T nan = T(std::numeric_limits<real_t<T>>::quiet_NaN());
        for (std::int64_t i = 0; i < n * k; ++i) x[i] = nan;
      }
    });
  };
  detail::record_kernel_n(run, {X.impl().get(), LU.impl().get(), piv.impl().get(), info.impl().get()},
                          {A.impl().get(), B.impl().get()});
  return {X, LU, piv, info};
}

// A copied into LU, then getrf per matrix and the determinant's sign and log-modulus from its
// diagonal and pivots.
template <class T>
std::tuple<Tensor<T>, Tensor<real_t<T>>, Tensor<T>, Tensor<std::int32_t>> CpuLinalg<T>::slogdet(
    const Tensor<T>& A) const {
  using R = real_t<T>;
  const std::int64_t n = A.shape()[0];
  const Shape batch = detail::mat_batch_shape(A.shape());
  const std::int64_t nb = detail::mat_batch_count(A.shape());
  Tensor<T> LU = Tensor<T>::empty(A.shape());
  const Shape ps = detail::with_batch(n, batch);
  Tensor<std::int32_t> piv = Tensor<std::int32_t>::empty(ps);
  Tensor<T> sign = Tensor<T>::empty(batch);
  Tensor<R> logabs = Tensor<R>::empty(batch);
  // One captured kernel: A copied into LU, then getrf per matrix and the determinant's sign and
  // log-modulus from its diagonal and pivots.
  auto run = [copy = detail::copy_to_contiguous(A), n, nb](char* const* p) {
    copy(p[2], p[4]);
    detail::lu_determinants(reinterpret_cast<T*>(p[2]), reinterpret_cast<std::int32_t*>(p[3]), n, nb,
                            detail::Reload<T, decltype(copy)>(copy, p[4], nb, n * n), [&](std::int64_t b, T s, R l, T) {
                              reinterpret_cast<T*>(p[0])[b] = s;
                              reinterpret_cast<R*>(p[1])[b] = l;
                            });
  };
  detail::record_kernel_n(run, {sign.impl().get(), logabs.impl().get(), LU.impl().get(), piv.impl().get()},
                          {A.impl().get()});
  return {sign, logabs, LU, piv};
}

// A copied into LU, then getrf per matrix and det as a scaled product (lu_determinants).
template <class T>
std::tuple<Tensor<T>, Tensor<T>, Tensor<std::int32_t>> CpuLinalg<T>::det(const Tensor<T>& A) const {
  using R = real_t<T>;
  const std::int64_t n = A.shape()[0], nb = detail::mat_batch_count(A.shape());
  const Shape batch = detail::mat_batch_shape(A.shape());
  Tensor<T> LU = Tensor<T>::empty(A.shape());
  const Shape ps = detail::with_batch(n, batch);
  Tensor<std::int32_t> piv = Tensor<std::int32_t>::empty(ps);
  Tensor<T> d = Tensor<T>::empty(batch);
  auto run = [copy = detail::copy_to_contiguous(A), n, nb](char* const* p) {
    copy(p[1], p[3]);
    detail::lu_determinants(reinterpret_cast<T*>(p[1]), reinterpret_cast<std::int32_t*>(p[2]), n, nb,
                            detail::Reload<T, decltype(copy)>(copy, p[3], nb, n * n),
                            [&](std::int64_t b, T, R, T d) { reinterpret_cast<T*>(p[0])[b] = d; });
  };
  detail::record_kernel_n(run, {d.impl().get(), LU.impl().get(), piv.impl().get()}, {A.impl().get()});
  return {d, LU, piv};
}

#define TENAX_CPU_LU(T)                                                                                                \
  template std::tuple<Tensor<T>, Tensor<std::int32_t>, Tensor<std::int32_t>> CpuLinalg<T>::lu_factor(const Tensor<T>&) \
      const;                                                                                                           \
  template std::tuple<Tensor<T>, Tensor<T>, Tensor<T>, Tensor<std::int32_t>, Tensor<std::int32_t>> CpuLinalg<T>::lu(   \
      const Tensor<T>&) const;                                                                                         \
  template std::tuple<Tensor<T>, Tensor<T>, Tensor<std::int32_t>, Tensor<std::int32_t>> CpuLinalg<T>::solve(           \
      const Tensor<T>&, const Tensor<T>&) const;                                                                       \
  template std::tuple<Tensor<T>, Tensor<real_t<T>>, Tensor<T>, Tensor<std::int32_t>> CpuLinalg<T>::slogdet(            \
      const Tensor<T>&) const;                                                                                         \
  template std::tuple<Tensor<T>, Tensor<T>, Tensor<std::int32_t>> CpuLinalg<T>::det(const Tensor<T>&) const;
TENAX_CPU_LINALG_FOR_FLOATING(TENAX_CPU_LU)

}  // namespace tenax::detail
