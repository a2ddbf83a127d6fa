#pragma once
// atan2(a, b): the angle of the point (b, a), in [-pi, pi] (real; broadcasting).
#include <utility>

#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/binary/slopes.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Atan2 {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "atan2";
  static constexpr bool saves_outputs = false;
  template <class T>
  Tensor<T> forward(const Tensor<T>& a, const Tensor<T>& b) const {
    return detail::map<T>(name, fn::Atan2{}, a, b);
  }
  // y = atan2(a, b): dy = (b da - a db) / (a^2 + b^2); ga = sum_to(b gy / (a^2 + b^2)),
  // gb = sum_to(-a gy / (a^2 + b^2)). Both are NaN at a = b = 0 (0 / 0), as PyTorch.
  template <class C>
  auto jvp(const C& c) const {
    const auto [wa, wb] = slopes(c);
    return detail::tangent_by_slopes(c, wa, wb);
  }
  template <class C>
  auto vjp(const C& c) const {
    const auto [wa, wb] = slopes(c);
    return detail::cotangents_by_slopes(c, wa, wb);
  }

 private:
  template <class C>
  static auto slopes(const C& c) {
    auto r2 = add(square(c.x0()), square(c.x1()));
    return std::pair{div(c.x1(), r2), neg(div(c.x0(), r2))};
  }
};

}  // namespace ops

template <RealFloating T>
Tensor<T> atan2(const Tensor<T>& a, const Tensor<T>& b) {
  return detail::apply(ops::Atan2{}, a, b);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_ATAN2(T) TENAX_INSTANCE Tensor<T> atan2(const Tensor<T>&, const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_REAL, TENAX_INSTANCES_ATAN2)

}  // namespace tenax
