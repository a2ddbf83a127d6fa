#pragma once
// div: a / b with broadcasting.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Div {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "div";
  static constexpr bool saves_outputs = true;
  template <class T>
  Tensor<T> forward(const Tensor<T>& a, const Tensor<T>& b) const {
    return detail::map<T>(name, fn::Div{}, a, b);
  }
  // y = a / b: dy = (da - y db) / b; ga = gy / conj(b), gb = -conj(y / b) gy.
  // Cotangents are summed over broadcast dimensions (sum_to).
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>&a = c.x0(), &b = c.x1(), &da = c.dx0(), &db = c.dx1();
    (void)a;
    (void)b;
    Tensor<T> r;
    if (da.defined()) r = da;
    if (db.defined()) r = r.defined() ? sub(r, mul(c.y0(), db)) : neg(mul(c.y0(), db));
    r = div(r, b);
    return broadcast_to(r, c.dy0_shape());
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>&a = c.x0(), &b = c.x1(), &g = c.gy0();
    (void)a;
    (void)b;
    Tensor<T> ga, gb;
    if (c.needs(0)) ga = sum_to(div(g, conj(b)), a.shape());
    if (c.needs(1)) gb = sum_to(neg(mul(g, conj(div(c.y0(), b)))), b.shape());
    return std::tuple{ga, gb};
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> div(const Tensor<T>& a, const Tensor<T>& b) {
  return detail::apply(ops::Div{}, a, b);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_DIV(T) TENAX_INSTANCE Tensor<T> div(const Tensor<T>&, const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_DIV)

}  // namespace tenax
