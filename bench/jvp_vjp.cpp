// The `jvp_vjp` suite (shared BENCHMARKS.md, suite 2): forward-mode (JVP) and reverse-mode (VJP)
// derivatives of scalar losses of qr, eigh, solve, lu, svd singular values, lstsq, eigvals and matrix_exp,
// n = 2, 4, 8 and 256, 512 (1024 in the full profile). Cases, losses, inputs and checks:
// jvp_vjp_cases.hpp (reusing large_ad's); the tenax losses, the reverse-mode floors and the call
// counters: large_ad_tenax.hpp. The Jacobian and Hessian rows (jacrev, jacfwd, hessian) of the same
// suite: jvp_vjp_jacobian.cpp.
//
// Rows (name jvp_vjp/<case>_<jvp|vjp>/f64/<n>x<n>/<mode>, case qr, eigh, solve, lu, svd_s, lstsq,
// eigvals, matrix_exp):
//   eager     jvp: tenax::jvp(loss, A, dA) (forward mode, no tape: A does not require grad);
//             vjp: tenax::vjp(loss, A), then the pullback of the cotangent 1 (forward with
//             recording + backward). The timed region is the whole call; inputs, the tangent and
//             the cotangent are built outside.
//   trace     the same function traced and compiled outside the timing (tenax::compile of
//             (A, dA) -> jvp(loss, A, dA), or of (A, gy) -> (loss, pullback(gy))); the timed region
//             is one prepared run.
//   floor     the bare provider calls the row cannot avoid, through tenax::cpu::* on raw pooled
//             buffers allocated outside the timing, with the O(n^2) glue of the rule: vjp rows reuse
//             large_ad's floors (forward + loss + backward with all-ones cotangents); jvp rows run the
//             primal factorization plus the calls of the JVP rule (listed at each class below) and
//             sum the output tangents.
//   libtorch  the reference (ref_libtorch/jvp_vjp_torch.cpp), when libtorch is found.
// Eager, trace and floor rows report the provider calls and pooled-allocator requests per
// iteration as counters (as large_ad's rows do).
//
// Correctness, outside the timing (a failure makes the row a Google Benchmark error with the
// reason): the eager JVP's tangent once against central differences of tenax's loss along dA, the
// eager VJP's gradient through <g, dA> likewise, both also against libtorch's (jvp_vjp_cases.hpp);
// the result left by the last timed eager iteration equals the checked one; a trace row's result is
// bit-identical to eager's; a floor's loss and tangent (gradient) equal tenax's.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

#include "jvp_vjp_cases.hpp"
#include "large_ad_tenax.hpp"

