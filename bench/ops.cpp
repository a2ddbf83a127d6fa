// The `ops` suite: single ops beyond linear algebra, float64, one thread.
//
// Rows (ops/<case>/f64/<shape>/<mode>, mode eager or compiled; the PyTorch and JAX rows, modes
// pytorch and jax, come from bench/ref_python/refs.py with the same inputs and timed regions):
//   einsum_network  einsum("ijk,jl,lkm->im", x, y, z), every index 64 (forward)
//   einsum_bmm      einsum("bij,bjk->bik", a, b), b = i = j = k = 64 (forward); its floor row: the
//                   64 provider gemm calls of 64 x 64 x 64 on the same memory (mode floor)
//   softmax         forward + backward of sum(softmax(x) * w) over the contiguous axis, 1000 x 1000
//   logsumexp       forward + backward of sum(logsumexp(x)) over the contiguous axis, 1000 x 1000
//   gelu            forward of the tanh GELU, 0.5 x (1 + tanh(c (x + 0.044715 x^3))), c = sqrt(2 / pi),
//                   on 1000 x 1000: nine elementwise ops, which compile fuses into one loop; its
//                   floor row: one hand loop doing the same nine operations per element (mode floor)
//   mse             forward of mean((x - t)^2) on 1000 x 1000 (t = data(shape, 2)): two maps and a sum,
//                   which compile fuses into one loop; its floor row: one hand pass summing the
//                   squares in 8 lanes (mode floor)
// Inputs: data(shape, seed) of shared BENCHMARKS.md (bench/large_ad_cases.hpp). Every row reads the
// same memory as the references: the row-major array of shape (a, b, c) is tenax's column-major
// tensor of shape (c, b, a), so tenax's einsum specs have each term's letters reversed
// ("jib,kjb->kib" for einsum_bmm; the same numbers, laid out as the references lay them out), and
// the row-major R x C array of softmax and logsumexp is tenax's C x R tensor, reduced over dim 0
// (the references reduce over their last axis: each library's contiguous axis).
// eager: the op (and the backward) run eagerly; compiled: the same function compiled outside the
// timing (tenax::compile), the timed region one prepared run. Checked once before timing against
// host loops (einsum: the sum of the output; softmax and logsumexp: the loss and the gradient),
// and compiled against eager bit for bit.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/bench_common.hpp"
#include "large_ad_cases.hpp"
#include "tenax/backend/cpu_provider.hpp"
#include "tenax/tenax.hpp"

