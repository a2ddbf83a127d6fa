#pragma once
// mul: a * s.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

template <class T>
struct MulScalar {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "mul";
  static constexpr bool saves_outputs = false;
  T s;
  Tensor<T> forward(const Tensor<T>& a) const { return detail::map<T>(name, fn::MulScalar<T>{s}, a); }
  // y = s a: dy = s da; ga = conj(s) gy.
  template <class C>
  auto jvp(const C& c) const {
    return mul(c.dx0(), s);
  }
  template <class C>
  auto vjp(const C& c) const {
    return mul(c.gy0(), fn::conj_of(s));
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> mul(const Tensor<T>& a, T s) {
  return detail::apply(ops::MulScalar<T>{s}, a);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_MUL_SCALAR(T) TENAX_INSTANCE Tensor<T> mul(const Tensor<T>&, T);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_MUL_SCALAR)

}  // namespace tenax