namespace tenax_bench::jvp_vjp {
namespace {

using large_ad::Buf;
using large_ad::CallCounter;
using large_ad::canonical_gauge;
using large_ad::expect_ok;
using large_ad::Floor;
using large_ad::IntBuf;
using large_ad::rel_diff;
using large_ad::sum_of;
using large_ad::to_row_major;
using large_ad::to_tensor;
using tenax::Tensor;
namespace cpu = tenax::cpu;
using cpu::Diag;
using cpu::Side;
using cpu::Trans;
using cpu::Uplo;

// ---- the tenax side ------------------------------------------------------------------------------

// The loss as a function of A alone (b, for solve, is a constant), large_ad's definition.
struct Loss {
  Case c;
  Tensor<double> b;
  Tensor<double> operator()(const Tensor<double>& A) const { return large_ad::loss_of(base_case(c), A, b); }
};

struct Tensors {
  Tensor<double> A, dA, one;  // one: the VJP cotangent, shaped like the loss
  Loss f;
};

Tensors make_tensors(Case c, int n) {
  const Inputs &in = inputs(c, n), &d = tangent(c, n);
  Tensors t;
  t.A = to_tensor(in.a, n, n);
  t.dA = to_tensor(d.a, n, n);
  t.f = Loss{c, in.b.empty() ? Tensor<double>() : to_tensor(in.b, n, large_ad::second_cols(base_case(c), n))};
  tenax::NoGradGuard no_grad;
  t.one = Tensor<double>::ones(t.f(t.A).shape());
  return t;
}

Jvp jvp_result(const std::pair<Tensor<double>, Tensor<double>>& out) { return {out.first.item(), out.second.item()}; }
Grad vjp_result(const Tensor<double>& y, const Tensor<double>& g) { return {y.item(), to_row_major(g), {}}; }

bool same_bits(double x, double y) { return std::memcmp(&x, &y, sizeof x) == 0; }
bool same_bits(const Jvp& x, const Jvp& y) { return same_bits(x.loss, y.loss) && same_bits(x.tangent, y.tangent); }
bool same_bits(const Grad& x, const Grad& y) {
  return same_bits(x.loss, y.loss) && x.ga.size() == y.ga.size() &&
         (x.ga.empty() || std::memcmp(x.ga.data(), y.ga.data(), x.ga.size() * sizeof(double)) == 0);
}

// ---- jvp floors ----------------------------------------------------------------------------------

// A JVP floor: run() is the timed region (the factorization, the loss, the tangent calls of the
// rule and the sum of the output tangents); tangent() reads the result after a run(). Column-major,
// leading dimension n; dA is the tangent.
class JvpFloor : public Floor {
 public:
  JvpFloor(const Inputs& in, const Inputs& d) : Floor(in.n), A_(input(in.a, in.n)), dA_(input(d.a, in.n)) {}
  Grad grad() const override { return {loss_, {}, {}}; }
  double tangent() const { return tangent_; }

 protected:
  Buf A_, dA_;
  double tangent_ = 0;
};

// qr: W = A (copy); geqrf; R = triu(W); Q = W (copy); orgqr; loss = sum(Q) + sum(R); then
//   dX = dA R^-1 (trsm right/upper);  M = Q^T dX (gemm);  S = triu(M + M^T) - diag(M) (elementwise);
//   dQ = dX - Q S (gemm);  dR = S R (gemm);  tangent = sum(dQ) + sum(dR).
// geqrf + orgqr + 1 trsm + 3 gemm.
class QrJvpFloor final : public JvpFloor {
 public:
  QrJvpFloor(const Inputs& in, const Inputs& d)
      : JvpFloor(in, d), W_(nn_), tau_(in.n), Q_(nn_), R_(nn_), dX_(nn_), M_(nn_), S_(nn_), dR_(nn_) {}
  void run() override {
    const int n = n_;
    load(W_, A_, nn_);
    expect_ok(cpu::geqrf<double>(n, n, W_, n, tau_), "geqrf");
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) R_[i + j * n] = i <= j ? W_[i + j * n] : 0.0;
    std::memcpy(Q_.get(), W_.get(), nn_ * sizeof(double));
    expect_ok(cpu::orgqr<double>(n, n, n, Q_, n, tau_), "orgqr");
    loss_ = sum_of(Q_, nn_) + sum_of(R_, nn_);
    load(dX_, dA_, nn_);
    cpu::trsm<double>(Side::Right, Uplo::Upper, Trans::N, Diag::NonUnit, n, n, 1, R_, n, dX_, n);
    cpu::gemm<double>(Trans::T, Trans::N, n, n, n, 1, Q_, n, dX_, n, 0, M_, n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) S_[i + j * n] = i < j ? M_[i + j * n] + M_[j + i * n] : i == j ? M_[i + j * n] : 0.0;
    cpu::gemm<double>(Trans::N, Trans::N, n, n, n, -1, Q_, n, S_, n, 1, dX_, n);
    cpu::gemm<double>(Trans::N, Trans::N, n, n, n, 1, S_, n, R_, n, 0, dR_, n);
    tangent_ = sum_of(dX_, nn_) + sum_of(dR_, nn_);
  }

