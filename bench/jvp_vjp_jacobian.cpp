// The Jacobian rows of the `jvp_vjp` suite (issue: AD transforms): full Jacobians and Hessians.
//
// Rows (jvp_vjp/<case>/f64/<size>/<mode>):
//   solve_map_jacrev, solve_map_jacfwd  (size 64x64: a map from 64 to 64 numbers)
//       J of f(x) = solve(A, tanh(x)), A = well(64, 1), x = data((64,1), 2) (large_ad's solve
//       inputs), by tenax::jacrev / tenax::jacfwd; J = A^-1 diag(1 - tanh(x)^2), 64 x 1 x 64 x 1.
//   mlp_loss_jacfwd, mlp_loss_hessian   (size 16x8: W of the mlp workload 8x16->8, 128 numbers)
//       the gradient (by forward mode, one JVP per element of W) and the Hessian (128 x 128 as
//       16 x 8 x 16 x 8) of L(W) = mean((relu(x W + b) - t)^2) at W0 (workloads/mlp_cases.hpp, b = b0).
//   modes: eager (the transform called), trace (the function x -> jacrev(f, x), ... compiled outside
//   the timing; one prepared run timed), floor (below); pytorch and jax: refs.py, torch.func (or
//   functorch) and jax.jacrev / jacfwd / hessian, jitted for JAX.
// The floor is what the target is measured against: n single derivative calls, each at its
// own floor (the provider calls a hand-written JVP, VJP or HVP of the function cannot avoid, on raw
// pooled buffers): solve_map_jacrev n x (getrf + getrs + getrs^T), solve_map_jacfwd n x (getrf + 2
// getrs), mlp_loss_jacfwd n x 2 gemm (x W and x V, then the tangent of the mean), mlp_loss_hessian
// n x 4 gemm (x W, the gradient x^T G, x V, and H v = x^T (2/N m o (x V))). Each floor also computes
// the matrix it stands for, which checks tenax's result (outside the timing), and trace rows must
// equal eager bit for bit.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "jvp_vjp_cases.hpp"
#include "large_ad_tenax.hpp"
#include "mlp_model.hpp"

namespace tenax_bench::jvp_vjp {
namespace {

using large_ad::Buf;
using large_ad::CallCounter;
using large_ad::expect_ok;
using large_ad::to_tensor;
using tenax::Tensor;
namespace cpu = tenax::cpu;
using cpu::Trans;
namespace mlpw = tenax_workloads::mlp;

enum class JacCase { solve_map_jacrev, solve_map_jacfwd, mlp_loss_jacfwd, mlp_loss_hessian };
constexpr JacCase kJacCases[] = {JacCase::solve_map_jacrev, JacCase::solve_map_jacfwd, JacCase::mlp_loss_jacfwd,
                                 JacCase::mlp_loss_hessian};

const char* jac_name(JacCase c) {
  switch (c) {
    case JacCase::solve_map_jacrev:
      return "solve_map_jacrev";
    case JacCase::solve_map_jacfwd:
      return "solve_map_jacfwd";
    case JacCase::mlp_loss_jacfwd:
      return "mlp_loss_jacfwd";
    case JacCase::mlp_loss_hessian:
      return "mlp_loss_hessian";
  }
  return "?";
}
bool is_solve(JacCase c) { return c == JacCase::solve_map_jacrev || c == JacCase::solve_map_jacfwd; }
constexpr int kSolveN = 64;
const mlpw::Case& mlp_case() { return mlpw::kCases[0]; }  // 8x16->8
std::string size_name(JacCase c) {
  return is_solve(c) ? "64x64" : std::to_string(mlp_case().din) + "x" + std::to_string(mlp_case().dout);
}

// ---- the functions and their tenax transforms -----------------------------------------------------

struct SolveMap {
  Tensor<double> A;
  Tensor<double> operator()(const Tensor<double>& x) const { return tenax::linalg::solve(A, tenax::tanh(x)); }
};
struct MlpLoss {
  Tensor<double> x, t, b;
  Tensor<double> operator()(const Tensor<double>& W) const {
    return tenax::mean(tenax::square(tenax::relu(tenax::matmul(x, W) + b) - t));
  }
};

struct Problem {
  SolveMap f;
  MlpLoss L;
  Tensor<double> x;  // the point: x for the solve map, W0 for the mlp loss
};

Problem make_problem(JacCase c) {
  Problem p;
  if (is_solve(c)) {
    const large_ad::Inputs in = large_ad::make_inputs(large_ad::Case::solve, kSolveN);
    p.f.A = to_tensor(in.a, kSolveN, kSolveN);
    p.x = to_tensor(in.b, kSolveN, 1);
  } else {
    const mlpw::Data d = mlpw::make_data(mlp_case());
    p.L = {d.x, d.t, d.b0};
    p.x = d.W0;
  }
  return p;
}

Tensor<double> tenax_result(JacCase c, const Problem& p, const Tensor<double>& x) {
  switch (c) {
    case JacCase::solve_map_jacrev:
      return tenax::jacrev(p.f, x);
    case JacCase::solve_map_jacfwd:
      return tenax::jacfwd(p.f, x);
    case JacCase::mlp_loss_jacfwd:
      return tenax::jacfwd(p.L, x);
    case JacCase::mlp_loss_hessian:
      return tenax::hessian(p.L, x);
  }
  return {};
}

// ---- floors ---------------------------------------------------------------------------------------

// n single derivative calls at their floors; result() is the matrix they give (column-major,
// rows x cols as the Jacobian's m x n matrix).
class JacFloor {
 public:
  virtual ~JacFloor() = default;
  virtual void run() = 0;
  const std::vector<double>& result() const { return out_; }