namespace tenax_bench::ops {
namespace {

using tenax::Tensor;
using T = Tensor<double>;
using tenax_bench::large_ad::data;

constexpr int kN = 64;       // einsum sizes
constexpr int kRows = 1000;  // softmax and logsumexp: kRows x kRows

bool same_bits(const T& a, const T& b) {
  const auto va = a.contiguous().to_vector(), vb = b.contiguous().to_vector();
  return va.size() == vb.size() && std::memcmp(va.data(), vb.data(), va.size() * sizeof(double)) == 0;
}

// ---- einsum -------------------------------------------------------------------------------------

struct EinsumCase {
  const char* name;
  const char* spec;
  std::vector<tenax::Shape> shapes;
};
const EinsumCase kEinsum[] = {
    {"einsum_network", "ijk,jl,lkm->im", {{kN, kN, kN}, {kN, kN}, {kN, kN, kN}}},
    {"einsum_bmm", "bij,bjk->bik", {{kN, kN, kN}, {kN, kN, kN}}},
};

// tenax runs each case on the same memory as the references: a row-major array of shape
// (a, b, c) is, byte for byte, tenax's column-major tensor of shape (c, b, a), so every operand's
// letters (and the output's) are reversed: "bij,bjk->bik" becomes "jib,kjb->kib". The numbers are
// the same, laid out as the references lay them out (and the output's sum is the host loops').
std::string reversed_terms(const std::string& spec) {
  std::string out, term;
  for (const char ch : spec + ",") {
    if (ch == ',' || ch == '-') {
      out += std::string(term.rbegin(), term.rend());
      if (ch == ',') out += ',';
      term.clear();
    } else if (ch == '>') {
      out += "->";
    } else {
      term += ch;
    }
  }
  if (!out.empty() && out.back() == ',') out.pop_back();
  return out;
}
tenax::Shape reversed(tenax::Shape s) {
  std::reverse(s.begin(), s.end());
  return s;
}

std::vector<T> einsum_inputs(const EinsumCase& c) {
  std::vector<T> xs;
  for (std::size_t k = 0; k < c.shapes.size(); ++k) {
    const tenax::Shape& s = c.shapes[k];
    xs.push_back(T::from_col_major(reversed(s),
                                   data(static_cast<int>(s[0]), static_cast<int>(tenax::numel_of(s) / s[0]), k + 1)));
  }
  return xs;
}
std::string tenax_spec(const EinsumCase& c) { return reversed_terms(c.spec); }
std::vector<tenax::Shape> tenax_shapes(const EinsumCase& c) {
  std::vector<tenax::Shape> r;
  for (const tenax::Shape& s : c.shapes) r.push_back(reversed(s));
  return r;
}

// The sum of the output by host loops over the row-major inputs.
double einsum_host_sum(int k) {
  const std::int64_t n = kN;
  auto v = [&](std::size_t q) { return data(kN, static_cast<int>(k == 0 && q == 1 ? n : n * n), q + 1); };
  if (k == 0) {  // sum_im out = sum_jkl (sum_i x_ijk) y_jl (sum_m z_lkm)
    const auto x = v(0), y = v(1), z = v(2);
    std::vector<double> xs(static_cast<std::size_t>(n * n), 0), zs(static_cast<std::size_t>(n * n), 0);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t jk = 0; jk < n * n; ++jk)
        xs[static_cast<std::size_t>(jk)] += x[static_cast<std::size_t>(i * n * n + jk)];
    for (std::int64_t lk = 0; lk < n * n; ++lk)
      for (std::int64_t m = 0; m < n; ++m) zs[static_cast<std::size_t>(lk)] += z[static_cast<std::size_t>(lk * n + m)];
    double s = 0;
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t kk = 0; kk < n; ++kk)
        for (std::int64_t l = 0; l < n; ++l)
          s += xs[static_cast<std::size_t>(j * n + kk)] * y[static_cast<std::size_t>(j * n + l)] *
               zs[static_cast<std::size_t>(l * n + kk)];
    return s;
  }
  // sum_bik out = sum_bj (sum_i a_bij) (sum_k b_bjk)
  const auto a = v(0), b = v(1);
  double s = 0;
  for (std::int64_t bb = 0; bb < n; ++bb)
    for (std::int64_t j = 0; j < n; ++j) {
      double sa = 0, sb = 0;
      for (std::int64_t i = 0; i < n; ++i) sa += a[static_cast<std::size_t>((bb * n + i) * n + j)];
      for (std::int64_t kk = 0; kk < n; ++kk) sb += b[static_cast<std::size_t>((bb * n + j) * n + kk)];
      s += sa * sb;
    }
  return s;
}

// The case's einsum as a function of its operands (compiled outside the timing for the compiled rows).
template <class F>
auto with_einsum_program(int k, const std::vector<T>& xs, F&& use) {
  const std::string spec = tenax_spec(kEinsum[k]);
  if (xs.size() == 3)
    return use(tenax::compile([spec](const T& a, const T& b, const T& c) { return tenax::einsum(spec, a, b, c); },
                              xs[0], xs[1], xs[2]),
               [&](const auto& prog) { return prog(xs[0], xs[1], xs[2]); });
  return use(tenax::compile([spec](const T& a, const T& b) { return tenax::einsum(spec, a, b); }, xs[0], xs[1]),
             [&](const auto& prog) { return prog(xs[0], xs[1]); });
}

std::string einsum_check(int k) {
  const EinsumCase& c = kEinsum[k];
  const std::vector<T> xs = einsum_inputs(c);
  const T eager = tenax::einsum(tenax_spec(c), xs);
  const double want = einsum_host_sum(k), got = tenax::sum(eager).item();
  if (!close(got, want, 1e-10))
    return "einsum: output sum " + std::to_string(got) + ", host loops " + std::to_string(want);
  const bool same = with_einsum_program(k, xs, [&](const auto& prog, auto run) { return same_bits(run(prog), eager); });
  return same ? "" : "einsum: compiled differs from eager";
}