 private:
  Buf W_, tau_, Q_, R_, dX_, M_, S_, dR_;
};

// eigh (canonical gauge): V = A (copy); syevd('V', lower); canonical column signs;
// loss = sum(w) + sum(V); then P = V^T (dA V) (2 gemm); dw = diag(P);
//   dV = V (F o P), F_ij = 1/(w_j - w_i), 0 on the diagonal (elementwise, gemm);
//   tangent = sum(dw) + sum(dV).
// syevd('V') + 3 gemm.
class EighJvpFloor final : public JvpFloor {
 public:
  EighJvpFloor(const Inputs& in, const Inputs& d) : JvpFloor(in, d), V_(nn_), w_(in.n), T1_(nn_), P_(nn_), dV_(nn_) {}
  void run() override {
    const int n = n_;
    load(V_, A_, nn_);
    expect_ok(cpu::syevd<double>(true, Uplo::Lower, n, V_, n, w_), "syevd");
    canonical_gauge(V_, n);
    loss_ = sum_of(w_, n) + sum_of(V_, nn_);
    cpu::gemm<double>(Trans::N, Trans::N, n, n, n, 1, dA_, n, V_, n, 0, T1_, n);
    cpu::gemm<double>(Trans::T, Trans::N, n, n, n, 1, V_, n, T1_, n, 0, P_, n);
    double dw = 0;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        double& p = P_[i + j * n];
        if (i == j) {
          dw += p;
          p = 0.0;
        } else {
          p /= w_[j] - w_[i];
        }
      }
    cpu::gemm<double>(Trans::N, Trans::N, n, n, n, 1, V_, n, P_, n, 0, dV_, n);
    tangent_ = dw + sum_of(dV_, nn_);
  }

 private:
  Buf V_, w_, T1_, P_, dV_;
};

// solve: LU = A (copy); getrf; x = b (copy); getrs('N'); loss = sum(x); then
//   r = -dA x (gemm with one column);  dx = A^-1 r (getrs('N'));  tangent = sum(dx).
// getrf + 2 getrs + 1 gemm (n x 1).
class SolveJvpFloor final : public JvpFloor {
 public:
  SolveJvpFloor(const Inputs& in, const Inputs& d)
      : JvpFloor(in, d), b_(input(in.b, 1)), LU_(nn_), piv_(in.n), x_(in.n), r_(in.n) {}
  void run() override {
    const int n = n_;
    load(LU_, A_, nn_);
    expect_ok(cpu::getrf<double>(n, n, LU_, n, piv_), "getrf");
    load(x_, b_, n);
    cpu::getrs<double>(Trans::N, n, 1, LU_, n, piv_, x_, n);
    loss_ = sum_of(x_, n);
    cpu::gemm<double>(Trans::N, Trans::N, n, 1, n, -1, dA_, n, x_, n, 0, r_, n);
    cpu::getrs<double>(Trans::N, n, 1, LU_, n, piv_, r_, n);
    tangent_ = sum_of(r_, n);
  }

 private:
  Buf b_, LU_;
  IntBuf piv_;
  Buf x_, r_;
};

// lu: LU = A (copy); getrf; L (unit lower) and U unpacked into dense buffers, loss = sum(L) +
// sum(U); then X = P^T dA (row interchanges); C = L^-1 X U^-1 (2 trsm);
//   dLU = L tril(C, -1) + triu(C) U (2 gemm);  tangent = sum(dL) + sum(dU) = sum(dLU).
// getrf + 2 trsm + 2 gemm.
class LuJvpFloor final : public JvpFloor {
 public:
  LuJvpFloor(const Inputs& in, const Inputs& d)
      : JvpFloor(in, d), LU_(nn_), piv_(in.n), L_(nn_), U_(nn_), X_(nn_), Cl_(nn_), dLU_(nn_) {}
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
    load(X_, dA_, nn_);
    const std::int32_t* piv = piv_;
    for (int i = 0; i < n; ++i) {
      const int p = piv[i] - 1;
      if (p != i)
        for (int j = 0; j < n; ++j) std::swap(X_[i + j * n], X_[p + j * n]);
    }
    cpu::trsm<double>(Side::Right, Uplo::Upper, Trans::N, Diag::NonUnit, n, n, 1, LU_, n, X_, n);
    cpu::trsm<double>(Side::Left, Uplo::Lower, Trans::N, Diag::Unit, n, n, 1, LU_, n, X_, n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        double& x = X_[i + j * n];
        Cl_[i + j * n] = i > j ? x : 0.0;
        if (i > j) x = 0.0;
      }
    cpu::gemm<double>(Trans::N, Trans::N, n, n, n, 1, L_, n, Cl_, n, 0, dLU_, n);
    cpu::gemm<double>(Trans::N, Trans::N, n, n, n, 1, X_, n, U_, n, 1, dLU_, n);
    tangent_ = sum_of(dLU_, nn_);
  }

 private:
  Buf LU_;
  IntBuf piv_;
  Buf L_, U_, X_, Cl_, dLU_;
};

