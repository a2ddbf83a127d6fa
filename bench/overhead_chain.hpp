#pragma once
// The overhead suite's chain case, shared by the tenax rows (overhead.cpp) and the libtorch
// reference rows (ref_libtorch/overhead_torch.cpp). Only plain types cross between the two (they
// are compiled with different language standards and flags).
//
// chain100: x is a one-element tensor (shape {1}, f64); y = x, then 100 ops alternating
// y = y * c and y = y + c (50 mul, 50 add; c a one-element constant not requiring grad).
// Recorded: x requires grad, the timed region is the forward chain plus y.backward().
// Unrecorded: forward only, under no-grad with inputs not requiring grad.
#include <cmath>
#include <cstdio>
#include <string>

#include "common/bench_common.hpp"

namespace tenax_bench::overhead {

inline constexpr int kChainOps = 100;  // ops per chain (mul and add alternating)
inline constexpr double kX0 = 0.5;     // the leaf's value
inline constexpr double kC = 1.01;     // the constant multiplier / addend

// One untimed run of a chain: the final value, dy/dx (NaN when not recorded) and whether the
// output takes part in reverse mode.
struct ChainResult {
  double value = NAN;
  double grad = NAN;
  bool tracks_grad = false;
};

// The analytic result in plain double arithmetic: the value by the same sequence of roundings,
// the gradient as the product of the multipliers (c^50).
inline ChainResult chain_analytic() {
  ChainResult r;
  double y = kX0, g = 1;
  for (int i = 0; i < kChainOps; ++i) {
    if (i % 2 == 0) {
      y = y * kC;
      g = g * kC;
    } else {
      y = y + kC;
    }
  }
  r.value = y;
  r.grad = g;
  r.tracks_grad = true;
  return r;
}

// One untimed run of each implementation (defined in overhead.cpp and overhead_torch.cpp).
ChainResult tenax_chain_once(bool recorded);
#if defined(TENAX_BENCH_WITH_TORCH)
ChainResult torch_chain_once(bool recorded);
#endif

// Checks a result against the analytic value and against the other implementation: empty when
// correct, else the reason (used as the row's SkipWithError message).
inline std::string check_chain(const char* who, const ChainResult& got, bool recorded, const ChainResult* other,
                               const char* other_name) {
  const ChainResult want = chain_analytic();
  auto num = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return std::string(buf);
  };
  if (!close(got.value, want.value))
    return std::string(who) + ": chain value " + num(got.value) + " != analytic " + num(want.value);
  if (recorded) {
    if (!got.tracks_grad) return std::string(who) + ": recorded chain output does not track grad";
    if (!close(got.grad, want.grad))
      return std::string(who) + ": gradient " + num(got.grad) + " != analytic product of multipliers " + num(want.grad);
  } else if (got.tracks_grad) {
    return std::string(who) + ": unrecorded chain output tracks grad";
  }
  if (other) {
    if (!close(got.value, other->value))
      return std::string(who) + ": value " + num(got.value) + " != " + other_name + " " + num(other->value);
    if (recorded && !close(got.grad, other->grad))
      return std::string(who) + ": gradient " + num(got.grad) + " != " + other_name + " " + num(other->grad);
  }
  return {};
}

}  // namespace tenax_bench::overhead
