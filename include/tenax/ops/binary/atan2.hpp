#pragma once
// atan2(a, b): the angle of the point (b, a), in [-pi, pi] (real; broadcasting).
#include <utility>

#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/binary/slopes.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

// y = atan2(a, b): dy = (b da - a db) / (a^2 + b^2); ga = sum_to(b gy / (a^2 + b^2)),
// gb = sum_to(-a gy / (a^2 + b^2)). Both are NaN at a = b = 0 (0 / 0), as PyTorch.
struct Atan2 : BySlopes<Atan2, fn::Atan2> {
  static constexpr const char* name = "atan2";
  static constexpr bool saves_outputs = false;
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