// svd_s: W = A (copy); gesdd('S') (U and V^T are needed by the rule); loss = sum(s); then
//   P = U^T (dA V) (2 gemm);  ds = diag(P);  tangent = sum(ds).
// gesdd('S') + 2 gemm.
class SvdsJvpFloor final : public JvpFloor {
 public:
  SvdsJvpFloor(const Inputs& in, const Inputs& d)
      : JvpFloor(in, d), W_(nn_), s_(in.n), U_(nn_), VT_(nn_), T1_(nn_), P_(nn_) {}
  void run() override {
    const int n = n_;
    load(W_, A_, nn_);
    expect_ok(cpu::gesdd<double>('S', n, n, W_, n, s_, U_, n, VT_, n), "gesdd");
    loss_ = sum_of(s_, n);
    cpu::gemm<double>(Trans::N, Trans::T, n, n, n, 1, dA_, n, VT_, n, 0, T1_, n);
    cpu::gemm<double>(Trans::T, Trans::N, n, n, n, 1, U_, n, T1_, n, 0, P_, n);
    double ds = 0;
    for (int i = 0; i < n; ++i) ds += P_[i + static_cast<std::size_t>(i) * n];
    tangent_ = ds;
  }

 private:
  Buf W_, s_, U_, VT_, T1_, P_;
};

// lstsq (A square, full rank; b constant): x = A^+ b (large_ad::SvdPinv); loss = sum(x);
// dx = -A^+ (dA x);  tangent = sum(dx).
// gesdd('S') + 5 matrix-vector gemm.
class LstsqJvpFloor final : public JvpFloor {
 public:
  LstsqJvpFloor(const Inputs& in, const Inputs& d)
      : JvpFloor(in, d), b_(input(in.b, 1)), x_(in.n), y_(in.n), dx_(in.n), pinv_(in.n) {}
  void run() override {
    const int n = n_;
    pinv_.factor(A_);
    pinv_.apply(b_, x_);
    loss_ = sum_of(x_, n);
    cpu::gemm<double>(Trans::N, Trans::N, n, 1, n, 1, dA_, n, x_, n, 0, y_, n);
    pinv_.apply(y_, dx_);
    tangent_ = -sum_of(dx_, n);
  }

 private:
  Buf b_, x_, y_, dx_;
  large_ad::SvdPinv pinv_;
};

// eigvals (loss sum(Re w)): W = A (copy); geev with vectors; loss = sum(Re w);
//   P = V^-1 (dA V): M = V (copy), getrf(M); Y = dA V (complex gemm); getrs(M, Y);
//   tangent = sum(Re diag(P)).
// geev + 1 complex gemm + getrf + getrs (complex).
class EigvalsJvpFloor final : public JvpFloor {
 public:
  using C = std::complex<double>;
  EigvalsJvpFloor(const Inputs& in, const Inputs& d)
      : JvpFloor(in, d), W_(nn_), w_(in.n), V_(nn_), M_(nn_), dAc_(nn_), Y_(nn_), piv_(in.n) {
    for (std::size_t k = 0; k < nn_; ++k) dAc_.get()[k] = dA_[k];
  }
  void run() override {
    const int n = n_;
    load(W_, A_, nn_);
    expect_ok(cpu::geev<double>(true, n, W_, n, w_, V_, n), "geev");
    double s = 0;
    for (int i = 0; i < n; ++i) s += w_.get()[i].real();
    loss_ = s;
    std::memcpy(static_cast<void*>(M_.get()), V_.get(), nn_ * sizeof(C));
    expect_ok(cpu::getrf<C>(n, n, M_, n, piv_), "getrf");
    cpu::gemm<C>(Trans::N, Trans::N, n, n, n, C(1), dAc_, n, V_, n, C(0), Y_, n);
    cpu::getrs<C>(Trans::N, n, n, M_, n, piv_, Y_, n);
    double t = 0;
    for (int i = 0; i < n; ++i) t += Y_.get()[i + static_cast<std::size_t>(i) * n].real();
    tangent_ = t;
  }

