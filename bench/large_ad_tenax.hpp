#pragma once
// The tenax side of the large_ad cases, shared by the suites that reuse them (large_ad.cpp,
// jvp_vjp.cpp): conversions between the row-major plain vectors of large_ad_cases.hpp and tenax
// tensors, the losses, the provider floors of forward + loss + backward (reverse mode), and the
// provider-call counters of a row. Compiled only into tenax-side translation units (C++20).
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "large_ad_cases.hpp"
#include "tenax/backend/cpu_provider.hpp"
#include "tenax/linalg.hpp"
#include "tenax/tenax.hpp"

namespace tenax_bench::large_ad {

using tenax::Tensor;
namespace cpu = tenax::cpu;
using cpu::Diag;
using cpu::Side;
using cpu::Trans;
using cpu::Uplo;

// ---- conversions ---------------------------------------------------------------------------------

inline Tensor<double> to_tensor(const std::vector<double>& rm, int rows, int cols) {
  return Tensor<double>::from_row_major({rows, cols}, rm);
}

inline std::vector<double> to_row_major(const Tensor<double>& t) {
  const std::int64_t rows = t.shape()[0], cols = t.dim() > 1 ? t.shape()[1] : 1;
  const std::vector<double> cm = t.to_vector();  // column-major
  std::vector<double> rm(cm.size());
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) rm[i * cols + j] = cm[j * rows + i];
  return rm;
}

// Column-major copy of a row-major rows x cols matrix.
inline std::vector<double> col_major(const std::vector<double>& rm, int rows, int cols) {
  std::vector<double> cm(rm.size());
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      cm[static_cast<std::size_t>(j) * rows + i] = rm[static_cast<std::size_t>(i) * cols + j];
  return cm;
}

inline std::vector<double> row_major(const double* cm, int rows, int cols) {
  std::vector<double> rm(static_cast<std::size_t>(rows) * cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      rm[static_cast<std::size_t>(i) * cols + j] = cm[static_cast<std::size_t>(j) * rows + i];
  return rm;
}

// sum(V) with each column's sign chosen so that its first largest-magnitude entry is positive
// (the canonical gauge of eigh(..., canonical_gauge = true)); V contiguous n x n column-major.
inline double canonical_sum(const double* v, std::int64_t n) {
  double s = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    const double* c = v + j * n;
    std::int64_t k = 0;
    double col = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      if (std::abs(c[i]) > std::abs(c[k])) k = i;
      col += c[i];
    }
    s += c[k] < 0 ? -col : col;
  }
  return s;
}

inline double total(const Tensor<double>& t) { return tenax::sum(t).item(); }

// ---- the tenax side of each case -----------------------------------------------------------------

// The loss (recorded when an input requires grad and recording is on).
inline Tensor<double> loss_of(Case c, const Tensor<double>& A, const Tensor<double>& B) {
  namespace la = tenax::linalg;
  switch (c) {
    case Case::matmul:
      return tenax::sum(tenax::matmul(A, B));
    case Case::solve:
      return tenax::sum(la::solve(A, B));
    case Case::qr: {
      auto [Q, R] = la::qr(A);
      return tenax::add(tenax::sum(Q), tenax::sum(R));
    }
    case Case::eigh: {
      auto [w, V] = la::eigh(A, false, la::Degeneracy{}, /*canonical_gauge=*/true);
      return tenax::add(tenax::sum(w), tenax::sum(V));
    }
    case Case::eigvalsh:
      return tenax::sum(la::eigvalsh(A));
    case Case::svdvals:
      return tenax::sum(la::svdvals(A));
    case Case::lu: {
      auto [P, L, U] = la::lu(A);
      return tenax::add(tenax::sum(L), tenax::sum(U));
    }
    case Case::cholesky:
      return tenax::sum(la::cholesky(A));
    case Case::lstsq:
      return tenax::sum(la::lstsq(A, B).solution);
    case Case::eigvals:
      return tenax::sum(tenax::real(la::eigvals(A)));
    case Case::matrix_exp:
      return tenax::sum(la::matrix_exp(A));
  }
  return {};
}

// ---- floors --------------------------------------------------------------------------------------

// A raw buffer of doubles from tenax's pooled CPU allocator.
class Buf {
 public:
  explicit Buf(std::size_t count)
      : bytes_(std::max<std::size_t>(count, 1) * sizeof(double)),
        p_(static_cast<double*>(tenax::detail::cpu_allocator().allocate(bytes_))) {}
  Buf(std::size_t count, double fill) : Buf(count) { std::fill(p_, p_ + bytes_ / sizeof(double), fill); }
  ~Buf() {
    if (p_) tenax::detail::cpu_allocator().deallocate(p_, bytes_);
  }
  Buf(Buf&& o) noexcept : bytes_(o.bytes_), p_(std::exchange(o.p_, nullptr)) {}
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  Buf& operator=(Buf&&) = delete;
  double* get() const { return p_; }
  operator double*() const { return p_; }

 private:
  std::size_t bytes_;
  double* p_;
};

