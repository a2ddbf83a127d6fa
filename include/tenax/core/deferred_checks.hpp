#pragma once
// Failure checks of device results, run when the device's results are next read.
//
// A default (raising) linalg variant on a device does not wait for its info codes: it leaves a
// check here, holding the codes (a contiguous int32 tensor on the device) and what raises for
// them. The device's checks run, oldest first, after every copy from the device to the host
// (Tensor::to(cpu), item()) and in cuda::synchronize: the codes come to the host, and the first
// failure raises its LinAlgError (the device's remaining checks are dropped with it). So a run of
// device work is never interrupted by a synchronisation, and a failure is still never silent.
#include <cstddef>
#include <cstdint>
#include <functional>

#include "tenax/core/device.hpp"
#include "tenax/core/tensor_impl.hpp"

namespace tenax::detail {

// Raises for failing codes (n of them, on the host); returns when none fails.
using CodeCheck = std::function<void(const std::int32_t* codes, std::int64_t n)>;
// The same for float64 values (sizes a check compares with a tolerance, and names in its message).
using ValueCheck = std::function<void(const double* values, std::int64_t n)>;

// Leaves a check of info (contiguous int32, on info->device) to run with the device's next read.
// Past kMaxDeferredChecks pending checks on one device, they run at once (so a loop that never
// reads its results keeps a bounded list).
void defer_check(ImplPtr info, CodeCheck check);
// The same for contiguous float64 values.
void defer_value_check(ImplPtr values, ValueCheck check);
inline constexpr std::size_t kMaxDeferredChecks = 4096;

// Runs device d's pending checks (see above); the first failure raises.
void run_deferred_checks(Device d);

// How many checks device d has pending.
std::size_t deferred_checks(Device d);

}  // namespace tenax::detail
