// The CPU's pinv and lstsq forward (ops/linalg/pinv.hpp, lstsq.hpp): one fused kernel, which a
// prepared program captures (kernels/capture.hpp). Per matrix: gesdd's thin SVD, the tolerance,
// P = (V S^+) U^H and X = P B, with the products, elementwise steps and gemm flags of
// generic::pinv (backend/generic_linalg.hpp: the SVD op and tensor ops), so the two give the same
// bits (test_linalg_generic). A failed SVD raises the LinAlgError of raise_info.
#include <algorithm>
#include <array>
#include <complex>
#include <cstdint>

#include "cpu_linalg.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/info_check.hpp"
#include "tenax/ops/linalg/svd.hpp"

namespace tenax::detail {
namespace {

// P = (V diag(s^+)) U^H of one matrix from its thin SVD (u m x k, s, vt k x n), s^+ the reciprocals
// of the values above max(atol, rtol s_max) and 0 for the others; vs (n x k) and uh (k x m, complex
// only) are scratch.
template <class T>
void pinv_from_factors(std::int64_t m, std::int64_t n, const T* u, const real_t<T>* s, const T* vt, double atol,
                       double rtol, T* vs, T* uh, T* p) {
  using R = real_t<T>;
  const std::int64_t k = std::min(m, n);
  if (k == 0) {
    std::fill_n(p, n * m, T(0));
    return;
  }
  R smax = s[0];
  for (std::int64_t j = 1; j < k; ++j) smax = fn::Maximum{}(smax, s[j]);
  const R cut = fn::Maximum{}(smax * static_cast<R>(rtol), static_cast<R>(atol));
  for (std::int64_t j = 0; j < k; ++j) {
    const R sinv = fn::Gt{}(s[j], cut) ? fn::RDivScalar<R>{R(1)}(s[j]) : R(0);
    for (std::int64_t i = 0; i < n; ++i) vs[i + j * n] = fn::conj_of(vt[j + i * k]) * static_cast<T>(sinv);
  }
  if constexpr (is_complex_v<T>) {
    for (std::int64_t j = 0; j < m; ++j)
      for (std::int64_t i = 0; i < k; ++i) uh[i + j * k] = fn::conj_of(u[j + i * m]);
    cpu::gemm<T>(cpu::Trans::N, cpu::Trans::N, n, m, k, T(1), vs, n, uh, k, T(0), p, n);
  } else {
    (void)uh;
    cpu::gemm<T>(cpu::Trans::N, cpu::Trans::T, n, m, k, T(1), vs, n, u, m, T(0), p, n);
  }
}

}  // namespace

// A copied into scratch and B (broadcast to A's batch) into scratch; per matrix gesdd, P and X;
// then the SVDs' info checked as raise_info does.
template <class T>
std::tuple<Tensor<T>, Tensor<real_t<T>>, Tensor<T>> CpuLinalg<T>::pinv(const char* op, const Tensor<T>& A,
                                                                       const Tensor<T>& B, double atol,
                                                                       double rtol) const {
  const std::int64_t m = A.shape()[0], n = A.shape()[1], k = std::min(m, n), nb = mat_batch_count(A.shape());
  const Shape batch = mat_batch_shape(A.shape());
  const std::int64_t kb = B.defined() ? B.shape()[1] : 0;
  Tensor<T> P = Tensor<T>::empty(with_batch(n, m, batch));
  Tensor<R> S = Tensor<R>::empty(with_batch(k, batch));
  Tensor<T> X = B.defined() ? Tensor<T>::empty(with_batch(n, kb, batch)) : Tensor<T>();
  if (nb == 0) return {P, S, X};
  using Copy = std::function<void(char*, char*)>;
  const Shape b_shape = with_batch(m, kb, batch);
  // The kernel writes the op's outputs in the op's order: lstsq's (X, P, S), pinv's (P, S); q
  // holds the positions of P, S, X and then A, B in a call's pointers.
  auto run = [copy_a = copy_to_contiguous(A),
              copy_b = B.defined() ? Copy(copy_to_contiguous(expand(B, b_shape))) : Copy(),
              work = Scratch<T>(A.shape()), u = Scratch<T>({std::max<std::int64_t>(1, m * k * nb)}),
              vt = Scratch<T>({std::max<std::int64_t>(1, k * n * nb)}),
              vs = Scratch<T>({std::max<std::int64_t>(1, n * k * nb)}),
              uh = Scratch<T>({is_complex_v<T> ? std::max<std::int64_t>(1, k * m * nb) : 1}),
              bc = Scratch<T>({std::max<std::int64_t>(1, m * kb * nb)}), info = Scratch<std::int32_t>({nb}),
              check = ops::InfoCheck{op, A.shape(), linalg::detail_svd::failure, false, dtype_traits<T>::name},
              q = B.defined() ? std::array<int, 5>{1, 2, 0, 3, 4} : std::array<int, 5>{0, 1, -1, 2, -1}, m, n, k, kb,
              nb, atol, rtol](char* const* p) {
    copy_a(reinterpret_cast<char*>(work.get()), p[q[3]]);
    if (copy_b) copy_b(reinterpret_cast<char*>(bc.get()), p[q[4]]);
    for_each_matrix_parallel(work.get(), m, n, nb, [&](T* a, std::int64_t b) {
      std::int32_t& inf = info.get()[b];
      R* s = reinterpret_cast<R*>(p[q[1]]) + b * k;
      T *ub = u.get() + b * m * k, *vb = vt.get() + b * k * n;
      inf = k == 0                 ? 0
            : all_finite(a, m * n) ? cpu::gesdd<T>('S', m, n, a, std::max<std::int64_t>(1, m), s, ub,
                                                   std::max<std::int64_t>(1, m), vb, std::max<std::int64_t>(1, k))
                                   : kNonFiniteInfo;
      if (inf != 0) return;
      T* pb = reinterpret_cast<T*>(p[q[0]]) + b * n * m;
      pinv_from_factors(m, n, ub, s, vb, atol, rtol, vs.get() + b * n * k, uh.get() + (is_complex_v<T> ? b * k * m : 0),
                        pb);
      if (copy_b) {
        T* xb = reinterpret_cast<T*>(p[q[2]]) + b * n * kb;
        if (m == 0)
          std::fill_n(xb, n * kb, T(0));
        else
          cpu::gemm<T>(cpu::Trans::N, cpu::Trans::N, n, kb, m, T(1), pb, std::max<std::int64_t>(1, n),
                       bc.get() + b * m * kb, m, T(0), xb, std::max<std::int64_t>(1, n));
      }
    });
    check.check(info.get(), nb, Device::cpu());
  };
  if (B.defined())
    record_kernel_n(run, {X.impl().get(), P.impl().get(), S.impl().get()}, {A.impl().get(), B.impl().get()});
  else
    record_kernel_n(run, {P.impl().get(), S.impl().get()}, {A.impl().get()});
  return {P, S, X};
}

#define TENAX_CPU_PINV(T)                                                          \
  template std::tuple<Tensor<T>, Tensor<real_t<T>>, Tensor<T>> CpuLinalg<T>::pinv( \
      const char*, const Tensor<T>&, const Tensor<T>&, double, double) const;
TENAX_CPU_LINALG_FOR_FLOATING(TENAX_CPU_PINV)

}  // namespace tenax::detail
