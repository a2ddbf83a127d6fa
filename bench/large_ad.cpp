// The `large_ad` suite (shared BENCHMARKS.md, suite 1): dense linear algebra at n = 64..1024, f64,
// one thread, primal and reverse-mode AD. Cases, losses and inputs: large_ad_cases.hpp; the tenax
// losses, the floors and the call counters: large_ad_tenax.hpp (shared with jvp_vjp.cpp).
//
// Rows (name large_ad/<case>/f64/<n>x<n>/<mode>):
//   primal    the op alone, no recording (matmul, solve with an n x 1 right-hand side, qr, eigh,
//             eigvalsh, svdvals, lu_factor, cholesky, lstsq, the real parts of eigvals, matrix_exp);
//             inputs do not require grad.
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
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "large_ad_tenax.hpp"

namespace tenax_bench::large_ad {
namespace {

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
    case Case::lstsq:
      return {la::lstsq(A, B).solution, {}};
    case Case::eigvals:
      return {tenax::real(la::eigvals(A)), {}};
    case Case::matrix_exp:
      return {la::matrix_exp(A), {}};
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

// ---- checks --------------------------------------------------------------------------------------

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
    f = make_floor(c, inputs(c, n));
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
  time_floor(state, *f);
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
