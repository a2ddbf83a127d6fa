// libtorch reference rows of the `mlp` suite (see mlp.cpp): mlp/train/f64/<shape>/libtorch.
// The same training, inputs and timed region: forward, loss, backward, and the SGD update under
// NoGradGuard, from W0 and b0 each timed run; one thread (libtorch_setup()).
#if defined(TENAX_BENCH_WITH_TORCH)
#include <torch/torch.h>

#include <string>

#include "common/bench_common.hpp"
#include "mlp_cases.hpp"

namespace tenax_bench::mlp {

using namespace tenax_workloads::mlp;  // the workload (workloads/mlp_cases.hpp)

namespace {

torch::Tensor from_rows(const std::vector<double>& v, std::int64_t r, std::int64_t c) {
  return torch::tensor(v, torch::TensorOptions().dtype(torch::kFloat64)).reshape({r, c}).clone();
}

double train_torch(const Case& c) {
  const torch::Tensor x = from_rows(x_values(c), c.batch, c.din), t = from_rows(t_values(c), c.batch, c.dout);
  torch::Tensor W = from_rows(w0_values(c), c.din, c.dout).requires_grad_(true);
  torch::Tensor b = from_rows(b0_values(c), 1, c.dout).reshape({c.dout}).requires_grad_(true);
  double loss = 0;
  for (int s = 0; s < c.steps; ++s) {
    torch::Tensor l = (torch::relu(torch::matmul(x, W) + b) - t).pow(2).mean();
    l.backward();
    {
      torch::NoGradGuard g;
      W.sub_(W.grad() * kLr);
      b.sub_(b.grad() * kLr);
    }
    W.mutable_grad().reset();
    b.mutable_grad().reset();
    if (s + 1 == c.steps) loss = l.item<double>();
  }
  return loss;
}

void train_row(benchmark::State& state, int k) {
  const Case& c = kCases[k];
  if (const std::string err = check_loss(c, train_torch(c)); !err.empty()) {
    state.SkipWithError(("libtorch: " + err).c_str());
    return;
  }
  double loss = 0;
  for (auto _ : state) {
    loss = train_torch(c);
    benchmark::DoNotOptimize(loss);
  }
  state.counters["steps"] = benchmark::Counter(c.steps);
}

const bool registered = [] {
  for (int k = 0; k < static_cast<int>(std::size(kCases)); ++k)
    configure_row(benchmark::RegisterBenchmark((std::string("mlp/train/f64/") + kCases[k].name + "/libtorch").c_str(),
                                               train_row, k));
  return true;
}();

}  // namespace
}  // namespace tenax_bench::mlp
#endif
