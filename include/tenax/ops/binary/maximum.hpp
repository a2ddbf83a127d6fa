#pragma once
// maximum: elementwise maximum with broadcasting (real).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Maximum {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "maximum";
  static constexpr bool saves_outputs = false;
  template <class T>
  Tensor<T> forward(const Tensor<T>& a, const Tensor<T>& b) const {
    return detail::map<T>(name, fn::Maximum{}, a, b);
  }
  // The derivative follows the selected input; at ties (a == b) it is split evenly, so
  // w = [a > b] + [a == b]/2 + [a is NaN] (the forward selects a NaN a) and dy = w da + (1 - w) db,
  // ga = w gy, gb = (1 - w) gy.
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    auto w = weight(c.x0(), c.x1());
    Tensor<T> r;
    if (c.dx0().defined()) r = mul(w, c.dx0());
    if (c.dx1().defined()) {
      auto t = mul(rsub(w, T(1)), c.dx1());
      r = detail::accumulate(r, t);
    }
    return broadcast_to(r, c.dy0_shape());
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    auto w = weight(c.x0(), c.x1());
    Tensor<T> ga, gb;
    if (c.needs(0)) ga = sum_to(mul(w, c.gy0()), c.x0().shape());
    if (c.needs(1)) gb = sum_to(mul(rsub(w, T(1)), c.gy0()), c.x1().shape());
    return std::tuple{ga, gb};
  }

 private:
  template <class T>
  static Tensor<T> weight(const Tensor<T>& a, const Tensor<T>& b) {
    return add(add(cast<T>(gt(a, b)), mul(cast<T>(eq(a, b)), T(0.5))), cast<T>(ne(a, a)));
  }
};

}  // namespace ops

template <RealFloating T>
Tensor<T> maximum(const Tensor<T>& a, const Tensor<T>& b) {
  return detail::apply(ops::Maximum{}, a, b);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_MAXIMUM(T) TENAX_INSTANCE Tensor<T> maximum(const Tensor<T>&, const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_REAL, TENAX_INSTANCES_MAXIMUM)

}  // namespace tenax
