#pragma once
// Kernel slots of the ops whose CPU form is a hand-written host loop rather than a map, a
// reduction or a backend routine: tril/triu and embed, the pivot and permutation ops, lu_solve,
// the info codes and checks of the linalg ops, det's pivot scans, sort and the indexing kernels.
// Such an op writes two functions with one signature: its host form, which runs on memory the host
// addresses (a loop that a prepared program captures, kernels/capture.hpp; checks that read values
// at once), and its generic form, written with the backend interface (backend/backend.hpp) and
// public ops, which runs on any device without waiting for it. The slot holds one entry per device
// kind, like MapKernel's: the CPU's is the host form, every other kind's starts as the generic form,
// and a device backend may put a kernel of its own there when the registry starts. Op code calls
// dispatch<...>(device, args...) and never names a device.
#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "tenax/core/device.hpp"
#include "tenax/core/shared_state.hpp"

namespace tenax::detail {

template <auto Host, auto Generic>
struct TENAX_SHARED_STATE DeviceDispatch {
  using Fn = decltype(Host);
  static_assert(std::is_same_v<Fn, decltype(Generic)>, "the host and generic forms have one signature");
  static inline constinit std::array<Fn, kDeviceKinds> on = [] {
    std::array<Fn, kDeviceKinds> a{};
    a.fill(Generic);
    a[static_cast<std::size_t>(kind_index(Device::cpu()))] = Host;
    return a;
  }();
};

// Runs the entry of d's kind of the slot <Host, Generic> with args.
template <auto Host, auto Generic, class... A>
decltype(auto) dispatch(Device d, A&&... args) {
  return DeviceDispatch<Host, Generic>::on[static_cast<std::size_t>(kind_index(d))](std::forward<A>(args)...);
}

}  // namespace tenax::detail