void einsum_row(benchmark::State& state, int k, bool compiled) {
  if (const std::string err = einsum_check(k); !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  const EinsumCase& c = kEinsum[k];
  const std::vector<T> xs = einsum_inputs(c);
  const std::string spec = tenax_spec(c);
  with_einsum_program(k, xs, [&](const auto& prog, auto run) {
    T out = run(prog);  // the first run prepares the program
    for (auto _ : state) {
      out = compiled ? run(prog) : tenax::einsum(spec, xs);
      benchmark::DoNotOptimize(out.impl().get());
    }
    return 0;
  });
  const tenax::EinsumPathInfo path = tenax::einsum_path(spec, tenax_shapes(c));
  state.SetLabel(std::to_string(path.steps.size()) + " pairwise step(s), " +
                 std::to_string(static_cast<long long>(path.flops)) + " flops (einsum_path)");
}

// The floor of einsum_bmm: the batch's 64 gemm calls on the same memory. In tenax's layout the
// spec is "jib,kjb->kib": per b, out_b (k x i) = B_b (k x j) A_b (j x i), every matrix column-major
// with leading dimension 64. Checked against the einsum's output before timing.
void einsum_bmm_floor(benchmark::State& state) {
  namespace cpu = tenax::cpu;
  const std::vector<T> xs = einsum_inputs(kEinsum[1]);
  const std::vector<double> a = xs[0].contiguous().to_vector(), b = xs[1].contiguous().to_vector();
  std::vector<double> c(a.size());
  const std::int64_t n = kN;
  auto run = [&] {
    for (std::int64_t m = 0; m < n; ++m)
      cpu::gemm<double>(cpu::Trans::N, cpu::Trans::N, n, n, n, 1, b.data() + m * n * n, n, a.data() + m * n * n, n, 0,
                        c.data() + m * n * n, n);
  };
  run();
  const std::vector<double> want = tenax::einsum(tenax_spec(kEinsum[1]), xs).contiguous().to_vector();
  for (std::size_t i = 0; i < c.size(); ++i)
    if (std::abs(c[i] - want[i]) > 1e-12 * std::max(1.0, std::abs(want[i]))) {
      state.SkipWithError("einsum_bmm floor: the gemm calls differ from the einsum");
      return;
    }
  for (auto _ : state) {
    run();
    benchmark::DoNotOptimize(c.data());
  }
}

// ---- gelu: a chain of maps ---------------------------------------------------------------------

constexpr double kGeluC = 0.7978845608028654;  // sqrt(2 / pi)

// The nine ops in the order the floor loop does them per element.
T gelu(const T& x) {
  const T cube = x * x * x;
  return x * 0.5 * (tenax::tanh((x + cube * 0.044715) * kGeluC) + 1.0);
}

std::vector<double> gelu_floor(const std::vector<double>& x) {
  std::vector<double> y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double v = x[i], cube = v * v * v;
    y[i] = v * 0.5 * (std::tanh((v + cube * 0.044715) * kGeluC) + 1.0);
  }
  return y;
}

T gelu_input() { return T::from_col_major({kRows, kRows}, data(kRows, kRows, 1)); }

// eager, compiled and the floor loop agree bit for bit (the same operations in the same order).
std::string gelu_check() {
  static const std::string msg = [] {
    const T x = gelu_input();
    const T eager = gelu(x);
    const auto prog = tenax::compile(gelu, x);
    if (!same_bits(prog(x), eager) || !same_bits(prog(x), eager))
      return std::string("gelu: compiled differs from eager");
    const T floor = T::from_col_major({kRows, kRows}, gelu_floor(x.contiguous().to_vector()));
    return same_bits(floor, eager) ? std::string() : std::string("gelu: the floor loop differs from eager");
  }();
  return msg;
}