class IntBuf {
 public:
  explicit IntBuf(std::size_t count)
      : bytes_(std::max<std::size_t>(count, 1) * sizeof(std::int32_t)),
        p_(static_cast<std::int32_t*>(tenax::detail::cpu_allocator().allocate(bytes_))) {}
  ~IntBuf() { tenax::detail::cpu_allocator().deallocate(p_, bytes_); }
  IntBuf(const IntBuf&) = delete;
  IntBuf& operator=(const IntBuf&) = delete;
  operator std::int32_t*() const { return p_; }

 private:
  std::size_t bytes_;
  std::int32_t* p_;
};

// Eigenvector columns in the canonical gauge: each column's first entry of largest magnitude made
// positive (what tenax's eigh does).
inline void canonical_gauge(double* V, int n) {
  for (int j = 0; j < n; ++j) {
    double* c = V + static_cast<std::size_t>(j) * n;
    int k = 0;
    for (int i = 1; i < n; ++i)
      if (std::abs(c[i]) > std::abs(c[k])) k = i;
    if (c[k] < 0)
      for (int i = 0; i < n; ++i) c[i] = -c[i];
  }
}

inline double sum_of(const double* p, std::size_t count) {
  double s = 0;
  for (std::size_t i = 0; i < count; ++i) s += p[i];
  return s;
}

inline void expect_ok(int info, const char* what) {
  if (info != 0) throw std::runtime_error(std::string("floor: ") + what + " returned info " + std::to_string(info));
}

// A floor: run() is the timed region (forward, loss, backward); grad() reads the result after a
// run(). All matrices column-major, leading dimension n.
class Floor {
 public:
  explicit Floor(int n) : n_(n), nn_(static_cast<std::size_t>(n) * n) {}
  virtual ~Floor() = default;
  virtual void run() = 0;
  virtual Grad grad() const = 0;

 protected:
  void load(double* dst, const Buf& src, std::size_t count) const {
    std::memcpy(dst, src.get(), count * sizeof(double));
  }
  Buf input(const std::vector<double>& rm, int cols) const {
    Buf b(static_cast<std::size_t>(n_) * cols);
    const std::vector<double> cm = col_major(rm, n_, cols);
    std::memcpy(b.get(), cm.data(), cm.size() * sizeof(double));
    return b;
  }
  const int n_;
  const std::size_t nn_;
  double loss_ = 0;
};

// matmul: C = A B (gemm); gA = G B^T (gemm); gB = A^T G (gemm); G = ones. 3 gemm.
class MatmulFloor final : public Floor {
 public:
  explicit MatmulFloor(const Inputs& in)
      : Floor(in.n), A_(input(in.a, in.n)), B_(input(in.b, in.n)), C_(nn_), G_(nn_, 1.0), gA_(nn_), gB_(nn_) {}
  void run() override {
    const int n = n_;
    cpu::gemm<double>(Trans::N, Trans::N, n, n, n, 1, A_, n, B_, n, 0, C_, n);
    loss_ = sum_of(C_, nn_);
    cpu::gemm<double>(Trans::N, Trans::T, n, n, n, 1, G_, n, B_, n, 0, gA_, n);
    cpu::gemm<double>(Trans::T, Trans::N, n, n, n, 1, A_, n, G_, n, 0, gB_, n);
  }
  Grad grad() const override { return {loss_, row_major(gA_, n_, n_), row_major(gB_, n_, n_)}; }

 private:
  Buf A_, B_, C_, G_, gA_, gB_;
};

// solve: LU = A (copy); getrf; x = b (copy); getrs('N'); loss = sum(x); gb = ones; getrs('T')
// (gb = A^-T 1); gA = -gb x^T (gemm with k = 1). getrf + getrs + getrs('T') + 1 rank-1 gemm.
class SolveFloor final : public Floor {
 public:
  explicit SolveFloor(const Inputs& in)
      : Floor(in.n), A_(input(in.a, in.n)), b_(input(in.b, 1)), LU_(nn_), piv_(in.n), x_(in.n), gb_(in.n), gA_(nn_) {}
  void run() override {
    const int n = n_;
    load(LU_, A_, nn_);
    expect_ok(cpu::getrf<double>(n, n, LU_, n, piv_), "getrf");
    load(x_, b_, n);
    cpu::getrs<double>(Trans::N, n, 1, LU_, n, piv_, x_, n);
    loss_ = sum_of(x_, n);
    std::fill(gb_.get(), gb_.get() + n, 1.0);
    cpu::getrs<double>(Trans::T, n, 1, LU_, n, piv_, gb_, n);
    cpu::gemm<double>(Trans::N, Trans::T, n, n, 1, -1, gb_, n, x_, n, 0, gA_, n);
  }
  Grad grad() const override { return {loss_, row_major(gA_, n_, n_), row_major(gb_, n_, 1)}; }

 private:
  Buf A_, b_, LU_;
  IntBuf piv_;
  Buf x_, gb_, gA_;
};

