#pragma once
// softplus: log(1 + e^x), computed stably (real).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Softplus {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "softplus";
  static constexpr bool saves_outputs = false;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return detail::map<T>(name, fn::Softplus{}, x);
  }
  // y = log(1 + e^x): dy = sigmoid(x) dx; gx = sigmoid(x) gy.
  template <class C>
  auto jvp(const C& c) const {
    return mul(c.dx0(), slope(c.x0()));
  }
  template <class C>
  auto vjp(const C& c) const {
    return mul(c.gy0(), slope(c.x0()));
  }

 private:
  template <class T>
  static Tensor<T> slope(const Tensor<T>& x) {
    return sigmoid(x);
  }
};

}  // namespace ops

template <RealFloating T>
Tensor<T> softplus(const Tensor<T>& x) {
  return detail::apply(ops::Softplus{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_SOFTPLUS(T) TENAX_INSTANCE Tensor<T> softplus(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_REAL, TENAX_INSTANCES_SOFTPLUS)

}  // namespace tenax
