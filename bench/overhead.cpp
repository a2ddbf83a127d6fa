// The `overhead` suite (shared BENCHMARKS.md, suite 3): the per-op cost of eager ops on
// one-element tensors, with and without tape recording.
//
// Rows (name overhead/<case>/<dtype>/<shape>/<mode>; see overhead_chain.hpp for the case):
//   overhead/chain100/f64/1/recorded             forward chain of 100 mul/add + backward
//   overhead/chain100/f64/1/unrecorded           the same forward chain, nothing recorded
//   overhead/chain100/f64/1/recorded_anomaly     recorded, with anomaly mode on (its cost)
//   overhead/chain100/f64/1/recorded_anomaly_nostacks   the same without per-op call stacks
//   overhead/chain100/f64/1/compiled             the forward chain traced and compiled (outside the
//                                                timing); one prepared run timed
//   overhead/chain100/f64/1/compiled_grad        value_and_grad of the chain compiled; one prepared
//                                                run (forward and backward steps) timed, per_op per
//                                                forward op as in the recorded row
//   overhead/chain100/f64/1/libtorch_recorded    libtorch reference (ref_libtorch/, when found)
//   overhead/chain100/f64/1/libtorch_unrecorded
// Timed region (both libraries alike): the chain, backward, freeing the tape (the chain's output
// goes out of scope) and clearing the leaf's gradient. Inputs are built outside the timing. The
// counter per_op is time per iteration / 100, in seconds. Each row is checked once before timing
// (value and gradient against the analytic result and against libtorch) and after timing (what
// the last timed iteration left); a failed check turns the row into an error with the reason.
#include <string>

#include "overhead_chain.hpp"
#include "tenax/tenax.hpp"

