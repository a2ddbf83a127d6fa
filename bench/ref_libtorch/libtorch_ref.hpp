#pragma once
// Interface of the libtorch reference drivers to the rest of a bench executable. Plain types
// only: the drivers are compiled with libtorch's flags and an older language standard.
#include <string>

namespace tenax_bench {

#if defined(TENAX_BENCH_WITH_TORCH)
// Puts libtorch in the measured configuration (one intra-op and one inter-op thread) and
// returns a description of it (version, threads) for the benchmark context.
std::string libtorch_setup();
#endif

}  // namespace tenax_bench
