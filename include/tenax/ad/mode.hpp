#pragma once
// Thread-local AD mode switches and their RAII guards.
#include <cstdint>
#include <cstdlib>

#include "tenax/core/shared_state.hpp"

namespace tenax {
namespace detail {

struct ModeState {
  bool grad_enabled = true;           // record reverse-mode nodes
  bool fw_enabled = true;             // propagate forward-mode tangents
  void* tracer = nullptr;             // trace mode hook: non-null while a function is being traced
  void* tangent_replay = nullptr;     // jacfwd's linearization: forward-mode steps recorded (ad/apply.hpp)
  int tangent_batch_rank = -1;        // jacfwd's batched replay: tangents carry a trailing batch of
  std::int64_t tangent_batch = 0;     // tangent_batch directions past this rank (ad/apply.hpp)
  bool in_backward = false;           // the engine is running derivative rules (ad/engine.hpp)
  bool anomaly = anomaly_from_env();  // anomaly mode (ad/anomaly.hpp): check outputs for NaN/Inf
  bool anomaly_stacks = true;         // ... and capture each recorded op's call stack
  std::uint64_t next_seq = 1;

  static bool anomaly_from_env() {
    const char* v = std::getenv("TENAX_DETECT_ANOMALY");
    return v && *v && *v != '0';
  }
};

TENAX_SHARED_STATE inline ModeState& mode() {
  thread_local ModeState m;
  return m;
}

}  // namespace detail

// Disables tape recording in a scope (like torch.no_grad).
class NoGradGuard {
 public:
  NoGradGuard() : prev_(detail::mode().grad_enabled) { detail::mode().grad_enabled = false; }
  ~NoGradGuard() { detail::mode().grad_enabled = prev_; }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};
using no_grad = NoGradGuard;

// Sets recording on or off in a scope.
class GradModeGuard {
 public:
  explicit GradModeGuard(bool on) : prev_(detail::mode().grad_enabled) { detail::mode().grad_enabled = on; }
  ~GradModeGuard() { detail::mode().grad_enabled = prev_; }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool prev_;
};

inline bool is_grad_enabled() { return detail::mode().grad_enabled; }

namespace detail {
// Sets forward-mode propagation in a scope: off while a JVP rule computes tangents (a tensor has one
// tangent slot; nested jvp takes another path, ad/functional.hpp), back on where a rule evaluates a
// function with its inputs' tangents (checkpoint's JVP, ad/checkpoint.hpp).
template <bool On>
class ForwardModeGuard {
 public:
  ForwardModeGuard() : prev_(mode().fw_enabled) { mode().fw_enabled = On; }
  ~ForwardModeGuard() { mode().fw_enabled = prev_; }
  ForwardModeGuard(const ForwardModeGuard&) = delete;
  ForwardModeGuard& operator=(const ForwardModeGuard&) = delete;

 private:
  bool prev_;
};
using ForwardOffGuard = ForwardModeGuard<false>;
using ForwardOnGuard = ForwardModeGuard<true>;
}  // namespace detail
}  // namespace tenax
