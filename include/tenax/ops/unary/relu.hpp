#pragma once
// relu: max(x, 0) for real input.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

// relu's derivative applied to v: where(x > 0, v, 0) as one map (one pass and no mask buffer;
// PyTorch's threshold_backward). The rules of relu and its own rules use it; v's derivative goes
// through it again and x has none (its selection is piecewise constant).
struct ReluMask {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "relu_mask";
  static constexpr bool saves_outputs = false;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x, const Tensor<T>& v) const {
    return detail::map<T>(name, fn::ReluMask{}, x, v);
  }
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    auto dv = c.dx1().defined() ? c.dx1() : Tensor<T>::zeros({}, c.x0().device());
    return broadcast_to(detail::apply(ReluMask{}, c.x0(), dv), c.dy0_shape());
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    Tensor<T> gv;
    if (c.needs(1)) gv = sum_to(detail::apply(ReluMask{}, c.x0(), c.gy0()), c.x1().shape());
    return std::tuple{Tensor<T>(), gv};
  }
};

struct Relu {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "relu";
  static constexpr bool saves_outputs = false;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return detail::map<T>(name, fn::Relu{}, x);
  }
  // dy = [x > 0] dx; gx = [x > 0] gy (subgradient 0 at x = 0, as PyTorch and JAX).
  template <class C>
  auto jvp(const C& c) const {
    return detail::apply(ReluMask{}, c.x0(), c.dx0());
  }
  template <class C>
  auto vjp(const C& c) const {
    return detail::apply(ReluMask{}, c.x0(), c.gy0());
  }
};

}  // namespace ops

template <RealFloating T>
Tensor<T> relu(const Tensor<T>& x) {
  return detail::apply(ops::Relu{}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_RELU(T) TENAX_INSTANCE Tensor<T> relu(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_REAL, TENAX_INSTANCES_RELU)

}  // namespace tenax