 protected:
  std::vector<double> out_;
};

// f(x) = A^-1 tanh(x), one VJP (rows) or JVP (columns) per element, each with its own forward.
class SolveMapFloor final : public JacFloor {
 public:
  SolveMapFloor(const large_ad::Inputs& in, bool reverse)
      : n_(in.n),
        reverse_(reverse),
        A_(static_cast<std::size_t>(n_) * n_),
        x_(n_),
        LU_(A_.size()),
        y_(n_),
        s_(n_),
        v_(n_),
        piv_(n_) {
    const std::vector<double> a = large_ad::col_major(in.a, n_, n_);
    std::copy(a.begin(), a.end(), A_.begin());
    for (int i = 0; i < n_; ++i) x_[i] = in.b[static_cast<std::size_t>(i)];
    out_.assign(A_.size(), 0.0);
  }
  void run() override {
    const int n = n_;
    for (int k = 0; k < n; ++k) {
      std::memcpy(LU_.data(), A_.data(), A_.size() * sizeof(double));
      expect_ok(cpu::getrf<double>(n, n, LU_.data(), n, piv_.data()), "getrf");
      for (int i = 0; i < n; ++i) y_[i] = std::tanh(x_[i]), s_[i] = y_[i];
      cpu::getrs<double>(Trans::N, n, 1, LU_.data(), n, piv_.data(), s_.data(), n);  // the primal
      std::fill(v_.begin(), v_.end(), 0.0);
      if (reverse_) {  // row k: (A^-T e_k) o (1 - y^2)
        v_[k] = 1;
        cpu::getrs<double>(Trans::T, n, 1, LU_.data(), n, piv_.data(), v_.data(), n);
        for (int j = 0; j < n; ++j) out_[k + static_cast<std::size_t>(j) * n] = v_[j] * (1 - y_[j] * y_[j]);
      } else {  // column k: A^-1 (e_k (1 - y_k^2))
        v_[k] = 1 - y_[k] * y_[k];
        cpu::getrs<double>(Trans::N, n, 1, LU_.data(), n, piv_.data(), v_.data(), n);
        std::copy(v_.begin(), v_.end(), out_.begin() + static_cast<std::ptrdiff_t>(k) * n);
      }
    }
  }

 private:
  int n_;
  bool reverse_;
  std::vector<double> A_, x_, LU_, y_, s_, v_;
  std::vector<std::int32_t> piv_;
};

// L(W) = mean((relu(x W + b) - t)^2), W din x dout, N = batch dout. Per direction V = e_k: the
// forward Z = x W + b and its mask; jacfwd: the tangent 2/N sum(R o m o (x V)) (2 gemm: x W, x V);
// hessian: the gradient x^T (2/N R o m) and H v = x^T (2/N m o (x V)) (4 gemm).
class MlpFloor final : public JacFloor {
 public:
  MlpFloor(const mlpw::Case& c, bool hessian)
      : B_(static_cast<int>(c.batch)),
        I_(static_cast<int>(c.din)),
        O_(static_cast<int>(c.dout)),
        hessian_(hessian),
        x_(large_ad::col_major(mlpw::x_values(c), B_, I_)),
        t_(large_ad::col_major(mlpw::t_values(c), B_, O_)),
        W_(large_ad::col_major(mlpw::w0_values(c), I_, O_)),
        b_(mlpw::b0_values(c)),
        V_(W_.size()),
        Z_(t_.size()),
        P_(t_.size()),
        G_(t_.size()),
        gW_(W_.size()),
        Hv_(W_.size()) {
    const std::size_t n = W_.size();
    out_.assign(hessian ? n * n : n, 0.0);
  }
  void run() override {
    const int B = B_, I = I_, O = O_;
    const std::size_t n = W_.size();
    const double scale = 2.0 / static_cast<double>(B * O);
    for (std::size_t k = 0; k < n; ++k) {
      cpu::gemm<double>(Trans::N, Trans::N, B, O, I, 1, x_.data(), B, W_.data(), I, 0, Z_.data(), B);
      std::fill(V_.begin(), V_.end(), 0.0);
      V_[k] = 1;
      cpu::gemm<double>(Trans::N, Trans::N, B, O, I, 1, x_.data(), B, V_.data(), I, 0, P_.data(), B);
      double dL = 0;
      for (int j = 0; j < O; ++j)
        for (int i = 0; i < B; ++i) {
          const std::size_t e = static_cast<std::size_t>(i) + static_cast<std::size_t>(j) * B;
          const double z = Z_[e] + b_[static_cast<std::size_t>(j)];
          const double m = z > 0 ? 1.0 : 0.0;
          const double p = P_[e];               // (x V)_e
          G_[e] = scale * (m * z - t_[e]) * m;  // the gradient's seed 2/N R o m
          dL += G_[e] * p;                      // the tangent of the loss
          P_[e] = scale * m * p;                // H v's seed 2/N m o (x V)
        }
      if (!hessian_) {
        out_[k] = dL;
        continue;
      }
      cpu::gemm<double>(Trans::T, Trans::N, I, O, B, 1, x_.data(), B, G_.data(), B, 0, gW_.data(), I);
      cpu::gemm<double>(Trans::T, Trans::N, I, O, B, 1, x_.data(), B, P_.data(), B, 0, Hv_.data(), I);
      std::copy(Hv_.begin(), Hv_.end(), out_.begin() + static_cast<std::ptrdiff_t>(k * n));
    }
  }

