#pragma once
// tenax's CPU thread budget: the size of the persistent worker pool that runs tenax's own kernels
// (elementwise maps, reductions, copies, batched small linalg), and the thread count tenax gives
// the BLAS/LAPACK provider.
//
// The budget is TENAX_NUM_THREADS when set, else the number of CPUs in the process's affinity
// set (so `taskset -c 0` means one thread). Workers are allowed the whole affinity set, never one
// CPU each, so provider threads they create inherit the whole set too. Results do not depend on
// the budget: work is split by a fixed rule (see kernels/parallel.hpp), so every thread count,
// including 1, gives bit-identical results.
#include <string>

namespace tenax {

// The current budget (>= 1), counting the calling thread.
int num_threads();

// Sets the budget to n >= 1 (a tenax::Error otherwise): joins the old workers, starts n - 1 new
// ones, and sets the provider's thread count to n. A parallel loop already running on another
// thread finishes on the old workers. Not callable from inside a parallel loop.
void set_num_threads(int n);

// What the thread setup is, for tenax::config() and for users checking their deployment.
struct ThreadInfo {
  int threads = 1;               // tenax's budget
  int provider_threads = 1;      // the provider's own thread count (-1 when it has no such setting)
  std::string source;            // where the budget came from: "TENAX_NUM_THREADS", "affinity", "set_num_threads"
  std::string affinity;          // the process's CPU affinity set, as a list ("0-1")
  bool provider_pinned = false;  // the provider's count was left to OPENBLAS/OMP/MKL_NUM_THREADS
};
ThreadInfo thread_info();

}  // namespace tenax