namespace tenax_bench::overhead {
namespace {

using tenax::Tensor;

Tensor<double> run_chain(const Tensor<double>& x, const Tensor<double>& c) {
  Tensor<double> y = x;
  for (int i = 0; i < kChainOps; i += 2) {
    y = y * c;
    y = y + c;
  }
  return y;
}

// The check of a tenax row, computed once per process.
const std::string& tenax_check(bool recorded) {
  static const std::string msg[2] = {[] {
                                       try {
                                         const ChainResult got = tenax_chain_once(false);
#if defined(TENAX_BENCH_WITH_TORCH)
                                         const ChainResult ref = torch_chain_once(false);
                                         return check_chain("tenax", got, false, &ref, "libtorch");
#else
                                         return check_chain("tenax", got, false, nullptr, "");
#endif
                                       } catch (const std::exception& e) {
                                         return std::string("tenax: exception: ") + e.what();
                                       }
                                     }(),
                                     [] {
                                       try {
                                         const ChainResult got = tenax_chain_once(true);
#if defined(TENAX_BENCH_WITH_TORCH)
                                         const ChainResult ref = torch_chain_once(true);
                                         return check_chain("tenax", got, true, &ref, "libtorch");
#else
                                         return check_chain("tenax", got, true, nullptr, "");
#endif
                                       } catch (const std::exception& e) {
                                         return std::string("tenax: exception: ") + e.what();
                                       }
                                     }()};
  return msg[recorded ? 1 : 0];
}

// anomaly: the same with anomaly mode on (every output and cotangent checked for NaN/Inf, and a
// call stack captured per recorded op).
void chain_recorded(benchmark::State& state, bool anomaly, bool stacks) {
  if (const std::string& err = tenax_check(true); !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  tenax::AnomalyGuard guard(anomaly, stacks);
  const auto c = Tensor<double>::full({1}, kC);
  const auto x = Tensor<double>::full({1}, kX0).requires_grad();
  for (auto _ : state) {
    x.zero_grad();
    Tensor<double> y = run_chain(x, c);
    y.backward();
    benchmark::DoNotOptimize(y.impl().get());
  }
  const Tensor<double> g = x.grad();
  if (!g.defined() || !close(g.item(), chain_analytic().grad)) {
    state.SkipWithError("tenax: gradient left by the timed iterations differs from the analytic value");
    return;
  }
  set_per_op_counters(state, kChainOps);
}

void chain_unrecorded(benchmark::State& state) {
  if (const std::string& err = tenax_check(false); !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  tenax::NoGradGuard no_grad;
  const auto c = Tensor<double>::full({1}, kC);
  const auto x = Tensor<double>::full({1}, kX0);
  double last = 0;
  for (auto _ : state) {
    Tensor<double> y = run_chain(x, c);
    benchmark::DoNotOptimize(y.impl().get());
    last = y.data()[0];
  }
  if (!close(last, chain_analytic().value)) {
    state.SkipWithError("tenax: value of the timed iterations differs from the analytic value");
    return;
  }
  set_per_op_counters(state, kChainOps);
}

// The chain as a compiled program: the forward alone, or value and gradient (trace/program.hpp);
// the first run (untimed) prepares it. Checked against the analytic value (and gradient) before
// and after timing.
void chain_compiled(benchmark::State& state, bool with_grad) {
  if (const std::string& err = tenax_check(with_grad); !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  const auto c = Tensor<double>::full({1}, kC);
  const auto x = Tensor<double>::full({1}, kX0);
  const ChainResult want = chain_analytic();
  auto check = [&](double value, double grad) {
    return close(value, want.value) && (!with_grad || close(grad, want.grad));
  };
  bool ok = false;
  if (with_grad) {
    const auto prog = tenax::compile(
        [&](const Tensor<double>& a) {
          return tenax::value_and_grad([&](const Tensor<double>& b) { return tenax::sum(run_chain(b, c)); }, a);
        },
        x);
    auto out = prog(x);
    ok = check(out.first.item(), out.second.item());
    for (auto _ : state) {
      out = prog(x);
      benchmark::DoNotOptimize(out.second.impl().get());
    }
    ok = ok && check(out.first.item(), out.second.item());
  } else {
    const auto prog = tenax::compile([&](const Tensor<double>& a) { return run_chain(a, c); }, x);
    Tensor<double> y = prog(x);
    ok = check(y.item(), 0);
    for (auto _ : state) {
      y = prog(x);
      benchmark::DoNotOptimize(y.impl().get());
    }
    ok = ok && check(y.item(), 0);
  }
  if (!ok) {
    state.SkipWithError("tenax compiled: the chain's value or gradient differs from the analytic result");
    return;
  }
  set_per_op_counters(state, kChainOps);
}

const bool registered = [] {
  configure_row(benchmark::RegisterBenchmark("overhead/chain100/f64/1/recorded", chain_recorded, false, false));
  configure_row(benchmark::RegisterBenchmark("overhead/chain100/f64/1/recorded_anomaly", chain_recorded, true, true));
  configure_row(
      benchmark::RegisterBenchmark("overhead/chain100/f64/1/recorded_anomaly_nostacks", chain_recorded, true, false));
  configure_row(benchmark::RegisterBenchmark("overhead/chain100/f64/1/unrecorded", chain_unrecorded));
  configure_row(benchmark::RegisterBenchmark("overhead/chain100/f64/1/compiled", chain_compiled, false));
  configure_row(benchmark::RegisterBenchmark("overhead/chain100/f64/1/compiled_grad", chain_compiled, true));
  return true;
}();

}  // namespace

ChainResult tenax_chain_once(bool recorded) {
  const auto c = Tensor<double>::full({1}, kC);
  auto x = Tensor<double>::full({1}, kX0);
  ChainResult r;
  if (recorded) {
    x = x.requires_grad();
    Tensor<double> y = run_chain(x, c);
    r.tracks_grad = y.tracks_grad();
    y.backward();
    r.value = y.item();
    r.grad = x.grad().defined() ? x.grad().item() : NAN;
  } else {
    tenax::NoGradGuard no_grad;
    Tensor<double> y = run_chain(x, c);
    r.tracks_grad = y.tracks_grad();
    r.value = y.item();
  }
  return r;
}

}  // namespace tenax_bench::overhead