void gelu_row(benchmark::State& state, int mode) {  // 0 eager, 1 compiled, 2 floor
  if (const std::string err = gelu_check(); !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  const T x = gelu_input();
  const auto prog = tenax::compile(gelu, x);
  T out = prog(x);
  const std::vector<double> xv = x.contiguous().to_vector();
  for (auto _ : state) {
    if (mode == 2) {
      const std::vector<double> y = gelu_floor(xv);
      benchmark::DoNotOptimize(y.data());
    } else {
      out = mode == 1 ? prog(x) : gelu(x);
      benchmark::DoNotOptimize(out.impl().get());
    }
  }
}

// ---- mse: a chain of maps that ends in a full sum ------------------------------------------------

// mean((x - t)^2): two maps and a sum (then a scalar division), which compile fuses into one loop
// whose squares never reach memory.
T mse(const T& x, const T& t) { return tenax::mean(tenax::square(x - t)); }

// The floor: one pass over x and t, the squares summed in 8 interleaved lanes, then divided.
double mse_floor(const std::vector<double>& x, const std::vector<double>& t) {
  double a[8] = {};
  const std::size_t n = x.size(), m = n - n % 8;
  for (std::size_t i = 0; i < m; i += 8)
    for (std::size_t l = 0; l < 8; ++l) {
      const double d = x[i + l] - t[i + l];
      a[l] += d * d;
    }
  for (std::size_t i = m; i < n; ++i) a[0] += (x[i] - t[i]) * (x[i] - t[i]);
  return (((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]))) / static_cast<double>(n);
}

// compiled == eager bit for bit; the floor within 1e-12 (it sums in another order).
std::string mse_check() {
  static const std::string msg = [] {
    const T x = gelu_input(), t = T::from_col_major({kRows, kRows}, data(kRows, kRows, 2));
    const T eager = mse(x, t);
    const auto prog = tenax::compile(mse, x, t);
    if (!same_bits(prog(x, t), eager) || !same_bits(prog(x, t), eager))
      return std::string("mse: compiled differs from eager");
    const double f = mse_floor(x.contiguous().to_vector(), t.contiguous().to_vector());
    return std::abs(f - eager.item()) <= 1e-12 * std::abs(f) ? std::string()
                                                             : std::string("mse: the floor differs from eager");
  }();
  return msg;
}

