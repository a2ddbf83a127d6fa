#pragma once
// sign: -1, 0, +1 for real input; x/|x| (0 at 0) for complex input.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Sign {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "sign";
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return detail::map<T>(name, fn::Sign{}, x);
  }
  // Real: piecewise constant, derivative 0 (also at 0, by convention).
  // Complex: y = x/r with r = |x|: dy = (dx - y Re(conj(y) dx)) / r and, by the adjoint identity,
  // gx = (gy - y Re(conj(y) gy)) / r; both are 0 where x = 0.
  template <class C>
  auto jvp(const C& c) const {
    return rule(c.x0(), c.y0(), c.dx0());
  }
  template <class C>
  auto vjp(const C& c) const {
    return rule(c.x0(), c.y0(), c.gy0());
  }

 private:
  template <class T>
  static Tensor<T> rule(const Tensor<T>& x, const Tensor<T>& y, const Tensor<T>& v) {
    if constexpr (!is_complex_v<T>) {
      return mul(v, T(0));
    } else {
      using R = real_t<T>;
      auto r = abs(x);
      auto zero = Tensor<R>::zeros({}, x.device());
      auto safe_r = where(eq(r, zero), Tensor<R>::ones({}, x.device()), r);
      auto proj = mul(y, cast<T>(real(mul(conj(y), v))));
      auto g = div(sub(v, proj), cast<T>(safe_r));
      return where(eq(r, zero), Tensor<T>::zeros({}, x.device()), g);
    }
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> sign(const Tensor<T>& x) {
  return detail::apply(ops::Sign{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_SIGN(T) TENAX_INSTANCE Tensor<T> sign(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_SIGN)

}  // namespace tenax
