#pragma once
// conj: complex conjugate (identity for real tensors, which returns the input handle).
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Conj {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "conj";
  static constexpr bool saves_outputs = false;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return detail::map<T>(name, fn::Conj{}, x);
  }
  // y = conj x (R-linear): dy = conj dx; <gy, conj dx> = Re(conj(gy) conj(dx)) gives gx = conj gy.
  template <class C>
  auto jvp(const C& c) const {
    return conj(c.dx0());
  }
  template <class C>
  auto vjp(const C& c) const {
    return conj(c.gy0());
  }
};

}  // namespace ops

template <Scalar T>
Tensor<T> conj(const Tensor<T>& x) {
  detail::check_defined("conj", x);
  if constexpr (is_complex_v<T>)
    return detail::apply(ops::Conj{}, x);
  else
    return x;
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_CONJ(T) TENAX_INSTANCE Tensor<T> conj(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_SCALAR, TENAX_INSTANCES_CONJ)

}  // namespace tenax
