// libtorch reference rows of the `jvp_vjp` suite (see jvp_vjp.cpp and jvp_vjp_cases.hpp):
//   jvp_vjp/<case>_jvp/f64/<n>x<n>/libtorch   forward-mode AD: A made a dual tensor with tangent dA
//                                             (at::_make_dual), the loss, its tangent unpacked
//                                             (at::_unpack_dual); the C++ form of Python's
//                                             torch.autograd.forward_ad
//   jvp_vjp/<case>_vjp/f64/<n>x<n>/libtorch   reverse mode: the loss with A requiring grad, then
//                                             torch::autograd::grad with the cotangent 1
// Same inputs and tangent (the very vectors tenax uses), same losses as large_ad's libtorch rows
// (ref_libtorch/large_ad_torch.hpp), one thread (libtorch_setup()). The JVP rows enter a forward
// AD level once outside the timing (torch::autograd::ForwardADLevel, what `with dual_level()`
// does) and leave it after; the timed region is making the dual, the loss and unpacking its tangent.
// Checked once outside the timing: libtorch's tangent (gradient) against central differences of
// libtorch's own loss along dA, and against tenax's; and the result left by the last timed
// iteration.
#if defined(TENAX_BENCH_WITH_TORCH)
#include <torch/csrc/autograd/forward_grad.h>
#include <torch/torch.h>

#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "jvp_vjp_cases.hpp"
#include "ref_libtorch/large_ad_torch.hpp"

namespace tenax_bench::jvp_vjp {
namespace {

using large_ad::loss_of;
using large_ad::to_torch;
using large_ad::to_vec;

struct Tensors {
  torch::Tensor A, b, dA, one;
};

Tensors make_tensors(Case c, int n, bool grad) {
  const Inputs &in = inputs(c, n), &d = tangent(c, n);
  Tensors t;
  t.A = to_torch(in.a, n, n).requires_grad_(grad);
  if (!in.b.empty()) t.b = to_torch(in.b, n, large_ad::second_cols(base_case(c), n));
  t.dA = to_torch(d.a, n, n);
  t.one = torch::ones({}, large_ad::f64());
  return t;
}

// A forward-AD level for a scope (Python's `with torch.autograd.forward_ad.dual_level()`).
class DualLevel {
 public:
  DualLevel() : idx_(torch::autograd::ForwardADLevel::get_next_idx()) {}
  ~DualLevel() { torch::autograd::ForwardADLevel::release_idx(idx_); }
  DualLevel(const DualLevel&) = delete;
  DualLevel& operator=(const DualLevel&) = delete;
  int64_t idx() const { return static_cast<int64_t>(idx_); }

