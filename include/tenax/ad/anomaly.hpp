#pragma once
// Anomaly mode: an opt-in check that finds the first op producing a NaN or an infinity.
//
//   { tenax::AnomalyGuard on;  loss = f(x); loss.backward(); }   // or TENAX_DETECT_ANOMALY=1
//
// While it is on (per thread), every op's floating outputs are checked after its forward kernel
// and every rule's cotangents after its backward step; the first op that turns finite inputs into a
// non-finite output throws tenax::Error("[anomaly] ...") naming the op, the output, the shapes and
// where it was called from (a backtrace taken when the op ran; for a backward rule, the backtrace
// of the forward call that recorded it). Ops that merely propagate a NaN they were given are not
// blamed. Prepared programs check each step the same way (compiled step index and op). The cost is
// one pass over every output; it is off by default.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tenax/ad/mode.hpp"
#include "tenax/core/tensor_impl.hpp"

namespace tenax {

// Turns anomaly mode on (or off) in a scope. stacks = false skips the call stack captured per
// recorded op (a backward report then names the rule without its forward call site): most of the
// mode's cost on small tensors is that capture.
class AnomalyGuard {
 public:
  explicit AnomalyGuard(bool on = true, bool stacks = true)
      : prev_(detail::mode().anomaly), prev_stacks_(detail::mode().anomaly_stacks) {
    detail::mode().anomaly = on;
    detail::mode().anomaly_stacks = stacks;
  }
  ~AnomalyGuard() {
    detail::mode().anomaly = prev_;
    detail::mode().anomaly_stacks = prev_stacks_;
  }
  AnomalyGuard(const AnomalyGuard&) = delete;
  AnomalyGuard& operator=(const AnomalyGuard&) = delete;

 private:
  bool prev_, prev_stacks_;
};

inline bool is_anomaly_enabled() { return detail::mode().anomaly; }

namespace detail {

// Raw return addresses of a call stack, symbolised only when printed.
struct CallStack {
  void* frames[32];
  int size = 0;
  static CallStack capture();
  std::string str() const;
};

// Number of NaN/Inf elements of a floating tensor (0 for other dtypes and undefined tensors).
std::int64_t count_nonfinite(const TensorImpl* t);
// Throws the anomaly error when an output is non-finite while every input is finite. `where`
// describes the context ("forward of", "backward of", "compiled step 3,"); origin: where the op
// was called from (the current stack when null).
void check_anomaly(const char* where, const char* op, const ImplPtr* outs, std::size_t n_outs, const ImplPtr* ins,
                   std::size_t n_ins, const CallStack* origin);

}  // namespace detail
}  // namespace tenax
