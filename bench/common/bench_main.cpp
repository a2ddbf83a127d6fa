// main() of every bench_<suite> executable: records what was measured (tenax build, thread
// settings, references compiled in) in the benchmark context, then runs Google Benchmark.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "common/bench_common.hpp"
#include "ref_libtorch/libtorch_ref.hpp"
#include "tenax/core/config.hpp"

namespace {

std::string one_line(std::string s) {
  std::string out;
  for (char ch : s) {
    if (ch == '\n') {
      out += "; ";
    } else if (!(ch == ' ' && !out.empty() && out.back() == ' ')) {
      out += ch;
    }
  }
  return out;
}

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::AddCustomContext("tenax_config", one_line(tenax::config().str()));
  benchmark::AddCustomContext("tenax_threads", "tenax ops run on the calling thread; OPENBLAS_NUM_THREADS=" +
                                                   env_or("OPENBLAS_NUM_THREADS", "unset") +
                                                   " OMP_NUM_THREADS=" + env_or("OMP_NUM_THREADS", "unset"));
#if defined(TENAX_BENCH_WITH_TORCH)
  benchmark::AddCustomContext("libtorch", tenax_bench::libtorch_setup());
#else
  benchmark::AddCustomContext("libtorch", "not compiled in (libtorch not found at configure time)");
#endif
  // Every row reports median and IQR: default to several repetitions unless asked otherwise.
  std::vector<char*> args(argv, argv + argc);
  std::string reps = "--benchmark_repetitions=" + std::to_string(tenax_bench::kDefaultRepetitions);
  bool has_reps = false;
  for (int i = 1; i < argc; ++i) has_reps = has_reps || std::string(argv[i]).rfind("--benchmark_repetitions", 0) == 0;
  if (!has_reps) args.insert(args.begin() + 1, reps.data());
  int n = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