// qr (reduced, m = n): W = A (copy); geqrf; R = triu(W) (copy); Q = W (copy); orgqr;
// loss = sum(Q) + sum(R); with gQ = gR = ones:
//   Wm = R gR^T (gemm) - gQ^T Q (gemm);  M = copyltu(Wm) (elementwise);
//   gA = (gQ + Q M) R^-T  (gemm, then trsm right/upper/T).
// geqrf + orgqr + 3 gemm + 1 trsm.
class QrFloor final : public Floor {
 public:
  explicit QrFloor(const Inputs& in)
      : Floor(in.n),
        A_(input(in.a, in.n)),
        W_(nn_),
        tau_(in.n),
        Q_(nn_),
        R_(nn_),
        G_(nn_, 1.0),
        Wm_(nn_),
        M_(nn_),
        gA_(nn_) {}
  void run() override {
    const int n = n_;
    load(W_, A_, nn_);
    expect_ok(cpu::geqrf<double>(n, n, W_, n, tau_), "geqrf");
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) R_[i + j * n] = i <= j ? W_[i + j * n] : 0.0;
    std::memcpy(Q_.get(), W_.get(), nn_ * sizeof(double));
    expect_ok(cpu::orgqr<double>(n, n, n, Q_, n, tau_), "orgqr");
    loss_ = sum_of(Q_, nn_) + sum_of(R_, nn_);
    cpu::gemm<double>(Trans::N, Trans::T, n, n, n, 1, R_, n, G_, n, 0, Wm_, n);
    cpu::gemm<double>(Trans::T, Trans::N, n, n, n, -1, G_, n, Q_, n, 1, Wm_, n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) M_[i + j * n] = i >= j ? Wm_[i + j * n] : Wm_[j + i * n];
    std::memcpy(gA_.get(), G_.get(), nn_ * sizeof(double));
    cpu::gemm<double>(Trans::N, Trans::N, n, n, n, 1, Q_, n, M_, n, 1, gA_, n);
    cpu::trsm<double>(Side::Right, Uplo::Upper, Trans::T, Diag::NonUnit, n, n, 1, R_, n, gA_, n);
  }
  Grad grad() const override { return {loss_, row_major(gA_, n_, n_), {}}; }

 private:
  Buf A_, W_, tau_, Q_, R_, G_, Wm_, M_, gA_;
};

// eigh (canonical gauge): V = A (copy); syevd('V', lower); column signs made canonical (first
// largest-magnitude entry positive); loss = sum(w) + sum(V); with gw = gV = ones:
//   K = V^T gV (gemm);  Mid = diag(gw) + F o (K - K^T)/2, F_ij = 1/(w_j - w_i) (elementwise);
//   gA = V (Mid V^T)  (2 gemm).
// syevd('V') + 3 gemm.
class EighFloor final : public Floor {
 public:
  explicit EighFloor(const Inputs& in)
      : Floor(in.n), A_(input(in.a, in.n)), V_(nn_), w_(in.n), G_(nn_, 1.0), K_(nn_), Mid_(nn_), T1_(nn_), gA_(nn_) {}
  void run() override {
    const int n = n_;
    load(V_, A_, nn_);
    expect_ok(cpu::syevd<double>(true, Uplo::Lower, n, V_, n, w_), "syevd");
    canonical_gauge(V_, n);
    loss_ = sum_of(w_, n) + sum_of(V_, nn_);
    cpu::gemm<double>(Trans::T, Trans::N, n, n, n, 1, V_, n, G_, n, 0, K_, n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        Mid_[i + j * n] = i == j ? 1.0 : 0.5 * (K_[i + j * n] - K_[j + i * n]) / (w_[j] - w_[i]);
    cpu::gemm<double>(Trans::N, Trans::T, n, n, n, 1, Mid_, n, V_, n, 0, T1_, n);
    cpu::gemm<double>(Trans::N, Trans::N, n, n, n, 1, V_, n, T1_, n, 0, gA_, n);
  }
  Grad grad() const override { return {loss_, row_major(gA_, n_, n_), {}}; }

 private:
  Buf A_, V_, w_, G_, K_, Mid_, T1_, gA_;
};

// eigvalsh: V = A (copy); syevd('V', lower) (the vectors are needed by the rule); loss = sum(w);
// gA = V (diag(gw) V^T) (2 gemm, diag(gw) = I prepared outside the timing).
// syevd('V') + 2 gemm.
class EigvalshFloor final : public Floor {
 public:
  explicit EigvalshFloor(const Inputs& in)
      : Floor(in.n), A_(input(in.a, in.n)), V_(nn_), w_(in.n), Mid_(nn_, 0.0), T1_(nn_), gA_(nn_) {
    for (int i = 0; i < n_; ++i) Mid_[i + static_cast<std::size_t>(i) * n_] = 1.0;
  }
  void run() override {
    const int n = n_;
    load(V_, A_, nn_);
    expect_ok(cpu::syevd<double>(true, Uplo::Lower, n, V_, n, w_), "syevd");
    loss_ = sum_of(w_, n);
    cpu::gemm<double>(Trans::N, Trans::T, n, n, n, 1, Mid_, n, V_, n, 0, T1_, n);
    cpu::gemm<double>(Trans::N, Trans::N, n, n, n, 1, V_, n, T1_, n, 0, gA_, n);
  }
  Grad grad() const override { return {loss_, row_major(gA_, n_, n_), {}}; }

