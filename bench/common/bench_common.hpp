#pragma once
// Shared helpers of the Google Benchmark drivers. Kept free of tenax and libtorch types so that
// reference drivers (compiled with their own flags, see bench/CMakeLists.txt) can include it.
//
// Row names: <suite>/<case>/<dtype>/<shape>/<mode>. A reference row has mode <ref>_<mode> (e.g.
// libtorch_recorded is the reference of recorded); bench/report.py pairs rows by that rule.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace tenax_bench {

// Quartiles by linear interpolation between order statistics (numpy's default).
inline double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}
inline double stat_q1(const std::vector<double>& v) { return quantile(v, 0.25); }
inline double stat_q3(const std::vector<double>& v) { return quantile(v, 0.75); }
inline double stat_iqr(const std::vector<double>& v) { return quantile(v, 0.75) - quantile(v, 0.25); }

// Default row setup: wall-clock time, microseconds, median (built in) and quartile/IQR aggregates
// over the repetitions (--benchmark_repetitions; bench_main.cpp defaults it to 5, so that every
// row reports median and IQR). The console shows aggregates only; the JSON output keeps every
// repetition too, so that bench/report.py can pool the repetitions of several processes.
inline benchmark::internal::Benchmark* configure_row(benchmark::internal::Benchmark* b) {
  return b->UseRealTime()
      ->Unit(benchmark::kMicrosecond)
      ->ComputeStatistics("q1", stat_q1)
      ->ComputeStatistics("q3", stat_q3)
      ->ComputeStatistics("iqr", stat_iqr)
      ->DisplayAggregatesOnly(true);
}

// Per-op counters for a timed region made of `ops` ops: per_op = (real time per iteration) / ops
// in SECONDS (an inverted iteration-invariant rate, iterations * ops / seconds, inverted; the
// console prints it with an SI prefix, e.g. 298.1ns), and `ops` so that reports can redo the
// division.
inline void set_per_op_counters(benchmark::State& state, double ops) {
  state.counters["per_op"] =
      benchmark::Counter(ops, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["ops"] = benchmark::Counter(ops);
}

// Relative closeness for correctness checks outside the timing.
inline bool close(double a, double b, double rtol = 1e-12) {
  return std::abs(a - b) <= rtol * std::max({1.0, std::abs(a), std::abs(b)});
}

}  // namespace tenax_bench

namespace tenax_bench {
// The repetitions of a row when --benchmark_repetitions is not given.
inline constexpr int kDefaultRepetitions = 5;
}  // namespace tenax_bench
