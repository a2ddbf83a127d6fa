// The `large_ad` suite (shared BENCHMARKS.md, suite 1): dense linear algebra at n = 64..1024, f64,
// one thread, primal and reverse-mode AD. Cases, losses and inputs: large_ad_cases.hpp.
//
// Rows (name large_ad/<case>/f64/<n>x<n>/<mode>):
//   primal    the op alone, no recording (matmul, solve with an n x 1 right-hand side, qr, eigh,
//             eigvalsh, svdvals, lu_factor, cholesky); inputs do not require grad.
//   eager     forward + loss + backward with the tape: the inputs require grad, the timed region
//             is zero_grad, the op, the loss, loss.backward() and freeing the tape.
//   floor     the bare provider calls the eager row cannot avoid (the primal LAPACK calls plus the
//             BLAS/LAPACK calls of its VJP rule), through tenax::cpu::* in this binary, on raw
//             buffers from tenax's pooled allocator, allocated outside the timing. Each floor also
//             does the O(n^2) glue the rule needs (copying the input that LAPACK overwrites,
//             unpacking triangles, the loss sum, the elementwise middle terms); the cotangents of the
//             sums (all-ones matrices, their triangles, diag(1)) are prepared outside the timing.
//             The calls of each floor are listed at its class below and in bench/RESULTS.md.
//   trace     the same forward + loss + backward traced and compiled outside the timing (tenax::compile
//             of value_and_grad of the loss); the timed region is one prepared run.
//   libtorch  the reference (ref_libtorch/large_ad_torch.cpp), when libtorch is found.
// Inputs are built outside the timing. Primal, eager and floor rows report per iteration, as
// counters, the provider calls (gemm, trsm, getrf, ...) and the pooled-allocator requests (allocs).
//
// Correctness, outside the timing (a failure makes the row a Google Benchmark error with the
// reason): the eager gradient once against central differences of tenax's forward in one random
// direction and against libtorch's gradient (large_ad_cases.hpp: check_grad); the gradient left by
// the last timed iteration; the primal row's outputs give the same loss; the floor's loss and
// gradient equal tenax's.
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "large_ad_cases.hpp"
#include "tenax/backend/cpu_provider.hpp"
#include "tenax/linalg.hpp"
#include "tenax/tenax.hpp"

