#pragma once
// Failure checks of the ops' info codes: at once where the host reads the codes, else when the
// device's results are next read (core/deferred_checks.hpp), so that no op waits for a device. A
// slot of kernels/dispatch.hpp.
#include <cstdint>
#include <utility>

#include "tenax/core/deferred_checks.hpp"
#include "tenax/kernels/dispatch.hpp"

namespace tenax::detail {

// Runs check on info's codes (contiguous int32) now.
inline void check_codes_now(ImplPtr info, CodeCheck check) {
  check(static_cast<const std::int32_t*>(info->data()), info->numel());
}

// Runs check on info's codes (contiguous int32): now on memory the host reads, else deferred.
inline void check_codes(ImplPtr info, CodeCheck check) {
  const Device d = info->device;
  dispatch<&check_codes_now, &defer_check>(d, std::move(info), std::move(check));
}

}  // namespace tenax::detail