 private:
  Buf W_;
  large_ad::CBuf w_, V_, M_, dAc_, Y_;
  IntBuf piv_;
};

// matrix_exp: exp(A) and L(A, dA) together (large_ad::ExpmFrechet, the algorithm of tenax's rule);
// loss = sum(exp(A)), tangent = sum(L). (tenax's eager JVP also computes exp(A) on its own first.)
// The approximant's products with their tangents, getrf, 2 getrs, the squarings.
class MatrixExpJvpFloor final : public JvpFloor {
 public:
  MatrixExpJvpFloor(const Inputs& in, const Inputs& d) : JvpFloor(in, d), R_(nn_), L_(nn_), frechet_(in.n) {}
  void run() override {
    frechet_.run(A_, dA_, R_, L_);
    loss_ = sum_of(R_, nn_);
    tangent_ = sum_of(L_, nn_);
  }

 private:
  Buf R_, L_;
  large_ad::ExpmFrechet frechet_;
};

std::unique_ptr<JvpFloor> make_jvp_floor(Case c, const Inputs& in, const Inputs& d) {
  switch (c) {
    case Case::qr:
      return std::make_unique<QrJvpFloor>(in, d);
    case Case::eigh:
      return std::make_unique<EighJvpFloor>(in, d);
    case Case::solve:
      return std::make_unique<SolveJvpFloor>(in, d);
    case Case::lu:
      return std::make_unique<LuJvpFloor>(in, d);
    case Case::svd_s:
      return std::make_unique<SvdsJvpFloor>(in, d);
    case Case::lstsq:
      return std::make_unique<LstsqJvpFloor>(in, d);
    case Case::eigvals:
      return std::make_unique<EigvalsJvpFloor>(in, d);
    case Case::matrix_exp:
      return std::make_unique<MatrixExpJvpFloor>(in, d);
    default:
      return {};
  }
}

// ---- checks --------------------------------------------------------------------------------------

LossFn loss_fn(Case c, int n) {
  return [c, n](const std::vector<double>& a, const std::vector<double>& b) { return tenax_loss(c, n, a, b); };
}

// The correctness check of the case and mode (tenax's eager JVP or VJP against central differences
// and against libtorch), computed once per process: first, empty when correct, else the reason;
// second, the measured errors (the eager row's label).
const std::pair<std::string, std::string>& tenax_check_full(Case c, Mode m, int n) {
  static std::map<std::tuple<int, int, int>, std::pair<std::string, std::string>> cache;
  const auto key = std::tuple{static_cast<int>(c), static_cast<int>(m), n};
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  std::string msg, info;
  try {
    const Inputs &x = inputs(c, n), &d = tangent(c, n);
#if defined(TENAX_BENCH_WITH_TORCH)
    msg = m == Mode::jvp
              ? check_jvp("tenax", c, n, x, d, tenax_jvp(c, n), loss_fn(c, n), &torch_jvp(c, n), "libtorch", &info)
              : check_vjp("tenax", c, n, x, d, tenax_vjp(c, n), loss_fn(c, n), &torch_vjp(c, n), "libtorch", &info);
#else
    msg = m == Mode::jvp ? check_jvp("tenax", c, n, x, d, tenax_jvp(c, n), loss_fn(c, n), nullptr, "", &info)
                         : check_vjp("tenax", c, n, x, d, tenax_vjp(c, n), loss_fn(c, n), nullptr, "", &info);
#endif
  } catch (const std::exception& e) {
    msg = std::string("tenax ") + case_name(c) + "_" + mode_name(m) + " n=" + std::to_string(n) +
          ": exception: " + e.what();
  }
  return cache.emplace(key, std::pair{msg, info}).first->second;
}
const std::string& tenax_check(Case c, Mode m, int n) { return tenax_check_full(c, m, n).first; }

