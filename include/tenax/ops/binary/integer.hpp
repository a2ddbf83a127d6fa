#pragma once
// Arithmetic on int32 and int64 tensors (no derivatives): add, sub, mul, maximum, minimum and
// floor_divide with broadcasting, neg and abs; remainder and fmod are in their own headers. Sums,
// differences, products and negations wrap around modulo 2^bits (abs(min) and neg(min) are min),
// as PyTorch and NumPy. Division by zero cannot raise inside an elementwise kernel: floor_divide,
// remainder and fmod give 0 for a zero divisor (as NumPy; PyTorch raises on the CPU), and never
// trap (fn::FloorDivide). Comparisons on integers are in compare.hpp.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

// One integer functor Fn over its operands (no rules: applied with apply_nondiff).
template <class Fn>
struct IntegerMap {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "integer";
  const char* name_;
  template <class T, class... U>
  Tensor<T> forward(const Tensor<T>& a, const Tensor<U>&... b) const {
    return detail::map<T>(name_, Fn{}, a, b...);
  }
};

template <class Fn, class... T>
auto integer_map(const char* name, const T&... x) {
  detail::check_defined(name, x...);
  return detail::apply_nondiff(IntegerMap<Fn>{name}, x...);
}

}  // namespace ops

template <Integer T>
Tensor<T> add(const Tensor<T>& a, const Tensor<T>& b) {
  return ops::integer_map<fn::Add>("add", a, b);
}
template <Integer T>
Tensor<T> sub(const Tensor<T>& a, const Tensor<T>& b) {
  return ops::integer_map<fn::Sub>("sub", a, b);
}
template <Integer T>
Tensor<T> mul(const Tensor<T>& a, const Tensor<T>& b) {
  return ops::integer_map<fn::Mul>("mul", a, b);
}
template <Integer T>
Tensor<T> maximum(const Tensor<T>& a, const Tensor<T>& b) {
  return ops::integer_map<fn::Maximum>("maximum", a, b);
}
template <Integer T>
Tensor<T> minimum(const Tensor<T>& a, const Tensor<T>& b) {
  return ops::integer_map<fn::Minimum>("minimum", a, b);
}
// The largest integer not above a / b (Python's //); b == 0 gives 0.
template <Integer T>
Tensor<T> floor_divide(const Tensor<T>& a, const Tensor<T>& b) {
  return ops::integer_map<fn::FloorDivide>("floor_divide", a, b);
}
template <Integer T>
Tensor<T> neg(const Tensor<T>& x) {
  return ops::integer_map<fn::Neg>("neg", x);
}
template <Integer T>
Tensor<T> abs(const Tensor<T>& x) {
  return ops::integer_map<fn::Abs>("abs", x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_INTEGER(T)                                           \
  TENAX_INSTANCE Tensor<T> add(const Tensor<T>&, const Tensor<T>&);          \
  TENAX_INSTANCE Tensor<T> sub(const Tensor<T>&, const Tensor<T>&);          \
  TENAX_INSTANCE Tensor<T> mul(const Tensor<T>&, const Tensor<T>&);          \
  TENAX_INSTANCE Tensor<T> maximum(const Tensor<T>&, const Tensor<T>&);      \
  TENAX_INSTANCE Tensor<T> minimum(const Tensor<T>&, const Tensor<T>&);      \
  TENAX_INSTANCE Tensor<T> floor_divide(const Tensor<T>&, const Tensor<T>&); \
  TENAX_INSTANCE Tensor<T> neg(const Tensor<T>&);                            \
  TENAX_INSTANCE Tensor<T> abs(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_INTEGER, TENAX_INSTANCES_INTEGER)

}  // namespace tenax
