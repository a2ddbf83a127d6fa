#pragma once
// geev's output in the backend's convention (backend.hpp, BatchedLinalg::geev), on the host: real
// LAPACK-packed eigenvectors as complex ones, and each eigenvector's phase fixed. Shared by the CPU
// providers, the CPU backend and the CUDA backend (which reads cuSOLVER's output back to the host).
#include <cmath>
#include <complex>
#include <cstdint>

namespace tenax::detail {

// w[j] = wr[j] + i wi[j]; with vr (n x n, leading dimension n) the columns of V (leading dimension
// ldv): a real eigenvalue's column as is, and for a conjugate pair (wi[j] > 0, then wi[j + 1] < 0)
// v_j = vr_j + i vr_{j+1} and v_{j+1} = conj(v_j), LAPACK's packing.
template <class R>
void unpack_real_eigenvectors(std::int64_t n, const R* wr, const R* wi, const R* vr, std::complex<R>* w,
                              std::complex<R>* V, std::int64_t ldv) {
  for (std::int64_t j = 0; j < n; ++j) w[j] = {wr[j], wi[j]};
  if (vr == nullptr) return;
  for (std::int64_t j = 0; j < n; ++j) {
    std::complex<R>* v = V + j * ldv;
    const R* re = vr + j * n;
    if (wi[j] == R(0) || j + 1 == n) {
      for (std::int64_t i = 0; i < n; ++i) v[i] = {re[i], R(0)};
      continue;
    }
    const R* im = re + n;
    std::complex<R>* v2 = v + ldv;
    for (std::int64_t i = 0; i < n; ++i) {
      v[i] = {re[i], im[i]};
      v2[i] = {re[i], -im[i]};
    }
    ++j;
  }
}

// Each column of V (n x n, leading dimension ldv) multiplied by the phase that makes its first
// largest-modulus entry real and positive (the columns keep their 2-norm): the canonical form
// every backend returns, so eigenvectors agree across providers and devices.
template <class R>
void canonical_eigenvector_phases(std::int64_t n, std::complex<R>* V, std::int64_t ldv) {
  for (std::int64_t j = 0; j < n; ++j) {
    std::complex<R>* v = V + j * ldv;
    std::int64_t k = 0;
    R best = R(-1);
    for (std::int64_t i = 0; i < n; ++i) {
      const R a = std::abs(v[i]);
      if (a > best) best = a, k = i;
    }
    if (!(best > R(0)) || !std::isfinite(best)) continue;
    const std::complex<R> phase = std::conj(v[k]) / best;
    for (std::int64_t i = 0; i < n; ++i) v[i] *= phase;
    v[k] = {best, R(0)};
  }
}

}  // namespace tenax::detail
