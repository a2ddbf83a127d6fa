#pragma once
// imag: the imaginary part, a view of the complex storage (zeros for real input).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/binary/where.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/unary/component_view.hpp"

namespace tenax {
namespace ops {

struct Imag {
  static constexpr const char* name = "imag";
  static constexpr bool saves_outputs = false;
  template <class T>
  Tensor<real_t<T>> forward(const Tensor<T>& x) const {
    return Tensor<real_t<T>>(detail::component_view(*x.impl(), 1));
  }
  // y = Im x: dy = Im dx = Re(conj(i gy) dx) for real gy, so gx = i gy.
  template <class C>
  auto jvp(const C& c) const {
    return imag(c.dx0());
  }
  template <class C>
  auto vjp(const C& c) const {
    using R = real_t<typename std::remove_cvref_t<decltype(c.x0())>::value_type>;
    return complex(Tensor<R>::zeros(c.gy0().shape(), c.gy0().device()), c.gy0());
  }
};

}  // namespace ops

template <Floating T>
RealTensor<T> imag(const Tensor<T>& x) {
  detail::check_defined("imag", x);
  if constexpr (is_complex_v<T>)
    return detail::apply(ops::Imag{}, x);
  else  // zeros that stay on the tape (zero derivative); selected, not x * 0, which is NaN at inf/NaN
    return where(Tensor<bool>::full({}, true, x.device()), Tensor<T>::zeros({}, x.device()), x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_IMAG(T) TENAX_INSTANCE RealTensor<T> imag(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_IMAG)

}  // namespace tenax
