#pragma once
// abs: |x|, real-valued for complex input.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Abs {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "abs";
  static constexpr bool saves_outputs = false;
  template <class T>
  Tensor<real_t<T>> forward(const Tensor<T>& x) const {
    return detail::map<real_t<T>>(name, fn::Abs{}, x);
  }
  // With s = sign(x) (x/|x| for complex, 0 at 0):
  //   dy = Re(conj(s) dx);  gx = s gy  (the real gy promoted to the input type).
  // At x = 0 the subgradient 0 is used.
  template <class C>
  auto jvp(const C& c) const {
    return real(mul(conj(sign(c.x0())), c.dx0()));
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    return mul(cast<T>(c.gy0()), sign(c.x0()));
  }
};

}  // namespace ops

template <Floating T>
RealTensor<T> abs(const Tensor<T>& x) {
  return detail::apply(ops::Abs{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_ABS(T) TENAX_INSTANCE RealTensor<T> abs(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_ABS)

}  // namespace tenax
