#pragma once
// hypot(a, b): sqrt(a^2 + b^2) without overflow or underflow (real; broadcasting).
#include <utility>

#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/binary/slopes.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

// y = hypot(a, b): dy = (a da + b db) / y; ga = sum_to(a gy / y), gb = sum_to(b gy / y). NaN at
// a = b = 0 (0 / 0), as PyTorch.
struct Hypot : BySlopes<Hypot, fn::Hypot> {
  static constexpr const char* name = "hypot";
  static constexpr bool saves_outputs = true;
  template <class C>
  static auto slopes(const C& c) {
    return std::pair{div(c.x0(), c.y0()), div(c.x1(), c.y0())};
  }
};

}  // namespace ops

template <RealFloating T>
Tensor<T> hypot(const Tensor<T>& a, const Tensor<T>& b) {
  return detail::apply(ops::Hypot{}, a, b);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_HYPOT(T) TENAX_INSTANCE Tensor<T> hypot(const Tensor<T>&, const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_REAL, TENAX_INSTANCES_HYPOT)

}  // namespace tenax
