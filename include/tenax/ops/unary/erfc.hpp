#pragma once
// erfc: elementwise op (real).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Erfc {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "erfc";
  static constexpr bool saves_outputs = false;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return detail::map<T>(name, fn::Erfc{}, x);
  }
  // y = erfc x = 1 - erf x: dy = -(2 / sqrt(pi)) exp(-x^2) dx; gx likewise.
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
    return mul(exp(neg(square(x))), T(-1.12837916709551257390));
  }
};

}  // namespace ops

template <RealFloating T>
Tensor<T> erfc(const Tensor<T>& x) {
  return detail::apply(ops::Erfc{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_ERFC(T) TENAX_INSTANCE Tensor<T> erfc(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_REAL, TENAX_INSTANCES_ERFC)

}  // namespace tenax