// ---- rows ----------------------------------------------------------------------------------------

void eager_row(benchmark::State& state, Case c, Mode m, int n) {
  if (const std::string& err = tenax_check(c, m, n); !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  const Tensors t = make_tensors(c, n);
  bool same = false;
  if (m == Mode::jvp) {
    std::pair<Tensor<double>, Tensor<double>> out;
    CallCounter calls;
    for (auto _ : state) {
      out = tenax::jvp(t.f, t.A, t.dA);
      benchmark::DoNotOptimize(out.second.impl().get());
    }
    calls.report(state);
    const Jvp got = jvp_result(out), &want = tenax_jvp(c, n);
    same = close(got.loss, want.loss, 1e-12) && close(got.tangent, want.tangent, 1e-12);
  } else {
    Tensor<double> y, g;
    CallCounter calls;
    for (auto _ : state) {
      auto [value, pullback] = tenax::vjp(t.f, t.A);
      g = pullback(t.one);
      y = std::move(value);
      benchmark::DoNotOptimize(g.impl().get());
    }
    calls.report(state);
    const Grad got = vjp_result(y, g), &want = tenax_vjp(c, n);
    same = close(got.loss, want.loss, 1e-12) && rel_diff(got.ga, want.ga, n, false) <= 1e-12;
  }
  if (!same) {
    state.SkipWithError("tenax eager: the result left by the timed iterations differs from the checked one");
    return;
  }
  state.SetLabel(tenax_check_full(c, m, n).second);
}

// The compiled program's prepared run timed (the first run, untimed, warms the pool).
template <class Prog>
auto run_program(benchmark::State& state, const Prog& prog, const Tensor<double>& x, const Tensor<double>& y) {
  auto out = prog(x, y);
  CallCounter calls;
  for (auto _ : state) {
    out = prog(x, y);
    benchmark::DoNotOptimize(out.second.impl().get());
  }
  calls.report(state);
  return out;
}

void trace_row(benchmark::State& state, Case c, Mode m, int n) {
  if (const std::string& err = tenax_check(c, m, n); !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  const Tensors t = make_tensors(c, n);
  const Loss& f = t.f;
  bool same = false;
  if (m == Mode::jvp) {
    const auto prog = tenax::compile(
        [&](const Tensor<double>& a, const Tensor<double>& da) { return tenax::jvp(f, a, da); }, t.A, t.dA);
    same = same_bits(jvp_result(run_program(state, prog, t.A, t.dA)), tenax_jvp(c, n));
  } else {
    const auto prog = tenax::compile(
        [&](const Tensor<double>& a, const Tensor<double>& gy) {
          auto [y, pullback] = tenax::vjp(f, a);
          return std::pair{y, pullback(gy)};
        },
        t.A, t.one);
    const auto out = run_program(state, prog, t.A, t.one);
    same = same_bits(vjp_result(out.first, out.second), tenax_vjp(c, n));
  }
  if (!same) {
    state.SkipWithError("tenax trace: the compiled program's result is not bit-identical to eager's");
    return;
  }
}

void floor_row(benchmark::State& state, Case c, Mode m, int n) {
  std::unique_ptr<Floor> f;
  std::string err;
  try {
    if (m == Mode::jvp) {
      auto jf = make_jvp_floor(c, inputs(c, n), tangent(c, n));
      jf->run();
      const Jvp& want = tenax_jvp(c, n);
      const double t = jf->tangent();
      const double e = std::abs(t - want.tangent) / std::max({std::abs(t), std::abs(want.tangent), 1e-300});
      if (!close(jf->grad().loss, want.loss, large_ad::kLossRtol))
        err = "floor: loss " + num(jf->grad().loss) + " differs from tenax " + num(want.loss);
      else if (!(e <= large_ad::kCrossRtol))
        err = "floor: tangent " + num(t) + " differs from tenax's " + num(want.tangent) + ": relative difference " +
              num(e);
      f = std::move(jf);
    } else {
      f = large_ad::make_floor(base_case(c), inputs(c, n));
      f->run();
      const Grad got = f->grad(), &want = tenax_vjp(c, n);
      const double e = rel_diff(got.ga, want.ga, n, large_ad::symmetric_input(base_case(c)));
      if (!close(got.loss, want.loss, large_ad::kLossRtol))
        err = "floor: loss " + num(got.loss) + " differs from tenax " + num(want.loss);
      else if (!(e <= large_ad::kCrossRtol))
        err = "floor: gradient differs from tenax's: relative difference " + num(e);
    }
  } catch (const std::exception& e) {
    err = std::string("floor: exception: ") + e.what();
  }
  if (!err.empty()) {
    err = std::string(case_name(c)) + "_" + mode_name(m) + " n=" + std::to_string(n) + ": " + err;
    state.SkipWithError(err.c_str());
    return;
  }
  large_ad::time_floor(state, *f);
}

const bool registered = [] {
  for (Case c : kCases)
    for (Mode m : kModes)
      for (int n : sizes()) {
        configure_row(benchmark::RegisterBenchmark(row_name(c, m, n, "eager").c_str(), eager_row, c, m, n));
        configure_row(benchmark::RegisterBenchmark(row_name(c, m, n, "trace").c_str(), trace_row, c, m, n));
        configure_row(benchmark::RegisterBenchmark(row_name(c, m, n, "floor").c_str(), floor_row, c, m, n));
      }
  benchmark::AddCustomContext("jvp_vjp", profile_description());
  return true;
}();

}  // namespace

// ---- the plain-type interface (jvp_vjp_cases.hpp) ------------------------------------------------

const Inputs& inputs(Case c, int n) {
  static std::mutex mu;
  static std::map<std::pair<int, int>, Inputs> cache;
  std::lock_guard lock(mu);
  const auto key = std::pair{static_cast<int>(c), n};
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, large_ad::make_inputs(base_case(c), n)).first;
  return it->second;
}

