#pragma once
// eq, ne, lt, le, gt, ge: elementwise comparisons with broadcasting. They have no derivative: they
// never record on the tape (apply_nondiff), but a trace records them like any op.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

template <class Fn>
struct Compare {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  const char* name_;
  static constexpr const char* name = "compare";
  template <class T>
  Tensor<bool> forward(const Tensor<T>& a, const Tensor<T>& b) const {
    return detail::map<bool>(name_, Fn{}, a, b);
  }
};

}  // namespace ops

template <Scalar T>
Tensor<bool> eq(const Tensor<T>& a, const Tensor<T>& b) {
  detail::check_defined("eq", a, b);
  return detail::apply_nondiff(ops::Compare<fn::Eq>{"eq"}, a, b);
}

template <Scalar T>
Tensor<bool> ne(const Tensor<T>& a, const Tensor<T>& b) {
  detail::check_defined("ne", a, b);
  return detail::apply_nondiff(ops::Compare<fn::Ne>{"ne"}, a, b);
}

template <Scalar T>
Tensor<bool> lt(const Tensor<T>& a, const Tensor<T>& b) {
  detail::check_defined("lt", a, b);
  return detail::apply_nondiff(ops::Compare<fn::Lt>{"lt"}, a, b);
}

template <Scalar T>
Tensor<bool> le(const Tensor<T>& a, const Tensor<T>& b) {
  detail::check_defined("le", a, b);
  return detail::apply_nondiff(ops::Compare<fn::Le>{"le"}, a, b);
}

template <Scalar T>
Tensor<bool> gt(const Tensor<T>& a, const Tensor<T>& b) {
  detail::check_defined("gt", a, b);
  return detail::apply_nondiff(ops::Compare<fn::Gt>{"gt"}, a, b);
}

template <Scalar T>
Tensor<bool> ge(const Tensor<T>& a, const Tensor<T>& b) {
  detail::check_defined("ge", a, b);
  return detail::apply_nondiff(ops::Compare<fn::Ge>{"ge"}, a, b);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_EQUALITY(T)                                   \
  TENAX_INSTANCE Tensor<bool> eq(const Tensor<T>&, const Tensor<T>&); \
  TENAX_INSTANCE Tensor<bool> ne(const Tensor<T>&, const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_SCALAR, TENAX_INSTANCES_EQUALITY)
#define TENAX_INSTANCES_ORDER(T)                                      \
  TENAX_INSTANCE Tensor<bool> lt(const Tensor<T>&, const Tensor<T>&); \
  TENAX_INSTANCE Tensor<bool> le(const Tensor<T>&, const Tensor<T>&); \
  TENAX_INSTANCE Tensor<bool> gt(const Tensor<T>&, const Tensor<T>&); \
  TENAX_INSTANCE Tensor<bool> ge(const Tensor<T>&, const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_ORDERED, TENAX_INSTANCES_ORDER)

}  // namespace tenax
