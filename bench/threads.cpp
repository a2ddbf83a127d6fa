// The `threads` suite: tenax's worker pool at 1 and 2 threads (issue: CPU parallelism).
//
// Rows threads/<case>/f64/<shape>/t<k>, k = threads (tenax's budget and the provider's, set by
// tenax::set_num_threads outside the timing):
//   add, exp, sum            elementwise and full reduction over N elements
//   sum_rows                 row sums of a 1024 x 1024 matrix (the reduction cut along its outputs)
//   split_add                a raw add loop over N doubles cut in k slices by cpu::parallel_for,
//                            whatever N: where t2 stops beating t1 is the pool's crossover
//   solve, qr, eigh, inv,    a batch of 1024 small matrices (parallel over the batch)
//   cholesky, matmul,
//   solve_grad
//   mlp_eager, mlp_compiled  the mlp suite's training at both shapes
// Run pinned to two CPUs (scripts/bench.sh pins this suite to TENAX_BENCH_POOL_CPUS, default 0-1).
// Checked once outside the timing: each row's result at k threads equals its 1-thread result
// (bit for bit; eigh to 1e-12 relative, since OpenBLAS's syevd depends on its thread count).
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "common/bench_common.hpp"
#include "mlp_model.hpp"
#include "tenax/kernels/parallel.hpp"
#include "tenax/tenax.hpp"

namespace tenax_bench::threads {
namespace {

namespace tx = tenax;
namespace mlp = tenax_workloads::mlp;
using T = tx::Tensor<double>;

T sample(tx::Shape s, std::uint64_t seed) {
  T t = T::empty(s);
  std::uint64_t x = seed * 1442695040888963407ull;
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    t.mutable_data()[i] = static_cast<double>(static_cast<std::int64_t>(x % 1024) - 512) / 512.0;
  }
  return t;
}

T well_batch(std::int64_t n, std::int64_t nb, std::uint64_t seed) {
  return sample({n, n, nb}, seed) * 0.05 + tx::expand(T::eye(n, n) * 2.0, {n, n, nb});
}

void use_threads(int k) {
  if (tx::num_threads() != k) tx::set_num_threads(k);
}

// The result of f at k threads against 1 thread: "" or what differs.
std::string check(const std::function<T()>& f, int k, bool exact) {
  use_threads(1);
  const std::vector<double> one = tx::contiguous(f()).to_vector();
  use_threads(k);
  const std::vector<double> many = tx::contiguous(f()).to_vector();
  if (one.size() != many.size()) return "sizes differ";
  for (std::size_t i = 0; i < one.size(); ++i)
    if (exact ? std::memcmp(&one[i], &many[i], sizeof(double)) != 0 : !close(one[i], many[i]))
      return "result at " + std::to_string(k) + " threads differs from 1 thread at element " + std::to_string(i);
  return "";
}

void tensor_row(benchmark::State& state, std::function<T()> f, int k, bool exact) {
  if (const std::string err = check(f, k, exact); !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  use_threads(k);
  for (auto _ : state) {
    T r = f();
    benchmark::DoNotOptimize(r.data());
  }
  state.counters["threads"] = benchmark::Counter(k);
}

// A raw add over n doubles in k slices: the pool's hand-off cost against the work.
void split_add_row(benchmark::State& state, std::int64_t n, int k) {
  use_threads(k);
  std::vector<double> a(static_cast<std::size_t>(n), 1.0), b(a), c(a);
  for (auto _ : state) {
    tx::cpu::parallel_for(k, [&](std::int64_t s) {
      const std::int64_t lo = n * s / k, hi = n * (s + 1) / k;
      for (std::int64_t i = lo; i < hi; ++i)
        c[static_cast<std::size_t>(i)] = a[static_cast<std::size_t>(i)] + b[static_cast<std::size_t>(i)];
    });
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["threads"] = benchmark::Counter(k);
}

void mlp_row(benchmark::State& state, int c, bool compiled, int k) {
  const mlp::Case& cs = mlp::kCases[c];
  const mlp::Data d = mlp::make_data(cs);
  const auto program = tx::compile(mlp::sgd_step, d.W0, d.b0, d.x, d.t);
  auto train = [&] {
    return compiled ? std::get<1>(mlp::train(cs, d, program)) : std::get<1>(mlp::train(cs, d, mlp::sgd_step));
  };
  if (const std::string err = check(train, k, true); !err.empty()) {
    state.SkipWithError(err.c_str());
    return;
  }
  use_threads(k);
  for (auto _ : state) {
    T W = train();
    benchmark::DoNotOptimize(W.data());
  }
  state.counters["threads"] = benchmark::Counter(k);
}

void add_rows(const std::string& name, const std::string& shape, std::function<T()> f, bool exact = true) {
  for (int k : {1, 2})
    configure_row(benchmark::RegisterBenchmark(("threads/" + name + "/f64/" + shape + "/t" + std::to_string(k)).c_str(),
                                               tensor_row, f, k, exact));
}

const bool registered = [] {
  for (std::int64_t n : {std::int64_t{1} << 12, std::int64_t{1} << 14, std::int64_t{1} << 16, std::int64_t{1} << 18,
                         std::int64_t{1} << 20}) {
    const T a = sample({n}, 1), b = sample({n}, 2);
    const std::string shape = std::to_string(n);
    add_rows("add", shape, [=] { return a + b; });
    add_rows("exp", shape, [=] { return tx::exp(a); });
    add_rows("sum", shape, [=] { return tx::sum(a); });
  }
  for (std::int64_t n : {std::int64_t{1} << 10, std::int64_t{1} << 11, std::int64_t{1} << 12, std::int64_t{1} << 13,
                         std::int64_t{1} << 14, std::int64_t{1} << 15, std::int64_t{1} << 16})
    for (int k : {1, 2})
      configure_row(benchmark::RegisterBenchmark(
          ("threads/split_add/f64/" + std::to_string(n) + "/t" + std::to_string(k)).c_str(), split_add_row, n, k));
  const T m = sample({1024, 1024}, 3);
  add_rows("sum_rows", "1024x1024", [=] { return tx::sum(m, {1}); });

  const std::int64_t nb = 1024;
  const T A = well_batch(4, nb, 4), B = sample({4, 1, nb}, 5), S = tx::matmul(tx::transpose(A), A);
  const T M = sample({8, 8, nb}, 6);
  const std::string b4 = "4x4x1024";
  add_rows("solve", b4, [=] { return tx::linalg::solve(A, B); });
  add_rows("qr", b4, [=] { return std::get<1>(tx::linalg::qr(A)); });
  add_rows(
      "eigh", b4, [=] { return std::get<1>(tx::linalg::eigh(S)); }, /*exact=*/false);
  add_rows("inv", b4, [=] { return tx::linalg::inv(A); });
  add_rows("cholesky", b4, [=] { return tx::linalg::cholesky(S); });
  add_rows("matmul", "8x8x1024", [=] { return tx::matmul(M, M); });
  add_rows("solve_grad", b4, [=] { return tx::grad([&](const T& a) { return tx::sum(tx::linalg::solve(a, B)); }, A); });

  for (int c = 0; c < static_cast<int>(std::size(mlp::kCases)); ++c)
    for (bool compiled : {false, true})
      for (int k : {1, 2})
        configure_row(
            benchmark::RegisterBenchmark((std::string("threads/") + (compiled ? "mlp_compiled" : "mlp_eager") +
                                          "/f64/" + mlp::kCases[c].name + "/t" + std::to_string(k))
                                             .c_str(),
                                         mlp_row, c, compiled, k));
  return true;
}();

}  // namespace
}  // namespace tenax_bench::threads