 private:
  Buf A_, V_, w_, Mid_, T1_, gA_;
};

// svdvals: W = A (copy); gesdd('S') (U and V^T are needed by the rule); loss = sum(s);
// gA = U (diag(gs) V^T) (2 gemm, diag(gs) = I prepared outside the timing).
// gesdd('S') + 2 gemm.
class SvdvalsFloor final : public Floor {
 public:
  explicit SvdvalsFloor(const Inputs& in)
      : Floor(in.n), A_(input(in.a, in.n)), W_(nn_), s_(in.n), U_(nn_), VT_(nn_), Mid_(nn_, 0.0), T1_(nn_), gA_(nn_) {
    for (int i = 0; i < n_; ++i) Mid_[i + static_cast<std::size_t>(i) * n_] = 1.0;
  }
  void run() override {
    const int n = n_;
    load(W_, A_, nn_);
    expect_ok(cpu::gesdd<double>('S', n, n, W_, n, s_, U_, n, VT_, n), "gesdd");
    loss_ = sum_of(s_, n);
    cpu::gemm<double>(Trans::N, Trans::N, n, n, n, 1, Mid_, n, VT_, n, 0, T1_, n);
    cpu::gemm<double>(Trans::N, Trans::N, n, n, n, 1, U_, n, T1_, n, 0, gA_, n);
  }
  Grad grad() const override { return {loss_, row_major(gA_, n_, n_), {}}; }

 private:
  Buf A_, W_, s_, U_, VT_, Mid_, T1_, gA_;
};

// lu: LU = A (copy); getrf; loss = sum(L) + sum(U); L (unit lower) and U unpacked into dense
// buffers (elementwise); with gL = tril(ones, -1), gU = triu(ones) (the cotangents reaching the
// packed LU, prepared outside the timing):
//   M = tril(L^T gL, -1) + triu(gU U^T)  (2 gemm);  P^T gA = L^-T (M U^-T)  (2 trsm);
//   gA = P (P^T gA) (row interchanges in reverse order).
// getrf + 2 gemm + 2 trsm.
class LuFloor final : public Floor {
 public:
  explicit LuFloor(const Inputs& in)
      : Floor(in.n),
        A_(input(in.a, in.n)),
        LU_(nn_),
        piv_(in.n),
        L_(nn_),
        U_(nn_),
        GL_(nn_),
        GU_(nn_),
        M1_(nn_),
        M2_(nn_),
        gA_(nn_) {
    for (int j = 0; j < n_; ++j)
      for (int i = 0; i < n_; ++i) {
        GL_[i + static_cast<std::size_t>(j) * n_] = i > j ? 1.0 : 0.0;
        GU_[i + static_cast<std::size_t>(j) * n_] = i <= j ? 1.0 : 0.0;
      }
  }
  void run() override {
    const int n = n_;
    load(LU_, A_, nn_);
    expect_ok(cpu::getrf<double>(n, n, LU_, n, piv_), "getrf");
    double s = n;  // the unit diagonal of L
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const double v = LU_[i + j * n];
        s += v;
        L_[i + j * n] = i > j ? v : i == j ? 1.0 : 0.0;
        U_[i + j * n] = i <= j ? v : 0.0;
      }
    loss_ = s;
    cpu::gemm<double>(Trans::T, Trans::N, n, n, n, 1, L_, n, GL_, n, 0, M1_, n);
    cpu::gemm<double>(Trans::N, Trans::T, n, n, n, 1, GU_, n, U_, n, 0, M2_, n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) gA_[i + j * n] = i > j ? M1_[i + j * n] : M2_[i + j * n];
    cpu::trsm<double>(Side::Right, Uplo::Upper, Trans::T, Diag::NonUnit, n, n, 1, LU_, n, gA_, n);
    cpu::trsm<double>(Side::Left, Uplo::Lower, Trans::T, Diag::Unit, n, n, 1, LU_, n, gA_, n);
    const std::int32_t* piv = piv_;
    for (int i = n - 1; i >= 0; --i) {
      const int p = piv[i] - 1;
      if (p != i)
        for (int j = 0; j < n; ++j) std::swap(gA_[i + j * n], gA_[p + j * n]);
    }
  }
  Grad grad() const override { return {loss_, row_major(gA_, n_, n_), {}}; }

 private:
  Buf A_, LU_;
  IntBuf piv_;
  Buf L_, U_, GL_, GU_, M1_, M2_, gA_;
};

