#pragma once
// where: cond ? a : b elementwise, broadcasting all three.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Where {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "where";
  static constexpr bool saves_outputs = false;
  template <class T>
  Tensor<T> forward(const Tensor<bool>& cond, const Tensor<T>& a, const Tensor<T>& b) const {
    return detail::map<T>(name, fn::Where{}, cond, a, b);
  }
  // y = cond ? a : b: dy = where(cond, da, db); ga = where(cond, gy, 0), gb = where(cond, 0, gy).
  // The condition has no derivative. Selecting never multiplies, so an inf/NaN in the branch not
  // taken never leaks into the derivative.
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x1())>::value_type;
    auto zero = Tensor<T>::zeros({}, c.x1().device());
    auto r = where(c.x0(), c.dx1().defined() ? c.dx1() : zero, c.dx2().defined() ? c.dx2() : zero);
    return broadcast_to(r, c.dy0_shape());
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x1())>::value_type;
    auto zero = Tensor<T>::zeros({}, c.x1().device());
    Tensor<T> ga, gb;
    if (c.needs(1)) ga = sum_to(where(c.x0(), c.gy0(), zero), c.x1().shape());
    if (c.needs(2)) gb = sum_to(where(c.x0(), zero, c.gy0()), c.x2().shape());
    return std::tuple{Tensor<bool>(), ga, gb};
  }
};

}  // namespace ops

template <Scalar T>
Tensor<T> where(const Tensor<bool>& cond, const Tensor<T>& a, const Tensor<T>& b) {
  if constexpr (dtype_traits<T>::is_floating)
    return detail::apply(ops::Where{}, cond, a, b);
  else
    return detail::apply_nondiff(ops::Where{}, cond, a, b);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_WHERE(T) \
  TENAX_INSTANCE Tensor<T> where(const Tensor<bool>&, const Tensor<T>&, const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_SCALAR, TENAX_INSTANCES_WHERE)

}  // namespace tenax
