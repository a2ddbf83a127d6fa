#pragma once
// pow: x^p for a scalar exponent p, and x^e for a tensor exponent (broadcasting).
#include "tenax/ad/apply.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

template <class T>
struct PowScalar {
  static constexpr const char* name = "pow";
  static constexpr bool saves_outputs = false;
  T p;
  Tensor<T> forward(const Tensor<T>& x) const { return detail::map<T>(name, fn::PowScalar<T>{p}, x); }
  // y = x^p: dy = p x^(p-1) dx; gx = conj(p x^(p-1)) gy.
  template <class C>
  auto jvp(const C& c) const {
    return mul(c.dx0(), slope(c.x0()));
  }
  template <class C>
  auto vjp(const C& c) const {
    return mul(c.gy0(), conj(slope(c.x0())));
  }
  Tensor<T> slope(const Tensor<T>& x) const {
    if (p == T(0)) return mul(x, T(0));
    return mul(pow(x, T(p - T(1))), p);
  }
};

struct Pow {
  static constexpr const char* name = "pow";
  template <class T>
  Tensor<T> forward(const Tensor<T>& x, const Tensor<T>& e) const {
    return detail::map<T>(name, fn::Pow{}, x, e);
  }
  // y = x^e: dy = e x^(e-1) dx + y log(x) de;
  //          gx = sum_to(conj(e x^(e-1)) gy), ge = sum_to(conj(y log x) gy).
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    Tensor<T> r;
    if (c.dx0().defined()) r = mul(c.dx0(), mul(c.x1(), pow(c.x0(), add(c.x1(), T(-1)))));
    if (c.dx1().defined()) {
      auto t = mul(c.dx1(), mul(c.y0(), log(c.x0())));
      r = r.defined() ? add(r, t) : t;
    }
    return broadcast_to(r, c.y0().shape());
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    Tensor<T> gx, ge;
    if (c.needs(0)) gx = sum_to(mul(c.gy0(), conj(mul(c.x1(), pow(c.x0(), add(c.x1(), T(-1)))))), c.x0().shape());
    if (c.needs(1)) ge = sum_to(mul(c.gy0(), conj(mul(c.y0(), log(c.x0())))), c.x1().shape());
    return std::tuple{gx, ge};
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> pow(const Tensor<T>& x, T exponent) {
  return detail::apply(ops::PowScalar<T>{exponent}, x);
}
template <Floating T>
Tensor<T> pow(const Tensor<T>& x, const Tensor<T>& exponent) {
  return detail::apply(ops::Pow{}, x, exponent);
}

}  // namespace tenax
