#pragma once
// pow: x^p for a scalar exponent p, and x^e for a tensor exponent (broadcasting).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

template <class T>
struct PowScalar {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
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
  // x^0 = 1 for every x (NaN and inf too), so its slope is 0 everywhere, not 0 * x.
  Tensor<T> slope(const Tensor<T>& x) const {
    if (p == T(0)) return Tensor<T>::zeros(x.shape(), x.device());
    return mul(pow(x, T(p - T(1))), p);
  }
};

struct Pow {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "pow";
  template <class T>
  Tensor<T> forward(const Tensor<T>& x, const Tensor<T>& e) const {
    return detail::map<T>(name, fn::Pow{}, x, e);
  }
  // y = x^e: dy = e x^(e-1) dx + y log(x) de;
  //          gx = sum_to(conj(e x^(e-1)) gy), ge = sum_to(conj(y log x) gy).
  // The products 0 * inf are read as 0, as in PyTorch: dy/dx where e = 0 (y = x^0 = 1 for every x)
  // and dy/de at x = 0 (y = 0^e = 0 for e > 0). The masked branches read x as 1 there, so no inf
  // enters the first and second derivatives; elsewhere the formulas (and all their derivatives)
  // are unchanged (see dbase for which points are masked).
  template <class C>
  auto jvp(const C& c) const {
    Tensor<typename std::remove_cvref_t<decltype(c.x0())>::value_type> r;
    if (c.dx0().defined()) r = mul(c.dx0(), dbase(c.x0(), c.x1()));
    if (c.dx1().defined()) {
      auto t = mul(c.dx1(), dexponent(c.x0(), c.y0()));
      r = detail::accumulate(r, t);
    }
    return broadcast_to(r, c.dy0_shape());
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    Tensor<T> gx, ge;
    if (c.needs(0)) gx = sum_to(mul(c.gy0(), conj(dbase(c.x0(), c.x1()))), c.x0().shape());
    if (c.needs(1)) ge = sum_to(mul(c.gy0(), conj(dexponent(c.x0(), c.y0()))), c.x1().shape());
    return std::tuple{gx, ge};
  }

 private:
  // e x^(e-1), exact at every order, except where e = 0 and x or x^-2 is not finite (x = 0, tiny,
  // inf or NaN), where 0 * inf would enter its first or second derivatives: there it is e times a
  // constant c = x^-1 that stops every derivative in x (they are 0: x^0 = 1) but keeps the one in
  // e, the mixed second derivative x^-1, with c = 0 where x^-1 is not finite, so the value stays 0.
  template <class T>
  static Tensor<T> dbase(const Tensor<T>& x, const Tensor<T>& e) {
    const Device dev = x.device();
    auto zero = Tensor<T>::zeros({}, dev), one = Tensor<T>::ones({}, dev);
    const auto no = Tensor<bool>::zeros({}, dev);
    const auto regular = where(isfinite(x), isfinite(div(one, mul(x, x))), no);
    const auto bad = where(regular, no, eq(e, zero));
    const Tensor<T> inv = div(one, where(bad, x, one)).detach();
    const Tensor<T> at_bad = mul(e, where(isfinite(inv), inv, zero));
    return where(bad, at_bad, mul(e, pow(where(bad, one, x), add(e, T(-1)))));
  }
  template <class T>
  static Tensor<T> dexponent(const Tensor<T>& x, const Tensor<T>& y) {
    auto zero = Tensor<T>::zeros({}, x.device());
    auto is0 = eq(x, zero);
    return where(is0, zero, mul(y, log(where(is0, Tensor<T>::ones({}, x.device()), x))));
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

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_POW(T)                       \
  TENAX_INSTANCE Tensor<T> pow(const Tensor<T>&, T); \
  TENAX_INSTANCE Tensor<T> pow(const Tensor<T>&, const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_POW)

}  // namespace tenax