const Inputs& tangent(Case c, int n) {
  static std::mutex mu;
  static std::map<std::pair<int, int>, Inputs> cache;
  std::lock_guard lock(mu);
  const auto key = std::pair{static_cast<int>(c), n};
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, make_tangent(c, n)).first;
  return it->second;
}

const Jvp& tenax_jvp(Case c, int n) {
  static std::map<std::pair<int, int>, Jvp> cache;
  const auto key = std::pair{static_cast<int>(c), n};
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  const Tensors t = make_tensors(c, n);
  return cache.emplace(key, jvp_result(tenax::jvp(t.f, t.A, t.dA))).first->second;
}

const Grad& tenax_vjp(Case c, int n) {
  static std::map<std::pair<int, int>, Grad> cache;
  const auto key = std::pair{static_cast<int>(c), n};
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  const Tensors t = make_tensors(c, n);
  auto [y, pullback] = tenax::vjp(t.f, t.A);
  return cache.emplace(key, vjp_result(y, pullback(t.one))).first->second;
}

double tenax_loss(Case c, int n, const std::vector<double>& a, const std::vector<double>& b) {
  tenax::NoGradGuard no_grad;
  const Tensor<double> A = to_tensor(a, n, n);
  const Tensor<double> B = b.empty() ? Tensor<double>() : to_tensor(b, n, large_ad::second_cols(base_case(c), n));
  return large_ad::loss_of(base_case(c), A, B).item();
}

}  // namespace tenax_bench::jvp_vjp
