#pragma once
// relu: max(x, 0) for real input.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

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
    return masked(c.x0(), c.dx0());
  }
  template <class C>
  auto vjp(const C& c) const {
    return masked(c.x0(), c.gy0());
  }

 private:
  template <class T>
  static Tensor<T> masked(const Tensor<T>& x, const Tensor<T>& v) {
    auto zero = Tensor<T>::zeros({}, x.device());
    return where(gt(x, zero), v, zero);
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
