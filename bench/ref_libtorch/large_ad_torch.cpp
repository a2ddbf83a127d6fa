// libtorch reference rows of the `large_ad` suite (see large_ad.cpp and large_ad_cases.hpp):
//   large_ad/<case>/f64/<n>x<n>/libtorch   forward + loss + backward, like the tenax eager row
// Same inputs (the very vectors tenax uses), same losses, one thread (libtorch_setup()). The timed
// region: clearing the inputs' .grad, the op, the loss, loss.backward() and freeing the graph.
// Ops: torch::matmul, linalg_solve (b n x 1), linalg_qr (reduced), linalg_eigh, linalg_eigvalsh,
// linalg_svdvals, linalg_lu (P, L, U), linalg_cholesky. For eigh the eigenvectors are put in the
// canonical gauge of tenax's eigh(..., canonical_gauge = true): each column is multiplied by the
// sign of its first largest-magnitude entry, the signs computed without recording (they are
// locally constant), so that both sides differentiate the same function of A.
// Checked once outside the timing: libtorch's gradient against central differences of libtorch's
// own forward, and against tenax's gradient; and the gradient left by the last timed iteration.
#if defined(TENAX_BENCH_WITH_TORCH)
#include <torch/torch.h>

#include <map>
#include <string>
#include <utility>

#include "ref_libtorch/large_ad_torch.hpp"

namespace tenax_bench::large_ad {
namespace {

struct Tensors {
  torch::Tensor A, B;
};

Tensors make_tensors(Case c, int n, bool grad) {
  const Inputs& in = inputs(c, n);
  Tensors t;
  t.A = to_torch(in.a, n, n).requires_grad_(grad);
  if (!in.b.empty()) t.B = to_torch(in.b, n, second_cols(c, n)).requires_grad_(grad);
  return t;
}

Grad grad_of(const Tensors& t, double loss) {
  Grad g;
  g.loss = loss;
  if (t.A.grad().defined()) g.ga = to_vec(t.A.grad());
  if (t.B.defined() && t.B.grad().defined()) g.gb = to_vec(t.B.grad());
  return g;
}

// First: empty when correct, else the reason; second: the measured errors (the row's label).
const std::pair<std::string, std::string>& torch_check(Case c, int n) {
  static std::map<std::pair<int, int>, std::pair<std::string, std::string>> cache;
  const auto key = std::pair<int, int>{static_cast<int>(c), n};
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  std::string msg, info;
  try {
    const LossFn f = [c, n](const std::vector<double>& a, const std::vector<double>& b) {
      return torch_loss(c, n, a, b);
    };
    msg = check_grad("libtorch", c, n, torch_grad(c, n), f, &tenax_grad(c, n), "tenax", &info);
  } catch (const std::exception& e) {
    msg = std::string("libtorch ") + case_name(c) + " n=" + std::to_string(n) + ": exception: " + e.what();
  }
  return cache.emplace(key, std::pair<std::string, std::string>{msg, info}).first->second;
}

void torch_row(benchmark::State& state, Case c, int n) {
  if (const std::string& err = torch_check(c, n).first; !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  const Tensors t = make_tensors(c, n, true);
  double last = NAN;
  for (auto _ : state) {
    t.A.mutable_grad().reset();
    if (t.B.defined()) t.B.mutable_grad().reset();
    torch::Tensor loss = loss_of(c, t.A, t.B);
    loss.backward();
    benchmark::DoNotOptimize(loss.data_ptr());
    last = loss.item<double>();
  }
  const Grad got = grad_of(t, last), &want = torch_grad(c, n);
  if (!close(got.loss, want.loss, 1e-12) || rel_diff(got.ga, want.ga, n, false) > 1e-12 ||
      rel_diff(got.gb, want.gb, n, false) > 1e-12) {
    state.SkipWithError("libtorch: the loss or gradient left by the timed iterations differs from the checked one");
    return;
  }
  state.SetLabel(torch_check(c, n).second);
}

const bool registered = [] {
  for (Case c : kCases)
    for (int n : sizes())
      configure_row(benchmark::RegisterBenchmark(row_name(c, n, "libtorch").c_str(), torch_row, c, n));
  return true;
}();

}  // namespace

const Grad& torch_grad(Case c, int n) {
  static std::map<std::pair<int, int>, Grad> cache;
  const auto key = std::pair<int, int>{static_cast<int>(c), n};
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  const Tensors t = make_tensors(c, n, true);
  torch::Tensor loss = loss_of(c, t.A, t.B);
  loss.backward();
  return cache.emplace(key, grad_of(t, loss.item<double>())).first->second;
}

double torch_loss(Case c, int n, const std::vector<double>& a, const std::vector<double>& b) {
  torch::NoGradGuard no_grad;
  const torch::Tensor A = to_torch(a, n, n);
  const torch::Tensor B = b.empty() ? torch::Tensor() : to_torch(b, n, second_cols(c, n));
  return loss_of(c, A, B).item<double>();
}

}  // namespace tenax_bench::large_ad
#endif  // TENAX_BENCH_WITH_TORCH
