#pragma once
// The failure check of the default (raising) linalg variants, as an op: recorded while tracing like
// every other op, so a compiled program checks each run's info as the eager call does (instead of
// returning the NaN results of a failed factorization), and kept by dead-code elimination although
// it has no output (Op::effect). On a device it does not synchronise: the check runs when the
// device's results are next read.
#include <cstdint>
#include <sstream>
#include <string>

#include "tenax/ad/apply.hpp"
#include "tenax/core/deferred_checks.hpp"
#include "tenax/kernels/dispatch.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/linalg/common.hpp"

namespace tenax {
namespace ops {

struct InfoCheck {
  static constexpr const char* name = "info_check";
  static constexpr bool effect = true;
  static constexpr bool one_kernel = true;  // its host form (kernels/capture.hpp)
  const char* op;                           // the checked op, named in the error
  Shape input_shape;                        // its input's shape: the batch element and the message
  std::string (*what)(std::int32_t);        // describes a failing info code
  bool nonfinite_only = false;              // only kNonFiniteInfo fails (lu: a zero pivot is reported, not raised)
  const char* dtype = "";                   // its input's dtype, for the message

  // Raises LinAlgError for the first failing matrix; no output. On a device the codes are not
  // waited for: the check runs when the device's results are next read (core/deferred_checks.hpp).
  Tensor<std::int32_t> forward(const Tensor<std::int32_t>& info) const {
    detail::dispatch<&InfoCheck::host, &InfoCheck::generic>(info.device(), *this, info);
    return {};
  }
  // One captured kernel (a prepared run calls it on each run's codes).
  static void host(const InfoCheck& op, const Tensor<std::int32_t>& info) {
    const Tensor<std::int32_t> c = info.impl()->is_contiguous() ? info : info.contiguous();
    const detail::TensorImpl* none = nullptr;
    detail::record_kernel_n([op, n = c.numel(), dev = info.device()](
                                char* const* p) { op.check(reinterpret_cast<const std::int32_t*>(p[1]), n, dev); },
                            {none}, {c.impl().get()});
  }
  // A deferred check of a copy of its own: a prepared program writes the next run's codes into the
  // same buffer.
  static void generic(const InfoCheck& op, const Tensor<std::int32_t>& info) {
    if (info.numel() == 0) return;
    detail::defer_check(clone(info).impl(), [op, dev = info.device()](const std::int32_t* codes, std::int64_t n) {
      op.check(codes, n, dev);
    });
  }

  void check(const std::int32_t* codes, std::int64_t n, Device dev) const {
    for (std::int64_t b = 0; b < n; ++b) {
      if (codes[b] != 0 && (!nonfinite_only || codes[b] == detail::kNonFiniteInfo)) {
        std::ostringstream o;
        o << '[' << op << "] " << what(codes[b]) << detail::batch_index(input_shape, b) << " (input shape "
          << input_shape << ", " << dtype << " on " << dev.str() << ")";
        throw linalg::LinAlgError(o.str());
      }
    }
  }
};

}  // namespace ops

namespace detail {

// Raises the first failing info (nonzero; with nonfinite_only, kNonFiniteInfo only) as a
// LinAlgError, with what(info) describing it; recorded as an InfoCheck step while tracing.
inline void raise_info(const char* op, const Tensor<std::int32_t>& info, const Shape& input_shape, const char* dtype,
                       std::string (*what)(std::int32_t), bool nonfinite_only = false) {
  (void)apply_nondiff(ops::InfoCheck{op, input_shape, what, nonfinite_only, dtype}, info);
}

inline std::string nonfinite_failure(std::int32_t) { return kNonFiniteMessage; }

}  // namespace detail
}  // namespace tenax