 private:
  int B_, I_, O_;
  bool hessian_;
  std::vector<double> x_, t_, W_, b_, V_, Z_, P_, G_, gW_, Hv_;
};

std::unique_ptr<JacFloor> make_floor(JacCase c) {
  if (is_solve(c))
    return std::make_unique<SolveMapFloor>(large_ad::make_inputs(large_ad::Case::solve, kSolveN),
                                           c == JacCase::solve_map_jacrev);
  return std::make_unique<MlpFloor>(mlp_case(), c == JacCase::mlp_loss_hessian);
}

// "" when tenax's result matches the floor's matrix to 1e-12 (relative, max norm), else the reason.
std::string check(JacCase c, const Tensor<double>& got) {
  auto f = make_floor(c);
  f->run();
  const std::vector<double> g = got.contiguous().to_vector(), &w = f->result();
  if (g.size() != w.size())
    return std::string(jac_name(c)) + ": " + std::to_string(g.size()) + " entries, the floor has " +
           std::to_string(w.size());
  double err = 0, scale = 0;
  for (std::size_t i = 0; i < g.size(); ++i)
    err = std::max(err, std::abs(g[i] - w[i])), scale = std::max(scale, std::abs(w[i]));
  if (!(err <= 1e-12 * scale))
    return std::string(jac_name(c)) + ": differs from the floor's matrix by " + std::to_string(err / scale) +
           " (relative, max norm)";
  return "";
}

const std::string& checked(JacCase c) {
  static std::map<int, std::string> cache;
  if (auto it = cache.find(static_cast<int>(c)); it != cache.end()) return it->second;
  std::string msg;
  try {
    const Problem p = make_problem(c);
    msg = check(c, tenax_result(c, p, p.x));
  } catch (const std::exception& e) {
    msg = std::string(jac_name(c)) + ": exception: " + e.what();
  }
  return cache.emplace(static_cast<int>(c), msg).first->second;
}

void eager_row(benchmark::State& state, JacCase c) {
  if (const std::string& err = checked(c); !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  const Problem p = make_problem(c);
  Tensor<double> J;
  CallCounter calls;
  for (auto _ : state) {
    J = tenax_result(c, p, p.x);
    benchmark::DoNotOptimize(J.impl().get());
  }
  calls.report(state);
}

void trace_row(benchmark::State& state, JacCase c) {
  if (const std::string& err = checked(c); !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  const Problem p = make_problem(c);
  const auto prog = tenax::compile([&](const Tensor<double>& x) { return tenax_result(c, p, x); }, p.x);
  Tensor<double> J = prog(p.x);
  CallCounter calls;
  for (auto _ : state) {
    J = prog(p.x);
    benchmark::DoNotOptimize(J.impl().get());
  }
  calls.report(state);
  const std::vector<double> a = J.to_vector(), b = tenax_result(c, p, p.x).to_vector();
  if (a.size() != b.size() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) != 0)
    state.SkipWithError("tenax trace: the compiled program's result is not bit-identical to eager's");
}

void floor_row(benchmark::State& state, JacCase c) {
  auto f = make_floor(c);
  large_ad::time_floor(state, *f);
}

const bool registered = [] {
  for (JacCase c : kJacCases) {
    const std::string base = std::string("jvp_vjp/") + jac_name(c) + "/f64/" + size_name(c) + "/";
    configure_row(benchmark::RegisterBenchmark((base + "eager").c_str(), eager_row, c));
    configure_row(benchmark::RegisterBenchmark((base + "trace").c_str(), trace_row, c));
    configure_row(benchmark::RegisterBenchmark((base + "floor").c_str(), floor_row, c));
  }
  return true;
}();

}  // namespace
}  // namespace tenax_bench::jvp_vjp
