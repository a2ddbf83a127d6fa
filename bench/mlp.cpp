// The `mlp` suite (shared BENCHMARKS.md, suite 4): SGD training of a one-layer relu network,
// float64, one thread.
//
// Rows (mlp/train/f64/<batch>x<din>-><dout>/<mode>):
//   eager      the step function run eagerly (tape recorded and freed every step)
//   compiled   the step (loss, gradients and SGD update) as one prepared program, compiled outside
//              the timing
//   floor      the same training on raw buffers: two gemm calls per step plus loops (no tenax)
//   libtorch   the same training in libtorch (ref_libtorch/mlp_torch.cpp, when found)
// Timed region: the whole training from W0, b0 (1000 steps at 8x16->8, 100 at 64x256->64).
// Checked once before timing: the final loss within 1e-12 relative of the reference, and eager and
// compiled bit-identical (final loss and weights); after timing, the last run's loss again.
#include <cstring>
#include <string>
#include <vector>

#include "common/bench_common.hpp"
#include "mlp_model.hpp"
#include "tenax/backend/cpu_provider.hpp"

namespace tenax_bench::mlp {

using namespace tenax_workloads::mlp;  // the workload (workloads/mlp_cases.hpp)
namespace {

std::string bit_identical(const Tensor<double>& a, const Tensor<double>& b) {
  const auto va = a.contiguous().to_vector(), vb = b.contiguous().to_vector();
  if (va.size() == vb.size() && std::memcmp(va.data(), vb.data(), va.size() * sizeof(double)) == 0) return "";
  return "eager and compiled weights differ";
}

// The check of a case, computed once per process.
const std::string& check(int k) {
  static std::string msg[std::size(kCases)];
  static bool done[std::size(kCases)] = {};
  if (!done[k]) {
    done[k] = true;
    try {
      const Case& c = kCases[k];
      const Data d = make_data(c);
      const auto [le, We, be] = train(c, d, sgd_step);
      const auto step = tenax::compile(sgd_step, d.W0, d.b0, d.x, d.t);
      const auto [lc, Wc, bc] = train(c, d, step);
      msg[k] = check_loss(c, le);
      if (msg[k].empty()) msg[k] = check_loss(c, lc);
      if (msg[k].empty() && le != lc) msg[k] = "eager and compiled final losses differ";
      if (msg[k].empty()) msg[k] = bit_identical(We, Wc);
      if (msg[k].empty()) msg[k] = bit_identical(be, bc);
    } catch (const std::exception& e) {
      msg[k] = std::string("exception: ") + e.what();
    }
  }
  return msg[k];
}

void train_row(benchmark::State& state, int k, bool compiled) {
  if (const std::string& err = check(k); !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  const Case& c = kCases[k];
  const Data d = make_data(c);
  const auto program = tenax::compile(sgd_step, d.W0, d.b0, d.x, d.t);
  double loss = 0;
  for (auto _ : state) {
    loss = compiled ? std::get<0>(train(c, d, program)) : std::get<0>(train(c, d, sgd_step));
    benchmark::DoNotOptimize(loss);
  }
  if (const std::string err = check_loss(c, loss); !err.empty()) state.SkipWithError(err.c_str());
  state.counters["steps"] = benchmark::Counter(c.steps);
}

// The floor: the same training on raw column-major buffers, with the two gemm calls per step the
// computation cannot avoid (z = x W, gW = x^T g) and plain loops for the rest (bias, relu, loss,
// its gradient, the bias gradient and the update). Buffers are allocated outside the timing.
struct Floor {
  const Case& c;
  std::vector<double> x, t, W0, b0, W, b, z, g, gW;
  explicit Floor(const Case& cs) : c(cs) {
    const Data d = make_data(cs);
    x = d.x.contiguous().to_vector();
    t = d.t.contiguous().to_vector();
    W0 = d.W0.contiguous().to_vector();
    b0 = d.b0.contiguous().to_vector();
    z.resize(static_cast<std::size_t>(c.batch * c.dout));
    g.resize(z.size());
    gW.resize(W0.size());
  }
  double train() {
    W = W0;
    b = b0;
    const std::int64_t B = c.batch, I = c.din, O = c.dout;
    const double inv = 1.0 / static_cast<double>(B * O);
    double loss = 0;
    for (int s = 0; s < c.steps; ++s) {
      tenax::cpu::gemm<double>(tenax::cpu::Trans::N, tenax::cpu::Trans::N, B, O, I, 1.0, x.data(), B, W.data(), I, 0.0,
                               z.data(), B);
      double l = 0;
      for (std::int64_t j = 0; j < O; ++j)
        for (std::int64_t i = 0; i < B; ++i) {
          const std::size_t k = static_cast<std::size_t>(i + j * B);
          const double zz = z[k] + b[static_cast<std::size_t>(j)], r = (zz > 0 ? zz : 0) - t[k];
          l += r * r;
          g[k] = zz > 0 ? 2 * r * inv : 0;
        }
      loss = l * inv;
      tenax::cpu::gemm<double>(tenax::cpu::Trans::T, tenax::cpu::Trans::N, I, O, B, 1.0, x.data(), B, g.data(), B, 0.0,
                               gW.data(), I);
      for (std::size_t k = 0; k < W.size(); ++k) W[k] -= kLr * gW[k];
      for (std::int64_t j = 0; j < O; ++j) {
        double gb = 0;
        for (std::int64_t i = 0; i < B; ++i) gb += g[static_cast<std::size_t>(i + j * B)];
        b[static_cast<std::size_t>(j)] -= kLr * gb;
      }
    }
    return loss;
  }
};

void floor_row(benchmark::State& state, int k) {
  const Case& c = kCases[k];
  Floor f(c);
  if (const std::string err = check_loss(c, f.train()); !err.empty()) {
    state.SkipWithError(("floor: " + err).c_str());
    return;
  }
  double loss = 0;
  for (auto _ : state) {
    loss = f.train();
    benchmark::DoNotOptimize(loss);
  }
  state.counters["steps"] = benchmark::Counter(c.steps);
}

const bool registered = [] {
  for (int k = 0; k < static_cast<int>(std::size(kCases)); ++k) {
    const std::string base = std::string("mlp/train/f64/") + kCases[k].name + "/";
    configure_row(benchmark::RegisterBenchmark((base + "eager").c_str(), train_row, k, false));
    configure_row(benchmark::RegisterBenchmark((base + "compiled").c_str(), train_row, k, true));
    configure_row(benchmark::RegisterBenchmark((base + "floor").c_str(), floor_row, k));
  }
  return true;
}();

}  // namespace
}  // namespace tenax_bench::mlp