// cholesky: L = A (copy); potrf('L'); upper triangle zeroed; loss = sum(L); with gL = ones:
//   X = tril(L^T tril(gL)) (gemm; tril(gL) prepared outside the timing);
//   Mid = (X + X^T)/2 - diag(X)/2 (elementwise);  gA = L^-T Mid L^-1  (2 trsm).
// potrf + 1 gemm + 2 trsm.
class CholeskyFloor final : public Floor {
 public:
  explicit CholeskyFloor(const Inputs& in) : Floor(in.n), A_(input(in.a, in.n)), L_(nn_), GT_(nn_), X_(nn_), gA_(nn_) {
    for (int j = 0; j < n_; ++j)
      for (int i = 0; i < n_; ++i) GT_[i + static_cast<std::size_t>(j) * n_] = i >= j ? 1.0 : 0.0;
  }
  void run() override {
    const int n = n_;
    load(L_, A_, nn_);
    expect_ok(cpu::potrf<double>(Uplo::Lower, n, L_, n), "potrf");
    for (int j = 1; j < n; ++j)
      for (int i = 0; i < j; ++i) L_[i + j * n] = 0.0;
    loss_ = sum_of(L_, nn_);
    cpu::gemm<double>(Trans::T, Trans::N, n, n, n, 1, L_, n, GT_, n, 0, X_, n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) gA_[i + j * n] = 0.5 * (i >= j ? X_[i + j * n] : X_[j + i * n]);
    cpu::trsm<double>(Side::Left, Uplo::Lower, Trans::T, Diag::NonUnit, n, n, 1, L_, n, gA_, n);
    cpu::trsm<double>(Side::Right, Uplo::Lower, Trans::N, Diag::NonUnit, n, n, 1, L_, n, gA_, n);
  }
  Grad grad() const override { return {loss_, row_major(gA_, n_, n_), {}}; }

 private:
  Buf A_, L_, GT_, X_, gA_;
};

// The pseudo-inverse of a square n x n matrix through its thin SVD (A copied, gesdd('S')), applied
// to vectors: A^+ y = V (S^-1 (U^T y)) and A^+T y = U (S^-1 (V^T y)) (two matrix-vector gemm each).
class SvdPinv {
 public:
  explicit SvdPinv(int n) : n_(n), nn_(static_cast<std::size_t>(n) * n), W_(nn_), s_(n), U_(nn_), VT_(nn_), t_(n) {}
  void factor(const double* A) {
    std::memcpy(W_.get(), A, nn_ * sizeof(double));
    expect_ok(cpu::gesdd<double>('S', n_, n_, W_, n_, s_, U_, n_, VT_, n_), "gesdd");
  }
  void apply(const double* y, double* out) const { product(U_, VT_, Trans::T, Trans::T, y, out); }
  void apply_t(const double* y, double* out) const { product(VT_, U_, Trans::N, Trans::N, y, out); }

 private:
  void product(const double* first, const double* second, Trans t1, Trans t2, const double* y, double* out) const {
    const int n = n_;
    cpu::gemm<double>(t1, Trans::N, n, 1, n, 1, first, n, y, n, 0, t_, n);
    for (int i = 0; i < n; ++i) t_[i] /= s_[i];
    cpu::gemm<double>(t2, Trans::N, n, 1, n, 1, second, n, t_, n, 0, out, n);
  }
  int n_;
  std::size_t nn_;
  Buf W_, s_, U_, VT_, t_;
};

// lstsq (A square and of full rank here; the least-norm solution through the SVD, what gelsd
// computes): x = A^+ b (SvdPinv); loss = sum(x); with gx = ones: gb = A^+T gx, gA = -gb x^T (at
// full rank the pseudo-inverse's other terms vanish).
// gesdd('S') + 4 matrix-vector gemm + 1 rank-1 gemm.
class LstsqFloor final : public Floor {
 public:
  explicit LstsqFloor(const Inputs& in)
      : Floor(in.n),
        A_(input(in.a, in.n)),
        b_(input(in.b, 1)),
        x_(in.n),
        one_(in.n, 1.0),
        gb_(in.n),
        gA_(nn_),
        pinv_(in.n) {}
  void run() override {
    const int n = n_;
    pinv_.factor(A_);
    pinv_.apply(b_, x_);
    loss_ = sum_of(x_, n);
    pinv_.apply_t(one_, gb_);
    cpu::gemm<double>(Trans::N, Trans::T, n, n, 1, -1, gb_, n, x_, n, 0, gA_, n);
  }
  Grad grad() const override { return {loss_, row_major(gA_, n_, n_), row_major(gb_, n_, 1)}; }

 private:
  Buf A_, b_, x_, one_, gb_, gA_;
  SvdPinv pinv_;
};

// A buffer of complex doubles from the pooled allocator.
class CBuf {
 public:
  explicit CBuf(std::size_t count) : b_(2 * count) {}
  std::complex<double>* get() const { return reinterpret_cast<std::complex<double>*>(b_.get()); }
  operator std::complex<double>*() const { return get(); }

 private:
  Buf b_;
};

