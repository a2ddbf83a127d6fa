#pragma once
// In-place execution in prepared programs (trace/program.hpp): before running an elementwise step
// whose input dies at that step, the program offers that input's body here; the step's single
// `detail::map` call then writes its output into the input's buffer instead of allocating one.
// A map element reads its inputs before it writes its output, at the same offset, so the aliasing
// is safe when the donated input has the output's dtype, shape and contiguous layout (checked in
// map) and nothing else refers to its storage (checked by the program); memory another library
// owns (a DLPack import) is never written.
#include "tenax/core/shared_state.hpp"
#include "tenax/core/tensor_impl.hpp"

namespace tenax::detail {

// The body offered to the next map on this thread (nullptr: none).
TENAX_SHARED_STATE inline TensorImpl*& donated_body() {
  thread_local TensorImpl* body = nullptr;
  return body;
}

// Offers `body` for the scope's duration; whatever the step did not take is withdrawn at its end.
class DonationScope {
 public:
  explicit DonationScope(TensorImpl* body) { donated_body() = body; }
  ~DonationScope() { donated_body() = nullptr; }
  DonationScope(const DonationScope&) = delete;
  DonationScope& operator=(const DonationScope&) = delete;
};

// Takes the offered body (once) if it can hold the output of a map: `out` of `dtype`, `shape` and
// `device`, written over one of the map's inputs `ins`.
inline ImplPtr take_donation(DType dtype, const Shape& shape, Device device,
                             std::initializer_list<const TensorImpl*> ins) {
  TensorImpl* d = donated_body();
  if (d == nullptr) return {};
  donated_body() = nullptr;
  bool is_input = false;
  for (const TensorImpl* t : ins) is_input = is_input || t == d;
  if (!is_input || d->storage->external || d->dtype != dtype || d->device != device || !(d->shape == shape) ||
      d->offset != 0 || !d->is_contiguous())
    return {};
  return make_view_impl(*d, shape, d->strides, 0);
}

}  // namespace tenax::detail
