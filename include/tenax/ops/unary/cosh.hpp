#pragma once
// cosh: elementwise op (real and complex).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Cosh {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "cosh";
  static constexpr bool saves_outputs = false;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return detail::map<T>(name, fn::Cosh{}, x);
  }
  // y = cosh x: dy = sinh(x) dx; gx = conj(sinh x) gy.
  template <class C>
  auto jvp(const C& c) const {
    return mul(c.dx0(), slope(c.x0()));
  }
  template <class C>
  auto vjp(const C& c) const {
    return mul(c.gy0(), conj(slope(c.x0())));
  }

 private:
  template <class T>
  static Tensor<T> slope(const Tensor<T>& x) {
    return sinh(x);
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> cosh(const Tensor<T>& x) {
  return detail::apply(ops::Cosh{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_COSH(T) TENAX_INSTANCE Tensor<T> cosh(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_COSH)

}  // namespace tenax
