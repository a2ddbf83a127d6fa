// libtorch reference rows of the `overhead` suite (see overhead.cpp and overhead_chain.hpp):
//   overhead/chain100/f64/1/libtorch_recorded    torch::Tensor of shape {1}, double, requires_grad
//   overhead/chain100/f64/1/libtorch_unrecorded  torch::NoGradGuard, inputs not requiring grad
// Same timed region as the tenax rows: chain, backward, freeing the graph, clearing x.grad (the
// C++ spelling of x.grad = None). libtorch runs with one thread (libtorch_setup()).
#if defined(TENAX_BENCH_WITH_TORCH)
#include <torch/torch.h>

#include <string>

#include "overhead_chain.hpp"

namespace tenax_bench::overhead {
namespace {

torch::Tensor run_chain(const torch::Tensor& x, const torch::Tensor& c) {
  torch::Tensor y = x;
  for (int i = 0; i < kChainOps; i += 2) {
    y = y * c;
    y = y + c;
  }
  return y;
}

torch::TensorOptions f64() { return torch::TensorOptions().dtype(torch::kFloat64); }

const std::string& torch_check(bool recorded) {
  static const std::string msg[2] = {[] {
                                       try {
                                         const ChainResult got = torch_chain_once(false);
                                         const ChainResult ref = tenax_chain_once(false);
                                         return check_chain("libtorch", got, false, &ref, "tenax");
                                       } catch (const std::exception& e) {
                                         return std::string("libtorch: exception: ") + e.what();
                                       }
                                     }(),
                                     [] {
                                       try {
                                         const ChainResult got = torch_chain_once(true);
                                         const ChainResult ref = tenax_chain_once(true);
                                         return check_chain("libtorch", got, true, &ref, "tenax");
                                       } catch (const std::exception& e) {
                                         return std::string("libtorch: exception: ") + e.what();
                                       }
                                     }()};
  return msg[recorded ? 1 : 0];
}

void chain_recorded(benchmark::State& state) {
  if (const std::string& err = torch_check(true); !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  const torch::Tensor c = torch::full({1}, kC, f64());
  const torch::Tensor x = torch::full({1}, kX0, f64()).requires_grad_(true);
  for (auto _ : state) {
    x.mutable_grad().reset();
    torch::Tensor y = run_chain(x, c);
    y.backward();
    benchmark::DoNotOptimize(y.data_ptr());
  }
  if (!x.grad().defined() || !close(x.grad().item<double>(), chain_analytic().grad)) {
    state.SkipWithError("libtorch: gradient left by the timed iterations differs from the analytic value");
    return;
  }
  set_per_op_counters(state, kChainOps);
}

void chain_unrecorded(benchmark::State& state) {
  if (const std::string& err = torch_check(false); !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  torch::NoGradGuard no_grad;
  const torch::Tensor c = torch::full({1}, kC, f64());
  const torch::Tensor x = torch::full({1}, kX0, f64());
  double last = 0;
  for (auto _ : state) {
    torch::Tensor y = run_chain(x, c);
    benchmark::DoNotOptimize(y.data_ptr());
    last = *y.data_ptr<double>();
  }
  if (!close(last, chain_analytic().value)) {
    state.SkipWithError("libtorch: value of the timed iterations differs from the analytic value");
    return;
  }
  set_per_op_counters(state, kChainOps);
}

const bool registered = [] {
  configure_row(benchmark::RegisterBenchmark("overhead/chain100/f64/1/libtorch_recorded", chain_recorded));
  configure_row(benchmark::RegisterBenchmark("overhead/chain100/f64/1/libtorch_unrecorded", chain_unrecorded));
  return true;
}();

}  // namespace

ChainResult torch_chain_once(bool recorded) {
  const torch::Tensor c = torch::full({1}, kC, f64());
  ChainResult r;
  if (recorded) {
    const torch::Tensor x = torch::full({1}, kX0, f64()).requires_grad_(true);
    torch::Tensor y = run_chain(x, c);
    r.tracks_grad = y.requires_grad();
    y.backward();
    r.value = y.item<double>();
    r.grad = x.grad().defined() ? x.grad().item<double>() : NAN;
  } else {
    torch::NoGradGuard no_grad;
    const torch::Tensor x = torch::full({1}, kX0, f64());
    torch::Tensor y = run_chain(x, c);
    r.tracks_grad = y.requires_grad();
    r.value = y.item<double>();
  }
  return r;
}

}  // namespace tenax_bench::overhead
#endif  // TENAX_BENCH_WITH_TORCH
