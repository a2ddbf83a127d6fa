#pragma once
// add: a + s.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

template <class T>
struct AddScalar {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "add";
  static constexpr bool saves_outputs = false;
  T s;
  Tensor<T> forward(const Tensor<T>& a) const { return detail::map<T>(name, fn::AddScalar<T>{s}, a); }
  // y = a + s: dy = da; ga = gy.
  template <class C>
  auto jvp(const C& c) const {
    return c.dx0();
  }
  template <class C>
  auto vjp(const C& c) const {
    return c.gy0();
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> add(const Tensor<T>& a, T s) {
  return detail::apply(ops::AddScalar<T>{s}, a);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_ADD_SCALAR(T) TENAX_INSTANCE Tensor<T> add(const Tensor<T>&, T);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_ADD_SCALAR)

}  // namespace tenax