// eigvals (loss sum(Re w)): W = A (copy); geev with vectors (the rule needs them); loss = sum(Re w);
// with gw = ones: gA = Re(V^-H diag(gw) V^H): M = V^H, X = V^H (copies); getrf(M); getrs(M, X).
// geev + getrf + getrs (complex, n right-hand sides).
class EigvalsFloor final : public Floor {
 public:
  explicit EigvalsFloor(const Inputs& in)
      : Floor(in.n), A_(input(in.a, in.n)), W_(nn_), w_(in.n), V_(nn_), M_(nn_), X_(nn_), piv_(in.n), gA_(nn_) {}
  void run() override {
    const int n = n_;
    load(W_, A_, nn_);
    expect_ok(cpu::geev<double>(true, n, W_, n, w_, V_, n), "geev");
    double s = 0;
    for (int i = 0; i < n; ++i) s += w_.get()[i].real();
    loss_ = s;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) M_.get()[i + j * n] = X_.get()[i + j * n] = std::conj(V_.get()[j + i * n]);
    expect_ok(cpu::getrf<std::complex<double>>(n, n, M_, n, piv_), "getrf");
    cpu::getrs<std::complex<double>>(Trans::N, n, n, M_, n, piv_, X_, n);
    for (std::size_t k = 0; k < nn_; ++k) gA_[k] = X_.get()[k].real();
  }
  Grad grad() const override { return {loss_, row_major(gA_, n_, n_), {}}; }

 private:
  Buf A_, W_;
  CBuf w_, V_, M_, X_;
  IntBuf piv_;
  Buf gA_;
};

// The Pade degree and number of squarings tenax's matrix_exp picks for one m x m matrix
// (detail::expm_degree, expm_squarings): the lowest degree whose theta bounds the 1-norm, else the top degree
// with ||A||_1 / 2^s <= theta.
inline std::pair<const tenax::detail::PadeDegree*, int> pade_choice(const double* A, int m) {
  double eta = 0;
  for (int j = 0; j < m; ++j) {
    double c = 0;
    for (int i = 0; i < m; ++i) c += std::abs(A[i + static_cast<std::size_t>(j) * m]);
    eta = std::max(eta, c);
  }
  const auto& degrees = tenax::detail::pade_degrees<double>();
  for (const auto& d : degrees)
    if (eta <= d.theta) return {&d, 0};
  const auto& top = degrees.back();
  if (!(eta > top.theta)) return {&top, 0};  // (a NaN norm)
  return {&top, static_cast<int>(std::ceil(std::log2(eta / top.theta)))};
}

// exp(X) of m x m matrices by scaling and squaring with the Pade degree and scaling tenax's
// matrix_exp chooses (detail::pade_degrees): the approximant's products (gemm), one getrf + getrs,
// and s squarings (gemm). Buffers for m x m, allocated once.
class Expm {
 public:
  explicit Expm(int m)
      : m_(m),
        mm_(static_cast<std::size_t>(m) * m),
        X_(mm_),
        X2_(mm_),
        X4_(mm_),
        X6_(mm_),
        U_(mm_),
        V_(mm_),
        T_(mm_),
        piv_(m) {}
  // E = exp(A); A (m x m, column-major) is not modified.
  void run(const double* A, double* E) {
    const int m = m_;
    const auto [p, s] = pade_choice(A, m);
    const double scale = std::ldexp(1.0, -s);
    for (std::size_t k = 0; k < mm_; ++k) X_[k] = A[k] * scale;
    auto b = [&](int j) { return p->b[static_cast<std::size_t>(j)]; };
    auto gemm = [&](const double* x, const double* y, double* out, double beta = 0) {
      cpu::gemm<double>(Trans::N, Trans::N, m, m, m, 1, x, m, y, m, beta, out, m);
    };
    gemm(X_, X_, X2_);
    if (p->m == 13) {
      gemm(X2_, X2_, X4_);
      gemm(X4_, X2_, X6_);
      for (std::size_t k = 0; k < mm_; ++k) {
        T_[k] = b(13) * X6_[k] + b(11) * X4_[k] + b(9) * X2_[k];
        E[k] = b(12) * X6_[k] + b(10) * X4_[k] + b(8) * X2_[k];
      }
      gemm(X6_, T_, U_);  // X6 (b13 X6 + b11 X4 + b9 X2)
      gemm(X6_, E, V_);   // X6 (b12 X6 + b10 X4 + b8 X2)
      for (std::size_t k = 0; k < mm_; ++k) {
        const bool diag = k % static_cast<std::size_t>(m + 1) == 0;
        U_[k] += b(7) * X6_[k] + b(5) * X4_[k] + b(3) * X2_[k] + (diag ? b(1) : 0.0);
        V_[k] += b(6) * X6_[k] + b(4) * X4_[k] + b(2) * X2_[k] + (diag ? b(0) : 0.0);
      }
    } else {
      // u = b1 I + b3 X2 + ..., v = b0 I + b2 X2 + ... over the even powers X2, X4 (in X4_), ...
      for (std::size_t k = 0; k < mm_; ++k) {
        const bool diag = k % static_cast<std::size_t>(m + 1) == 0;
        U_[k] = diag ? b(1) : 0.0;
        V_[k] = diag ? b(0) : 0.0;
      }
      const double* xk = X2_;
      double* spare[2] = {X4_, X6_};
      for (int k = 2, i = 0; k <= p->m; k += 2, i ^= 1) {
        for (std::size_t e = 0; e < mm_; ++e) {
          U_[e] += b(k + 1) * xk[e];
          V_[e] += b(k) * xk[e];
        }
        if (k + 2 <= p->m) {
          gemm(xk, X2_, spare[i]);
          xk = spare[i];
        }
      }
    }
    gemm(X_, U_, T_);  // U = X u
    for (std::size_t k = 0; k < mm_; ++k) {
      const double u = T_[k], v = V_[k];
      V_[k] = v - u;  // q(X), factorized
      E[k] = v + u;   // p(X), solved in place
    }
    expect_ok(cpu::getrf<double>(m, m, V_, m, piv_), "getrf");
    cpu::getrs<double>(Trans::N, m, m, V_, m, piv_, E, m);
    for (int k = 0; k < s; ++k) {
      gemm(E, E, T_);
      std::memcpy(E, T_.get(), mm_ * sizeof(double));
    }
  }