 private:
  uint64_t idx_;
};

// The loss and its tangent (forward mode) at level `level`.
std::pair<torch::Tensor, torch::Tensor> jvp_of(Case c, const Tensors& t, int64_t level) {
  const torch::Tensor dual = at::_make_dual(t.A, t.dA, level);
  const torch::Tensor y = loss_of(base_case(c), dual, t.b);
  auto [primal, tan] = at::_unpack_dual(y, level);
  return {primal, tan};
}

// First: empty when correct, else the reason; second: the measured errors (the row's label).
const std::pair<std::string, std::string>& torch_check(Case c, Mode m, int n) {
  static std::map<std::tuple<int, int, int>, std::pair<std::string, std::string>> cache;
  const auto key = std::tuple<int, int, int>{static_cast<int>(c), static_cast<int>(m), n};
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  std::string msg, info;
  try {
    const LossFn f = [c, n](const std::vector<double>& a, const std::vector<double>& b) {
      return torch_loss(c, n, a, b);
    };
    const Inputs &x = inputs(c, n), &d = tangent(c, n);
    msg = m == Mode::jvp ? check_jvp("libtorch", c, n, x, d, torch_jvp(c, n), f, &tenax_jvp(c, n), "tenax", &info)
                         : check_vjp("libtorch", c, n, x, d, torch_vjp(c, n), f, &tenax_vjp(c, n), "tenax", &info);
  } catch (const std::exception& e) {
    msg = std::string("libtorch ") + case_name(c) + "_" + mode_name(m) + " n=" + std::to_string(n) +
          ": exception: " + e.what();
  }
  return cache.emplace(key, std::pair<std::string, std::string>{msg, info}).first->second;
}

void torch_row(benchmark::State& state, Case c, Mode m, int n) {
  if (const std::string& err = torch_check(c, m, n).first; !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  bool same = false;
  try {
    if (m == Mode::jvp) {
      const Tensors t = make_tensors(c, n, false);
      std::pair<torch::Tensor, torch::Tensor> out;
      {
        DualLevel level;
        for (auto _ : state) {
          out = jvp_of(c, t, level.idx());
          benchmark::DoNotOptimize(out.second.data_ptr());
        }
        out = {out.first.detach().clone(), out.second.clone()};
      }
      const Jvp& want = torch_jvp(c, n);
      same = close(out.first.item<double>(), want.loss, 1e-12) && close(out.second.item<double>(), want.tangent, 1e-12);
    } else {
      const Tensors t = make_tensors(c, n, true);
      torch::Tensor y, g;
      for (auto _ : state) {
        y = loss_of(base_case(c), t.A, t.b);
        g = torch::autograd::grad({y}, {t.A}, {t.one})[0];
        benchmark::DoNotOptimize(g.data_ptr());
      }
      const Grad& want = torch_vjp(c, n);
      same = close(y.item<double>(), want.loss, 1e-12) && large_ad::rel_diff(to_vec(g), want.ga, n, false) <= 1e-12;
    }
  } catch (const std::exception& e) {
    state.SkipWithError((std::string("libtorch: exception in the timed run: ") + e.what()).c_str());
    return;
  }
  if (!same) {
    state.SkipWithError("libtorch: the result left by the timed iterations differs from the checked one");
    return;
  }
  state.SetLabel(torch_check(c, m, n).second);
}

const bool registered = [] {
  for (Case c : kCases)
    for (Mode m : kModes)
      for (int n : sizes())
        configure_row(benchmark::RegisterBenchmark(row_name(c, m, n, "libtorch").c_str(), torch_row, c, m, n));
  return true;
}();

}  // namespace

const Jvp& torch_jvp(Case c, int n) {
  static std::map<std::pair<int, int>, Jvp> cache;
  const auto key = std::pair<int, int>{static_cast<int>(c), n};
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  const Tensors t = make_tensors(c, n, false);
  Jvp r;
  {
    DualLevel level;
    const auto out = jvp_of(c, t, level.idx());
    r.loss = out.first.item<double>();
    r.tangent = out.second.defined() ? out.second.item<double>() : NAN;
  }
  return cache.emplace(key, r).first->second;
}

const Grad& torch_vjp(Case c, int n) {
  static std::map<std::pair<int, int>, Grad> cache;
  const auto key = std::pair<int, int>{static_cast<int>(c), n};
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  const Tensors t = make_tensors(c, n, true);
  const torch::Tensor y = loss_of(base_case(c), t.A, t.b);
  const torch::Tensor g = torch::autograd::grad({y}, {t.A}, {t.one})[0];
  Grad r;
  r.loss = y.item<double>();
  r.ga = to_vec(g);
  return cache.emplace(key, r).first->second;
}

double torch_loss(Case c, int n, const std::vector<double>& a, const std::vector<double>& b) {
  torch::NoGradGuard no_grad;
  const torch::Tensor A = to_torch(a, n, n);
  const torch::Tensor B = b.empty() ? torch::Tensor() : to_torch(b, n, large_ad::second_cols(base_case(c), n));
  return loss_of(base_case(c), A, B).item<double>();
}

}  // namespace tenax_bench::jvp_vjp
#endif  // TENAX_BENCH_WITH_TORCH
