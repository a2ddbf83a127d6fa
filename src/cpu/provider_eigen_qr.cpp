// The Eigen provider: geqrf and orgqr.
#include "eigen/common.hpp"

namespace tenax::cpu {
namespace {

// ---- Householder QR --------------------------------------------------------------------------

// dlapy3: sqrt(x^2 + y^2 + z^2) without overflow.
template <class R>
R lapy3(R x, R y, R z) {
  x = std::abs(x);
  y = std::abs(y);
  z = std::abs(z);
  const R w = std::max({x, y, z});
  if (w == R(0) || w > std::numeric_limits<R>::max()) return x + y + z;
  return w * std::sqrt((x / w) * (x / w) + (y / w) * (y / w) + (z / w) * (z / w));
}

// The 2-norm without harmful underflow or overflow (nrm2).
template <class T>
real_t<T> nrm2(const VMap<T>& x) {
  using R = real_t<T>;
  if (x.size() == 0) return R(0);
  const R s = x.squaredNorm();
  const R small = std::numeric_limits<R>::min() / std::numeric_limits<R>::epsilon() * R(x.size());
  if (std::isfinite(s) && s >= small) return std::sqrt(s);
  return x.stableNorm();
}

// larfg: H^H [alpha; x] = [beta; 0] with H = I - tau v v^H, v = [1; x'] and beta real,
// beta = -sign(Re alpha) * norm. Overwrites alpha with beta and x with x'; returns tau.
template <class T>
T larfg(T& alpha, VMap<T> x) {
  using R = real_t<T>;
  R xnorm = nrm2<T>(x);
  R alphr = Eigen::numext::real(alpha), alphi = Eigen::numext::imag(alpha);
  if (xnorm == R(0) && alphi == R(0)) return T(0);  // H = I
  R beta = -std::copysign(lapy3(alphr, alphi, xnorm), alphr);
  const R safmin = std::numeric_limits<R>::min() / (std::numeric_limits<R>::epsilon() / 2);
  int knt = 0;
  if (std::abs(beta) < safmin) {  // xnorm and beta may be inaccurate: scale x and recompute
    const R rsafmn = R(1) / safmin;
    do {
      ++knt;
      x *= T(rsafmn);
      beta *= rsafmn;
      alphr *= rsafmn;
      alphi *= rsafmn;
    } while (std::abs(beta) < safmin && knt < 20);
    xnorm = nrm2<T>(x);
    beta = -std::copysign(lapy3(alphr, alphi, xnorm), alphr);
  }
  T tau, a;
  if constexpr (is_complex_v<T>) {
    tau = T((beta - alphr) / beta, -alphi / beta);
    a = T(alphr, alphi);
  } else {
    tau = (beta - alphr) / beta;
    a = alphr;
  }
  if (x.size() > 0) x *= T(1) / (a - T(beta));
  for (int j = 0; j < knt; ++j) beta *= safmin;
  alpha = T(beta);
  return tau;
}

// larf from the left: C = (I - tau v v^H) C, v = [1; x] (x has len - 1 entries, C is len x nc).
template <class T>
void larf_left(Index len, Index nc, const T* x, T tau, T* C, Index ldc, T* work) {
  if (tau == T(0) || nc == 0) return;
  MMap<T> c = mmap(C, len, nc, ldc);
  Eigen::Map<RowVec<T>> w(work, nc);
  w = c.row(0);
  if (len > 1) {
    const CVMap<T> v(x, len - 1);
    w.noalias() += v.adjoint() * c.bottomRows(len - 1);
    w *= tau;
    c.row(0) -= w;
    c.bottomRows(len - 1).noalias() -= v * w;
  } else {
    w *= tau;
    c.row(0) -= w;
  }
}

// geqr2: unblocked QR of the m x n matrix at A; work holds n entries.
template <class T>
void geqr2(Index m, Index n, T* A, Index lda, T* tau, T* work) {
  const Index k = std::min(m, n);
  for (Index i = 0; i < k; ++i) {
    T* aii = A + i + i * lda;
    tau[i] = larfg(*aii, VMap<T>(aii + 1, m - i - 1));
    if (i + 1 < n) larf_left(m - i, n - i - 1, aii + 1, conj_of(tau[i]), aii + lda, lda, work);  // H^H
  }
}

// larft (forward, columnwise): V (len x ib, explicit unit lower, leading dim len) from the ib
// reflectors at A, and the upper triangular Tm (ib x ib) with H_0 ... H_{ib-1} = I - V Tm V^H.
template <class T>
void larft(Index len, Index ib, const T* A, Index lda, const T* tau, T* Vp, T* Tp) {
  MMap<T> v = mmap(Vp, len, ib, len);
  v = cmap(A, len, ib, lda).template triangularView<Eigen::StrictlyLower>();
  v.diagonal().setOnes();
  MMap<T> t = mmap(Tp, ib, ib, ib);
  t.setZero();
  for (Index j = 0; j < ib; ++j) {
    if (tau[j] == T(0)) continue;  // H_j = I: column j of Tm stays zero
    if (j > 0) {
      auto tj = t.col(j).head(j);
      tj.noalias() = (-tau[j]) * (v.leftCols(j).adjoint() * v.col(j));
      tj = t.topLeftCorner(j, j).template triangularView<Eigen::Upper>() * tj;
    }
    t(j, j) = tau[j];
  }
}

// larfb (left, forward, columnwise): C (len x nc) = H C, or H^H C when adjoint, H = I - V Tm V^H.
template <class T>
void larfb_left(bool adjoint, Index len, Index ib, const T* Vp, const T* Tp, T* C, Index ldc, Index nc, T* Wp) {
  if (nc == 0) return;
  const CMap<T> v = cmap(Vp, len, ib, len);
  const CMap<T> t = cmap(Tp, ib, ib, ib);
  MMap<T> c = mmap(C, len, nc, ldc);
  MMap<T> w = mmap(Wp, ib, nc, ib);
  w.noalias() = v.adjoint() * c;
  if (adjoint)
    w = t.template triangularView<Eigen::Upper>().adjoint() * w;
  else
    w = t.template triangularView<Eigen::Upper>() * w;
  c.noalias() -= v * w;
}

constexpr Index kQrBlock = 32;      // block size (LAPACK's nb)
constexpr Index kQrCrossover = 64;  // unblocked code below this many reflectors (LAPACK's nx)

template <class T>
int eigen_geqrf(std::int64_t m, std::int64_t n, T* A, std::int64_t lda, T* tau) {
  count_call(Routine::geqrf);
  if (m == 0 || n == 0) return 0;
  check_arg(m >= 0, "geqrf", 1);
  check_arg(n >= 0, "geqrf", 2);
  check_arg(ld_ok(lda, m), "geqrf", 4);
  const Index k = std::min(m, n);
  Workspace<T> work(n);
  Index i = 0;
  if (k > kQrCrossover && kQrBlock < k) {
    Workspace<T> vbuf(m * kQrBlock), tbuf(kQrBlock * kQrBlock), wbuf(kQrBlock * n);
    for (; i < k - kQrCrossover; i += kQrBlock) {
      const Index ib = std::min(k - i, kQrBlock);
      T* aii = A + i + i * lda;
      geqr2(m - i, ib, aii, lda, tau + i, work.data());
      if (i + ib < n) {  // apply H^H = (H_i ... H_{i+ib-1})^H to A(i:m, i+ib:n)
        larft(m - i, ib, aii, lda, tau + i, vbuf.data(), tbuf.data());
        larfb_left(true, m - i, ib, vbuf.data(), tbuf.data(), aii + ib * lda, lda, n - i - ib, wbuf.data());
      }
    }
  }
  if (i < k) geqr2(m - i, n - i, A + i + i * lda, lda, tau + i, work.data());
  return 0;
}

// org2r: the first n columns of H_0 ... H_{k-1} (m x n, m >= n >= k), in place; work holds n.
template <class T>
void org2r(Index m, Index n, Index k, T* A, Index lda, const T* tau, T* work) {
  MMap<T> a = mmap(A, m, n, lda);
  for (Index j = k; j < n; ++j) {
    a.col(j).setZero();
    a(j, j) = T(1);
  }
  for (Index i = k - 1; i >= 0; --i) {
    T* aii = A + i + i * lda;
    if (i + 1 < n) larf_left(m - i, n - i - 1, aii + 1, tau[i], aii + lda, lda, work);
    if (i + 1 < m) a.col(i).tail(m - i - 1) *= -tau[i];
    a(i, i) = T(1) - tau[i];
    a.col(i).head(i).setZero();
  }
}

template <class T>
int eigen_orgqr(std::int64_t m, std::int64_t n, std::int64_t k, T* A, std::int64_t lda, const T* tau) {
  count_call(Routine::orgqr);
  if (m == 0 || n == 0) return 0;
  check_arg(m >= 0, "orgqr", 1);
  check_arg(n >= 0 && n <= m, "orgqr", 2);
  check_arg(k >= 0 && k <= n, "orgqr", 3);
  check_arg(ld_ok(lda, m), "orgqr", 5);
  Workspace<T> work(n);
  if (k <= kQrCrossover || k <= kQrBlock) {
    org2r<T>(m, n, k, A, lda, tau, work.data());
    return 0;
  }
  // Blocks [ki, kk), [ki - nb, ki), ..., [0, nb) blocked; reflectors kk..k-1 and columns kk..n
  // unblocked first.
  const Index ki = ((k - kQrCrossover - 1) / kQrBlock) * kQrBlock;
  const Index kk = std::min<Index>(k, ki + kQrBlock);
  MMap<T> a = mmap(A, m, n, lda);
  a.topRightCorner(kk, n - kk).setZero();
  if (kk < n) org2r<T>(m - kk, n - kk, k - kk, A + kk + kk * lda, lda, tau + kk, work.data());
  Workspace<T> vbuf(m * kQrBlock), tbuf(kQrBlock * kQrBlock), wbuf(kQrBlock * n);
  for (Index i = ki; i >= 0; i -= kQrBlock) {
    const Index ib = std::min(kQrBlock, k - i);
    T* aii = A + i + i * lda;
    if (i + ib < n) {  // apply H = H_i ... H_{i+ib-1} to A(i:m, i+ib:n)
      larft(m - i, ib, aii, lda, tau + i, vbuf.data(), tbuf.data());
      larfb_left(false, m - i, ib, vbuf.data(), tbuf.data(), aii + ib * lda, lda, n - i - ib, wbuf.data());
    }
    org2r<T>(m - i, ib, ib, aii, lda, tau + i, work.data());
    a.block(0, i, i, ib).setZero();
  }
  return 0;
}

}  // namespace

template <>
int geqrf<float>(std::int64_t m, std::int64_t n, float* A, std::int64_t lda, float* tau) {
  return eigen_geqrf<float>(m, n, A, lda, tau);
}
template <>
int orgqr<float>(std::int64_t m, std::int64_t n, std::int64_t k, float* A, std::int64_t lda, const float* tau) {
  return eigen_orgqr<float>(m, n, k, A, lda, tau);
}
template <>
int geqrf<double>(std::int64_t m, std::int64_t n, double* A, std::int64_t lda, double* tau) {
  return eigen_geqrf<double>(m, n, A, lda, tau);
}
template <>
int orgqr<double>(std::int64_t m, std::int64_t n, std::int64_t k, double* A, std::int64_t lda, const double* tau) {
  return eigen_orgqr<double>(m, n, k, A, lda, tau);
}
template <>
int geqrf<std::complex<float>>(std::int64_t m, std::int64_t n, std::complex<float>* A, std::int64_t lda,
                               std::complex<float>* tau) {
  return eigen_geqrf<std::complex<float>>(m, n, A, lda, tau);
}
template <>
int orgqr<std::complex<float>>(std::int64_t m, std::int64_t n, std::int64_t k, std::complex<float>* A, std::int64_t lda,
                               const std::complex<float>* tau) {
  return eigen_orgqr<std::complex<float>>(m, n, k, A, lda, tau);
}
template <>
int geqrf<std::complex<double>>(std::int64_t m, std::int64_t n, std::complex<double>* A, std::int64_t lda,
                                std::complex<double>* tau) {
  return eigen_geqrf<std::complex<double>>(m, n, A, lda, tau);
}
template <>
int orgqr<std::complex<double>>(std::int64_t m, std::int64_t n, std::int64_t k, std::complex<double>* A,
                                std::int64_t lda, const std::complex<double>* tau) {
  return eigen_orgqr<std::complex<double>>(m, n, k, A, lda, tau);
}

}  // namespace tenax::cpu