namespace tenax_bench::large_ad {
namespace {

using tenax::Tensor;
namespace cpu = tenax::cpu;
using cpu::Diag;
using cpu::Side;
using cpu::Trans;
using cpu::Uplo;

// ---- conversions ---------------------------------------------------------------------------------

Tensor<double> to_tensor(const std::vector<double>& rm, int rows, int cols) {
  return Tensor<double>::from_row_major({rows, cols}, rm);
}

std::vector<double> to_row_major(const Tensor<double>& t) {
  const std::int64_t rows = t.shape()[0], cols = t.dim() > 1 ? t.shape()[1] : 1;
  const std::vector<double> cm = t.to_vector();  // column-major
  std::vector<double> rm(cm.size());
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) rm[i * cols + j] = cm[j * rows + i];
  return rm;
}

// Column-major copy of a row-major rows x cols matrix.
std::vector<double> col_major(const std::vector<double>& rm, int rows, int cols) {
  std::vector<double> cm(rm.size());
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      cm[static_cast<std::size_t>(j) * rows + i] = rm[static_cast<std::size_t>(i) * cols + j];
  return cm;
}

std::vector<double> row_major(const double* cm, int rows, int cols) {
  std::vector<double> rm(static_cast<std::size_t>(rows) * cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      rm[static_cast<std::size_t>(i) * cols + j] = cm[static_cast<std::size_t>(j) * rows + i];
  return rm;
}

// sum(V) with each column's sign chosen so that its first largest-magnitude entry is positive
// (the canonical gauge of eigh(..., canonical_gauge = true)); V contiguous n x n column-major.
double canonical_sum(const double* v, std::int64_t n) {
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

double total(const Tensor<double>& t) { return tenax::sum(t).item(); }

// ---- the tenax side of each case -----------------------------------------------------------------

// The loss (recorded when an input requires grad and recording is on).
Tensor<double> loss_of(Case c, const Tensor<double>& A, const Tensor<double>& B) {
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
  }
  return {};
}

// The primal op (what a user calls without derivatives); eigh in its default gauge.
std::pair<Tensor<double>, Tensor<double>> primal_of(Case c, const Tensor<double>& A, const Tensor<double>& B) {
  namespace la = tenax::linalg;
  switch (c) {
    case Case::matmul:
      return {tenax::matmul(A, B), {}};
    case Case::solve:
      return {la::solve(A, B), {}};
    case Case::qr:
      return la::qr(A);
    case Case::eigh:
      return la::eigh(A);
    case Case::eigvalsh:
      return {la::eigvalsh(A), {}};
    case Case::svdvals:
      return {la::svdvals(A), {}};
    case Case::lu: {
      auto [LU, piv] = la::lu_factor(A);
      return {LU, {}};
    }
    case Case::cholesky:
      return {la::cholesky(A), {}};
  }
  return {};
}

// The loss computed from the primal outputs (for the primal row's check).
double loss_from_primal(Case c, const std::pair<Tensor<double>, Tensor<double>>& out) {
  const auto& [x, y] = out;
  switch (c) {
    case Case::qr:
      return total(x) + total(y);
    case Case::eigh: {
      const Tensor<double> V = y.contiguous();
      return total(x) + canonical_sum(V.data(), V.shape()[0]);
    }
    case Case::lu: {  // sum(L) + sum(U) = sum(strict lower of LU) + n + sum(upper of LU) = sum(LU) + n
      return total(x) + static_cast<double>(x.shape()[0]);
    }
    default:
      return total(x);
  }
}

struct Tensors {
  Tensor<double> A, B;
};

Tensors make_tensors(Case c, int n, bool grad) {
  const Inputs& in = inputs(c, n);
  Tensors t;
  t.A = to_tensor(in.a, n, n);
  if (!in.b.empty()) t.B = to_tensor(in.b, n, second_cols(c, n));
  if (grad) {
    t.A = t.A.requires_grad();
    if (t.B.defined()) t.B = t.B.requires_grad();
  }
  return t;
}

Grad grad_of(const Tensors& t, const Tensor<double>& loss) {
  Grad g;
  g.loss = loss.item();
  g.ga = t.A.grad().defined() ? to_row_major(t.A.grad()) : std::vector<double>();
  if (t.B.defined()) g.gb = t.B.grad().defined() ? to_row_major(t.B.grad()) : std::vector<double>();
  return g;
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

double sum_of(const double* p, std::size_t count) {
  double s = 0;
  for (std::size_t i = 0; i < count; ++i) s += p[i];
  return s;
}

void expect_ok(int info, const char* what) {
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
    for (int j = 0; j < n; ++j) {
      double* c = V_ + static_cast<std::size_t>(j) * n;
      int k = 0;
      for (int i = 1; i < n; ++i)
        if (std::abs(c[i]) > std::abs(c[k])) k = i;
      if (c[k] < 0)
        for (int i = 0; i < n; ++i) c[i] = -c[i];
    }
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

std::unique_ptr<Floor> make_floor(Case c, int n) {
  const Inputs& in = inputs(c, n);
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
  }
  return {};
}

// ---- checks and counters -------------------------------------------------------------------------

// The correctness check of the case (tenax's gradient vs central differences and vs libtorch),
// computed once per process and case: first, empty when correct, else the reason; second, the
// measured errors (the eager row's label).
const std::pair<std::string, std::string>& tenax_check_full(Case c, int n) {
  static std::map<std::pair<int, int>, std::pair<std::string, std::string>> cache;
  const auto key = std::pair{static_cast<int>(c), n};
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  std::string msg, info;
  try {
    const LossFn f = [c, n](const std::vector<double>& a, const std::vector<double>& b) {
      return tenax_loss(c, n, a, b);
    };
#if defined(TENAX_BENCH_WITH_TORCH)
    msg = check_grad("tenax", c, n, tenax_grad(c, n), f, &torch_grad(c, n), "libtorch", &info);
#else
    msg = check_grad("tenax", c, n, tenax_grad(c, n), f, nullptr, "", &info);
#endif
  } catch (const std::exception& e) {
    msg = std::string("tenax ") + case_name(c) + " n=" + std::to_string(n) + ": exception: " + e.what();
  }
  return cache.emplace(key, std::pair{msg, info}).first->second;
}
const std::string& tenax_check(Case c, int n) { return tenax_check_full(c, n).first; }

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

// ---- rows ----------------------------------------------------------------------------------------

void primal_row(benchmark::State& state, Case c, int n) {
  if (const std::string& err = tenax_check(c, n); !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  tenax::NoGradGuard no_grad;
  const Tensors t = make_tensors(c, n, false);
  std::pair<Tensor<double>, Tensor<double>> out;
  CallCounter calls;
  for (auto _ : state) {
    out = primal_of(c, t.A, t.B);
    benchmark::DoNotOptimize(out.first.impl().get());
  }
  calls.report(state);
  const double want = tenax_grad(c, n).loss, got = loss_from_primal(c, out);
  if (!close(got, want, kLossRtol)) {
    state.SkipWithError(("tenax primal: the outputs give loss " + num(got) + ", expected " + num(want)).c_str());
    return;
  }
}

void eager_row(benchmark::State& state, Case c, int n) {
  if (const std::string& err = tenax_check(c, n); !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  const Tensors t = make_tensors(c, n, true);
  double last = NAN;
  CallCounter calls;
  for (auto _ : state) {
    t.A.zero_grad();
    if (t.B.defined()) t.B.zero_grad();
    Tensor<double> loss = loss_of(c, t.A, t.B);
    loss.backward();
    benchmark::DoNotOptimize(loss.impl().get());
    last = loss.data()[0];
  }
  calls.report(state);
  const Grad& want = tenax_grad(c, n);
  Grad got = grad_of(t, Tensor<double>::scalar(last));
  if (!close(got.loss, want.loss, 1e-12) || rel_diff(got.ga, want.ga, n, false) > 1e-12 ||
      rel_diff(got.gb, want.gb, n, false) > 1e-12) {
    state.SkipWithError("tenax eager: the loss or gradient left by the timed iterations differs from the checked one");
    return;
  }
  state.SetLabel(tenax_check_full(c, n).second);
}

// The compiled program of (A[, B]) -> (loss, gradients), its prepared run timed.
template <class Prog, class... X>
auto run_program(benchmark::State& state, const Prog& prog, const X&... x) {
  auto out = prog(x...);  // the first run warms the pool
  CallCounter calls;
  for (auto _ : state) {
    out = prog(x...);
    benchmark::DoNotOptimize(out.first.impl().get());
  }
  calls.report(state);
  return out;
}

void trace_row(benchmark::State& state, Case c, int n) {
  if (const std::string& err = tenax_check(c, n); !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  const Tensors t = make_tensors(c, n, false);
  Grad got;
  auto loss = [c](const Tensor<double>& a, const Tensor<double>& b) { return loss_of(c, a, b); };
  if (t.B.defined()) {
    const auto prog = tenax::compile(
        [&](const Tensor<double>& a, const Tensor<double>& b) { return tenax::value_and_grad(loss, a, b); }, t.A, t.B);
    const auto out = run_program(state, prog, t.A, t.B);
    got = {out.first.item(), to_row_major(std::get<0>(out.second)), to_row_major(std::get<1>(out.second))};
  } else {
    auto loss_a = [&](const Tensor<double>& a) { return loss(a, Tensor<double>()); };
    const auto prog = tenax::compile([&](const Tensor<double>& a) { return tenax::value_and_grad(loss_a, a); }, t.A);
    const auto out = run_program(state, prog, t.A);
    got = {out.first.item(), to_row_major(out.second), {}};
  }
  const Grad& want = tenax_grad(c, n);
  if (!close(got.loss, want.loss, 1e-12) || rel_diff(got.ga, want.ga, n, false) > 1e-12 ||
      rel_diff(got.gb, want.gb, n, false) > 1e-12) {
    state.SkipWithError("tenax trace: the compiled program's loss or gradient differs from eager");
    return;
  }
}

void floor_row(benchmark::State& state, Case c, int n) {
  std::unique_ptr<Floor> f;
  std::string err;
  try {
    f = make_floor(c, n);
    f->run();
    const Grad got = f->grad(), &want = tenax_grad(c, n);
    const bool sym = symmetric_input(c);
    const double ea = rel_diff(got.ga, want.ga, n, sym), eb = rel_diff(got.gb, want.gb, n, false);
    if (!close(got.loss, want.loss, kLossRtol))
      err = "floor: loss " + num(got.loss) + " differs from tenax " + num(want.loss);
    else if (!(ea <= kCrossRtol) || (!want.gb.empty() && !(eb <= kCrossRtol)))
      err = "floor: gradient differs from tenax's: relative difference " + num(ea) + " / " + num(eb);
  } catch (const std::exception& e) {
    err = std::string("floor: exception: ") + e.what();
  }
  if (!err.empty()) {
    err = std::string(case_name(c)) + " n=" + std::to_string(n) + ": " + err;
    state.SkipWithError(err.c_str());
    return;
  }
  CallCounter calls;
  for (auto _ : state) {
    f->run();
    benchmark::ClobberMemory();
  }
  calls.report(state);
}

const bool registered = [] {
  for (Case c : kCases)
    for (int n : sizes()) {
      configure_row(benchmark::RegisterBenchmark(row_name(c, n, "primal").c_str(), primal_row, c, n));
      configure_row(benchmark::RegisterBenchmark(row_name(c, n, "eager").c_str(), eager_row, c, n));
      configure_row(benchmark::RegisterBenchmark(row_name(c, n, "trace").c_str(), trace_row, c, n));
      configure_row(benchmark::RegisterBenchmark(row_name(c, n, "floor").c_str(), floor_row, c, n));
    }
  benchmark::AddCustomContext("large_ad", profile_description());
  return true;
}();

}  // namespace

// ---- the plain-type interface (large_ad_cases.hpp) -----------------------------------------------

const Inputs& inputs(Case c, int n) {
  static std::mutex mu;
  static std::map<std::pair<int, int>, Inputs> cache;
  std::lock_guard lock(mu);
  const auto key = std::pair{static_cast<int>(c), n};
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, make_inputs(c, n)).first;
  return it->second;
}

const Grad& tenax_grad(Case c, int n) {
  static std::map<std::pair<int, int>, Grad> cache;
  const auto key = std::pair{static_cast<int>(c), n};
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  tenax::GradModeGuard on(true);
  const Tensors t = make_tensors(c, n, true);
  const Tensor<double> loss = loss_of(c, t.A, t.B);
  loss.backward();
  return cache.emplace(key, grad_of(t, loss)).first->second;
}

double tenax_loss(Case c, int n, const std::vector<double>& a, const std::vector<double>& b) {
  tenax::NoGradGuard no_grad;
  const Tensor<double> A = to_tensor(a, n, n);
  const Tensor<double> B = b.empty() ? Tensor<double>() : to_tensor(b, n, second_cols(c, n));
  return loss_of(c, A, B).item();
}

}  // namespace tenax_bench::large_ad
