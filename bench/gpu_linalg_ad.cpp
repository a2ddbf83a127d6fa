// The `gpu_linalg_ad` suite (shared BENCHMARKS.md, suite 5): the jvp_vjp cases (qr, eigh, solve,
// lu, svd_s, lstsq, eigvals, matrix_exp; JVP and VJP of the same scalar losses, f64) on the GPU,
// n = 2, 4, 8, 256, 512
// (TENAX_GPU_SIZES overrides). Built with the CUDA backend; every row reports why it cannot run
// when no CUDA device is visible.
//
// Rows (name gpu_linalg_ad/<case>_<jvp|vjp>/f64/<n>x<n>/<mode>):
//   eager     tenax::jvp / tenax::vjp + pullback on device tensors, then a device synchronisation;
//             inputs uploaded before timing, nothing downloaded in the timed region.
//   trace     the same function compiled on the device outside the timing; one prepared run and a
//             synchronisation per iteration (latency).
//   deferred  K = TENAX_GPU_DEFERRED (default 32) prepared runs queued back to back, then one
//             synchronisation; the reported time is the sample divided by K (throughput; a separate
//             row, never averaged with the latency rows).
//
// Correctness, outside the timing (a failure makes the row an error with the reason): the device
// result (loss and tangent, or loss and gradient) against the CPU float64 eager result of the same
// function at the same inputs, within the cross-implementation tolerance of large_ad_cases.hpp;
// the CPU result itself is checked against central differences (check_jvp / check_vjp). Each row
// reports that agreement as the counter vs_cpu (the derivative's relative difference), and the
// deferred rows their K. PyTorch's and JAX's rows, latency and deferred alike, come from
// bench/ref_python/refs.py (<fw> and <fw>_deferred).
#include <chrono>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "jvp_vjp_cases.hpp"
#include "large_ad_tenax.hpp"

