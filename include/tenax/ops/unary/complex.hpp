#pragma once
// complex: re + i im from two real tensors (broadcasting).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Complex {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "complex";
  static constexpr bool saves_outputs = false;
  template <class R>
  Tensor<std::complex<R>> forward(const Tensor<R>& re, const Tensor<R>& im) const {
    return detail::map<std::complex<R>>(name, fn::MakeComplex{}, re, im);
  }
  // y = a + i b: dy = da + i db; gy splits as ga = Re gy, gb = Im gy (summed over broadcasting).
  template <class C>
  auto jvp(const C& c) const {
    using R = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Shape s = c.dy0_shape();
    auto a = c.dx0().defined() ? broadcast_to(c.dx0(), s) : Tensor<R>::zeros(s, c.y0().device());
    auto b = c.dx1().defined() ? broadcast_to(c.dx1(), s) : Tensor<R>::zeros(s, c.y0().device());
    return complex(a, b);
  }
  template <class C>
  auto vjp(const C& c) const {
    return std::tuple{sum_to(real(c.gy0()), c.x0().shape()), sum_to(imag(c.gy0()), c.x1().shape())};
  }
};

}  // namespace ops

template <RealFloating T>
Tensor<std::complex<T>> complex(const Tensor<T>& re, const Tensor<T>& im) {
  return detail::apply(ops::Complex{}, re, im);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_COMPLEX(T) TENAX_INSTANCE Tensor<std::complex<T>> complex(const Tensor<T>&, const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_REAL, TENAX_INSTANCES_COMPLEX)

}  // namespace tenax