 private:
  int m_;
  std::size_t mm_;
  Buf X_, X2_, X4_, X6_, U_, V_, T_;
  IntBuf piv_;
};

// exp(X) and its Frechet derivative L(X, dX) of m x m matrices together, as tenax's rule computes
// them (generic::matrix_exp_frechet and the CPU kernel of src/cpu/linalg_expm.cpp: the approximant's products with
// their tangents, one getrf and two getrs, and per squaring R <- R^2, L <- R L + L R), through the provider.
class ExpmFrechet {
 public:
  explicit ExpmFrechet(int m)
      : m_(m),
        mm_(static_cast<std::size_t>(m) * m),
        X_(mm_),
        dX_(mm_),
        P_{Buf(mm_), Buf(mm_), Buf(mm_)},
        dP_{Buf(mm_), Buf(mm_), Buf(mm_)},
        U_(mm_),
        dU_(mm_),
        V_(mm_),
        dV_(mm_),
        T_(mm_),
        dT_(mm_),
        Q_(mm_),
        piv_(m) {}
  // R = exp(A), L = L(A, E) (A, E m x m, column-major, not modified).
  void run(const double* A, const double* E, double* R, double* L) {
    const int m = m_;
    const auto [p, s] = pade_choice(A, m);
    const double scale = std::ldexp(1.0, -s);
    for (std::size_t k = 0; k < mm_; ++k) X_[k] = A[k] * scale, dX_[k] = E[k] * scale;
    auto b = [&](int j) { return p->b[static_cast<std::size_t>(j)]; };
    auto gemm = [&](const double* x, const double* y, double* out, double beta) {
      cpu::gemm<double>(Trans::N, Trans::N, m, m, m, 1, x, m, y, m, beta, out, m);
    };
    // z = x y, dz = dx y + x dy
    auto prod = [&](const double* x, const double* dx, const double* y, const double* dy, double* z, double* dz) {
      gemm(x, y, z, 0);
      gemm(dx, y, dz, 0);
      gemm(x, dy, dz, 1);
    };
    double *X2 = P_[0], *dX2 = dP_[0];
    prod(X_, dX_, X_, dX_, X2, dX2);
    auto diag = [&](std::size_t k) { return k % static_cast<std::size_t>(m + 1) == 0; };
    if (p->m == 13) {
      double *X4 = P_[1], *dX4 = dP_[1], *X6 = P_[2], *dX6 = dP_[2];
      prod(X2, dX2, X2, dX2, X4, dX4);
      prod(X4, dX4, X2, dX2, X6, dX6);
      for (std::size_t k = 0; k < mm_; ++k) {
        T_[k] = b(13) * X6[k] + b(11) * X4[k] + b(9) * X2[k];
        dT_[k] = b(13) * dX6[k] + b(11) * dX4[k] + b(9) * dX2[k];
      }
      prod(X6, dX6, T_, dT_, V_, dV_);  // X6 u_hi (in V_ for now)
      for (std::size_t k = 0; k < mm_; ++k) {
        V_[k] += b(7) * X6[k] + b(5) * X4[k] + b(3) * X2[k] + (diag(k) ? b(1) : 0.0);
        dV_[k] += b(7) * dX6[k] + b(5) * dX4[k] + b(3) * dX2[k];
        T_[k] = b(12) * X6[k] + b(10) * X4[k] + b(8) * X2[k];
        dT_[k] = b(12) * dX6[k] + b(10) * dX4[k] + b(8) * dX2[k];
      }
      prod(X_, dX_, V_, dV_, U_, dU_);  // U = X W
      prod(X6, dX6, T_, dT_, V_, dV_);  // X6 v_hi
      for (std::size_t k = 0; k < mm_; ++k) {
        V_[k] += b(6) * X6[k] + b(4) * X4[k] + b(2) * X2[k] + (diag(k) ? b(0) : 0.0);
        dV_[k] += b(6) * dX6[k] + b(4) * dX4[k] + b(2) * dX2[k];
      }
    } else {
      for (std::size_t k = 0; k < mm_; ++k) {
        T_[k] = diag(k) ? b(1) : 0.0, V_[k] = diag(k) ? b(0) : 0.0;
        dT_[k] = 0.0, dV_[k] = 0.0;
      }
      const double *xk = X2, *dxk = dX2;
      for (int k = 2, i = 1; k <= p->m; k += 2, i = 3 - i) {
        for (std::size_t e = 0; e < mm_; ++e) {
          T_[e] += b(k + 1) * xk[e], dT_[e] += b(k + 1) * dxk[e];
          V_[e] += b(k) * xk[e], dV_[e] += b(k) * dxk[e];
        }
        if (k + 2 <= p->m) {
          prod(xk, dxk, X2, dX2, P_[i], dP_[i]);
          xk = P_[i], dxk = dP_[i];
        }
      }
      prod(X_, dX_, T_, dT_, U_, dU_);
    }
    for (std::size_t k = 0; k < mm_; ++k) {
      Q_[k] = V_[k] - U_[k];
      R[k] = V_[k] + U_[k];
      L[k] = dV_[k] + dU_[k];
      T_[k] = dV_[k] - dU_[k];
    }
    expect_ok(cpu::getrf<double>(m, m, Q_, m, piv_), "getrf");
    cpu::getrs<double>(Trans::N, m, m, Q_, m, piv_, R, m);
    cpu::gemm<double>(Trans::N, Trans::N, m, m, m, -1, T_, m, R, m, 1, L, m);  // dP - dQ R
    cpu::getrs<double>(Trans::N, m, m, Q_, m, piv_, L, m);
    for (int k = 0; k < s; ++k) {
      gemm(R, L, T_, 0);
      gemm(L, R, T_, 1);
      gemm(R, R, dT_, 0);
      std::memcpy(L, T_.get(), mm_ * sizeof(double));
      std::memcpy(R, dT_.get(), mm_ * sizeof(double));
    }
  }

