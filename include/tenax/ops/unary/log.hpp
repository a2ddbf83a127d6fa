#pragma once
// log: elementwise op.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Log {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "log";
  static constexpr bool saves_outputs = false;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return detail::map<T>(name, fn::Log{}, x);
  }
  // y = log x (holomorphic): dy = dx / x; gx = gy / conj(x).
  template <class C>
  auto jvp(const C& c) const {
    return div(c.dx0(), c.x0());
  }
  template <class C>
  auto vjp(const C& c) const {
    return div(c.gy0(), conj(c.x0()));
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> log(const Tensor<T>& x) {
  return detail::apply(ops::Log{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_LOG(T) TENAX_INSTANCE Tensor<T> log(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_LOG)

}  // namespace tenax