namespace tenax_bench::gpu_linalg_ad {
namespace {

using jvp_vjp::Case;
using jvp_vjp::Jvp;
using jvp_vjp::Mode;
using large_ad::Grad;
using large_ad::Inputs;
using large_ad::num;
using large_ad::to_row_major;
using large_ad::to_tensor;
using tenax::Tensor;

const tenax::Device kGpu = tenax::Device::cuda(0);

std::vector<int> sizes() {
  return large_ad::sizes_from_env("TENAX_GPU_SIZES", {2, 4, 8, 256, 512}, {2, 4, 8, 256, 512});
}

int deferred_runs() {
  const char* s = std::getenv("TENAX_GPU_DEFERRED");
  const int k = s && *s ? std::atoi(s) : 32;
  return k > 0 ? k : 32;
}

std::string gpu_row_name(Case c, Mode m, int n, const char* mode) {
  return std::string("gpu_linalg_ad/") + jvp_vjp::case_name(c) + "_" + jvp_vjp::mode_name(m) + "/f64/" +
         std::to_string(n) + "x" + std::to_string(n) + "/" + mode;
}

// The case's tensors on device d: A, the tangent dA, the constant b (solve) and the cotangent 1.
struct Setup {
  Case c;
  Tensor<double> A, dA, b, one;
  Tensor<double> loss(const Tensor<double>& a) const { return large_ad::loss_of(jvp_vjp::base_case(c), a, b); }
};

Setup make_setup(Case c, int n, tenax::Device d) {
  const Inputs in = large_ad::make_inputs(jvp_vjp::base_case(c), n), t = jvp_vjp::make_tangent(c, n);
  Setup s{c, to_tensor(in.a, n, n).to(d), to_tensor(t.a, n, n).to(d), {}, {}};
  if (!in.b.empty()) s.b = to_tensor(in.b, n, large_ad::second_cols(jvp_vjp::base_case(c), n)).to(d);
  tenax::NoGradGuard no_grad;
  s.one = Tensor<double>::ones(s.loss(s.A).shape(), d);
  return s;
}

// The function each mode times: (A, dA) -> (loss, tangent) or (A, gy) -> (loss, gradient).
auto jvp_fn(const Setup& s) {
  return [&s](const Tensor<double>& a, const Tensor<double>& da) {
    return tenax::jvp([&s](const Tensor<double>& x) { return s.loss(x); }, a, da);
  };
}
auto vjp_fn(const Setup& s) {
  return [&s](const Tensor<double>& a, const Tensor<double>& gy) {
    auto [y, pullback] = tenax::vjp([&s](const Tensor<double>& x) { return s.loss(x); }, a);
    return std::pair{y, pullback(gy)};
  };
}

// The loss and the tangent or gradient (row-major), read back to the host.
Grad result_of(const std::pair<Tensor<double>, Tensor<double>>& out, Mode m) {
  if (m == Mode::jvp) return {out.first.item(), {out.second.item()}, {}};
  return {out.first.item(), to_row_major(out.second.to(tenax::Device::cpu())), {}};
}

// The CPU float64 reference, checked against central differences. Empty reason when fine.
std::pair<Grad, std::string> reference(Case c, Mode m, int n) {
  const Setup s = make_setup(c, n, tenax::Device::cpu());
  const Inputs in = large_ad::make_inputs(jvp_vjp::base_case(c), n), d = jvp_vjp::make_tangent(c, n);
  const large_ad::LossFn loss = [c, n](const std::vector<double>& a, const std::vector<double>& b) {
    tenax::NoGradGuard no_grad;
    const Tensor<double> B =
        b.empty() ? Tensor<double>() : to_tensor(b, n, large_ad::second_cols(jvp_vjp::base_case(c), n));
    return large_ad::loss_of(jvp_vjp::base_case(c), to_tensor(a, n, n), B).item();
  };
  if (m == Mode::jvp) {
    const Grad g = result_of(jvp_fn(s)(s.A, s.dA), m);
    const Jvp j{g.loss, g.ga[0]};
    return {g, jvp_vjp::check_jvp("cpu", c, n, in, d, j, loss, nullptr, "", nullptr)};
  }
  const Grad g = result_of(vjp_fn(s)(s.A, s.one), m);
  return {g, jvp_vjp::check_vjp("cpu", c, n, in, d, g, loss, nullptr, "", nullptr)};
}

// Why the device result is wrong, or empty; e: the derivative's relative difference from the CPU's.
std::string compare(const Grad& got, const Grad& want, Case c, int n, double& e) {
  e = large_ad::rel_diff(got.ga, want.ga, got.ga.size() == 1 ? 1 : n,
                         got.ga.size() > 1 && large_ad::symmetric_input(jvp_vjp::base_case(c)));
  if (!close(got.loss, want.loss, large_ad::kLossRtol * 100))
    return "loss " + num(got.loss) + " differs from the CPU's " + num(want.loss);
  if (!(e <= large_ad::kCrossRtol))
    return "derivative differs from the CPU's: relative difference " + num(e) + " (limit " + num(large_ad::kCrossRtol) +
           ")";
  return {};
}

enum class Timing { eager, trace, deferred };

void row(benchmark::State& state, Case c, Mode m, int n, Timing timing) {
  const std::string tag = std::string(jvp_vjp::case_name(c)) + "_" + jvp_vjp::mode_name(m) + " n=" + std::to_string(n);
  if (tenax::cuda::device_count() == 0) {
    state.SkipWithError(tenax::config().cuda ? "no CUDA device is visible (the CUDA backend is built)"
                                             : "the CUDA backend is not built into this tenax");
    return;
  }
  try {
    const auto [want, bad] = reference(c, m, n);
    if (!bad.empty()) {
      state.SkipWithError((tag + ": CPU reference: " + bad).c_str());
      return;
    }
    const Setup s = make_setup(c, n, kGpu);
    const Tensor<double>& second = m == Mode::jvp ? s.dA : s.one;
    auto time_with = [&](const auto& f) {
      std::pair<Tensor<double>, Tensor<double>> out = f(s.A, second);  // warm-up, and the checked result
      tenax::cuda::synchronize(0);
      double vs_cpu = 0;
      if (const std::string why = compare(result_of(out, m), want, c, n, vs_cpu); !why.empty()) {
        state.SkipWithError((tag + ": " + why).c_str());
        return;
      }
      if (timing == Timing::deferred) {
        const int k = deferred_runs();
        for (auto _ : state) {
          const auto t0 = std::chrono::steady_clock::now();
          for (int i = 0; i < k; ++i) out = f(s.A, second);
          tenax::cuda::synchronize(0);
          const auto t1 = std::chrono::steady_clock::now();
          state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count() / k);
        }
        state.counters["K"] = k;
      } else {
        for (auto _ : state) {
          out = f(s.A, second);
          tenax::cuda::synchronize(0);
        }
      }
      // The agreement with the CPU float64 result (the derivative's relative difference).
      state.counters["vs_cpu"] = vs_cpu;
    };
    if (timing == Timing::eager) {
      if (m == Mode::jvp)
        time_with(jvp_fn(s));
      else
        time_with(vjp_fn(s));
    } else if (m == Mode::jvp) {
      time_with(tenax::compile(jvp_fn(s), s.A, s.dA));
    } else {
      time_with(tenax::compile(vjp_fn(s), s.A, s.one));
    }
  } catch (const std::exception& e) {
    state.SkipWithError((tag + ": exception: " + e.what()).c_str());
  }
}

const bool registered = [] {
  for (Case c : jvp_vjp::kCases)
    for (Mode m : jvp_vjp::kModes)
      for (int n : sizes()) {
        configure_row(
            benchmark::RegisterBenchmark(gpu_row_name(c, m, n, "eager").c_str(), row, c, m, n, Timing::eager));
        configure_row(
            benchmark::RegisterBenchmark(gpu_row_name(c, m, n, "trace").c_str(), row, c, m, n, Timing::trace));
        // Manual time (sample / K) instead of configure_row's real time; the same statistics.
        benchmark::RegisterBenchmark(gpu_row_name(c, m, n, "deferred").c_str(), row, c, m, n, Timing::deferred)
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond)
            ->ComputeStatistics("q1", stat_q1)
            ->ComputeStatistics("q3", stat_q3)
            ->ComputeStatistics("iqr", stat_iqr)
            ->DisplayAggregatesOnly(true);
      }
  benchmark::AddCustomContext("gpu_linalg_ad", "K = " + std::to_string(deferred_runs()) + " deferred runs per sample");
  return true;
}();

}  // namespace
}  // namespace tenax_bench::gpu_linalg_ad