void mse_row(benchmark::State& state, int mode) {  // 0 eager, 1 compiled, 2 floor
  if (const std::string err = mse_check(); !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  const T x = gelu_input(), t = T::from_col_major({kRows, kRows}, data(kRows, kRows, 2));
  const auto prog = tenax::compile(mse, x, t);
  T out = prog(x, t);
  const std::vector<double> xv = x.contiguous().to_vector(), tv = t.contiguous().to_vector();
  for (auto _ : state) {
    if (mode == 2) {
      double f = mse_floor(xv, tv);
      benchmark::DoNotOptimize(f);
    } else {
      out = mode == 1 ? prog(x, t) : mse(x, t);
      benchmark::DoNotOptimize(out.impl().get());
    }
  }
}

// ---- softmax and logsumexp ------------------------------------------------------------------------

// The loss of a case: sum(softmax(x) * w) or sum(logsumexp(x)), over dim 0 (the references' last
// axis of the same memory).
T softmax_loss(const T& x, const T& w) { return tenax::sum(tenax::mul(tenax::softmax(x, 0), w)); }
T logsumexp_loss(const T& x) { return tenax::sum(tenax::logsumexp(x, {0}, false)); }

struct Reduction {
  T x, w;
  Reduction() {
    x = T::from_col_major({kRows, kRows}, data(kRows, kRows, 1));
    w = T::from_col_major({kRows, kRows}, data(kRows, kRows, 2));
  }
};

// Host loss and gradient of a column (the references' row) r.
void host_column(bool softmax, const std::vector<double>& x, const std::vector<double>& w, std::size_t r, double& loss,
                 std::vector<double>& g) {
  const std::size_t n = kRows, o = r * n;
  double m = -INFINITY, s = 0;
  for (std::size_t i = 0; i < n; ++i) m = std::max(m, x[o + i]);
  for (std::size_t i = 0; i < n; ++i) s += std::exp(x[o + i] - m);
  if (!softmax) {
    loss += m + std::log(s);
    for (std::size_t i = 0; i < n; ++i) g[o + i] = std::exp(x[o + i] - m) / s;
    return;
  }
  double sw = 0;
  for (std::size_t i = 0; i < n; ++i) sw += std::exp(x[o + i] - m) / s * w[o + i];
  loss += sw;
  for (std::size_t i = 0; i < n; ++i) g[o + i] = std::exp(x[o + i] - m) / s * (w[o + i] - sw);
}

std::string reduction_check(bool softmax) {
  const Reduction in;
  auto f = [softmax, w = in.w](const T& v) {
    return tenax::value_and_grad([&](const T& u) { return softmax ? softmax_loss(u, w) : logsumexp_loss(u); }, v);
  };
  const auto [loss, g] = f(in.x);
  const auto prog = tenax::compile(f, in.x);
  const auto [lc, gc] = prog(in.x);
  if (!same_bits(loss, lc) || !same_bits(g, gc)) return "compiled differs from eager";
  const auto x = in.x.contiguous().to_vector(), w = in.w.contiguous().to_vector();
  double want = 0;
  std::vector<double> gw(x.size());
  for (std::size_t r = 0; r < kRows; ++r) host_column(softmax, x, w, r, want, gw);
  if (!close(loss.item(), want, 1e-10)) return "loss " + std::to_string(loss.item()) + ", host " + std::to_string(want);
  const auto gv = g.contiguous().to_vector();
  for (std::size_t i = 0; i < gv.size(); ++i)
    if (std::abs(gv[i] - gw[i]) > 1e-12 * std::max(1.0, std::abs(gw[i]))) return "gradient differs from host loops";
  return "";
}

void reduction_row(benchmark::State& state, bool softmax, bool compiled) {
  if (const std::string err = reduction_check(softmax); !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  const Reduction in;
  auto f = [softmax, w = in.w](const T& v) {
    return tenax::value_and_grad([&](const T& u) { return softmax ? softmax_loss(u, w) : logsumexp_loss(u); }, v);
  };
  const auto prog = tenax::compile(f, in.x);
  auto out = prog(in.x);
  for (auto _ : state) {
    out = compiled ? prog(in.x) : f(in.x);
    benchmark::DoNotOptimize(out.first.impl().get());
  }
}

const bool registered = [] {
  const std::string n = std::to_string(kN), shape3 = n + "x" + n + "x" + n;
  for (int k = 0; k < static_cast<int>(std::size(kEinsum)); ++k) {
    const std::string base = std::string("ops/") + kEinsum[k].name + "/f64/" + shape3 + "/";
    configure_row(benchmark::RegisterBenchmark((base + "eager").c_str(), einsum_row, k, false));
    configure_row(benchmark::RegisterBenchmark((base + "compiled").c_str(), einsum_row, k, true));
  }
  configure_row(
      benchmark::RegisterBenchmark((std::string("ops/einsum_bmm/f64/") + shape3 + "/floor").c_str(), einsum_bmm_floor));
  const std::string sq = std::to_string(kRows) + "x" + std::to_string(kRows);
  for (bool softmax : {true, false}) {
    const std::string base = std::string("ops/") + (softmax ? "softmax" : "logsumexp") + "/f64/" + sq + "/";
    configure_row(benchmark::RegisterBenchmark((base + "eager").c_str(), reduction_row, softmax, false));
    configure_row(benchmark::RegisterBenchmark((base + "compiled").c_str(), reduction_row, softmax, true));
  }
  const std::string gelu_base = "ops/gelu/f64/" + sq + "/";
  const char* gelu_modes[] = {"eager", "compiled", "floor"};
  for (int mode = 0; mode < 3; ++mode)
    configure_row(benchmark::RegisterBenchmark((gelu_base + gelu_modes[mode]).c_str(), gelu_row, mode));
  const std::string mse_base = "ops/mse/f64/" + sq + "/";
  for (int mode = 0; mode < 3; ++mode)
    configure_row(benchmark::RegisterBenchmark((mse_base + gelu_modes[mode]).c_str(), mse_row, mode));
  return true;
}();

}  // namespace
}  // namespace tenax_bench::ops
