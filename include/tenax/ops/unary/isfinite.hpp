#pragma once
// isfinite: true where an element is neither inf nor NaN (complex: both parts). No derivative.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct IsFinite {
  static constexpr const char* name = "isfinite";
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  template <class T>
  Tensor<bool> forward(const Tensor<T>& x) const {
    return detail::map<bool>(name, fn::IsFinite{}, x);
  }
};

}  // namespace ops

template <Floating T>
Tensor<bool> isfinite(const Tensor<T>& x) {
  return detail::apply_nondiff(ops::IsFinite{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_ISFINITE(T) TENAX_INSTANCE Tensor<bool> isfinite(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_ISFINITE)

}  // namespace tenax