 private:
  int m_;
  std::size_t mm_;
  Buf X_, dX_;
  Buf P_[3], dP_[3];
  Buf U_, dU_, V_, dV_, T_, dT_, Q_;
  IntBuf piv_;
};

// matrix_exp: E = exp(A) (Expm); loss = sum(E); with gE = ones, gA = L(A^T, gE) (ExpmFrechet, which
// also recomputes exp(A^T)), as tenax's rule computes it.
// The approximant and squarings of order n, then the same with tangents (gemm, getrf, getrs).
class MatrixExpFloor final : public Floor {
 public:
  explicit MatrixExpFloor(const Inputs& in)
      : Floor(in.n),
        A_(input(in.a, in.n)),
        AT_(nn_),
        G_(nn_, 1.0),
        E_(nn_),
        R_(nn_),
        gA_(nn_),
        exp_(in.n),
        frechet_(in.n) {}
  void run() override {
    const int n = n_;
    exp_.run(A_, E_);
    loss_ = sum_of(E_, nn_);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) AT_[i + static_cast<std::size_t>(j) * n] = A_[j + static_cast<std::size_t>(i) * n];
    frechet_.run(AT_, G_, R_, gA_);
  }
  Grad grad() const override { return {loss_, row_major(gA_, n_, n_), {}}; }

 private:
  Buf A_, AT_, G_, E_, R_, gA_;
  Expm exp_;
  ExpmFrechet frechet_;
};

inline std::unique_ptr<Floor> make_floor(Case c, const Inputs& in) {
  switch (c) {
    case Case::matmul:
      return std::make_unique<MatmulFloor>(in);
    case Case::solve:
      return std::make_unique<SolveFloor>(in);
    case Case::qr:
      return std::make_unique<QrFloor>(in);
    case Case::eigh:
      return std::make_unique<EighFloor>(in);
    case Case::eigvalsh:
      return std::make_unique<EigvalshFloor>(in);
    case Case::svdvals:
      return std::make_unique<SvdvalsFloor>(in);
    case Case::lu:
      return std::make_unique<LuFloor>(in);
    case Case::cholesky:
      return std::make_unique<CholeskyFloor>(in);
    case Case::lstsq:
      return std::make_unique<LstsqFloor>(in);
    case Case::eigvals:
      return std::make_unique<EigvalsFloor>(in);
    case Case::matrix_exp:
      return std::make_unique<MatrixExpFloor>(in);
  }
  return {};
}

// ---- counters ----------------------------------------------------------------------------------

// Provider calls per iteration as counters (only the routines called), and the requests to the
// pooled allocator per iteration (`allocs`: data buffers and the small metadata blocks alike).
struct CallCounter {
  CallCounter() {
    cpu::reset_provider_calls();
    tenax::reset_allocator_stats();
  }
  void report(benchmark::State& state) const {
    const tenax::AllocatorStats st = tenax::allocator_stats();
    state.counters["allocs"] =
        benchmark::Counter(static_cast<double>(st.pool_hits + st.pool_misses), benchmark::Counter::kAvgIterations);
    for (int r = 0; r < static_cast<int>(cpu::Routine::kCount); ++r) {
      const auto calls = cpu::provider_calls(static_cast<cpu::Routine>(r));
      if (calls > 0)
        state.counters[cpu::routine_name(static_cast<cpu::Routine>(r))] =
            benchmark::Counter(static_cast<double>(calls), benchmark::Counter::kAvgIterations);
    }
  }
};

// The timed loop of a floor row: f.run() per iteration, with the call counters.
template <class F>
void time_floor(benchmark::State& state, F& f) {
  CallCounter calls;
  for (auto _ : state) {
    f.run();
    benchmark::ClobberMemory();
  }
  calls.report(state);
}

}  // namespace tenax_bench::large_ad
