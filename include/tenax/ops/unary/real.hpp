#pragma once
// real: the real part, a view of the complex storage (for real input, the input handle).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/unary/component_view.hpp"

namespace tenax {
namespace ops {

struct Real {
  static constexpr const char* name = "real";
  static constexpr bool saves_outputs = false;
  template <class T>
  Tensor<real_t<T>> forward(const Tensor<T>& x) const {
    return Tensor<real_t<T>>(detail::component_view(*x.impl(), 0));
  }
  // y = Re x: dy = Re dx; <gy, Re dx> = Re(conj(gy) dx) for real gy, so gx = gy + 0i.
  template <class C>
  auto jvp(const C& c) const {
    return real(c.dx0());
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    return cast<T>(c.gy0());
  }
};

}  // namespace ops

template <Floating T>
RealTensor<T> real(const Tensor<T>& x) {
  detail::check_defined("real", x);
  if constexpr (is_complex_v<T>)
    return detail::apply(ops::Real{}, x);
  else
    return x;
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_REAL(T) TENAX_INSTANCE RealTensor<T> real(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_REAL)

}  // namespace tenax
