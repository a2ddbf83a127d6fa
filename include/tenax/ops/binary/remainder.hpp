#pragma once
// remainder(a, b): a - floor(a / b) b, with the sign of b (Python's %, as PyTorch and NumPy); b == 0
// gives NaN (integers: 0, see fn::FloorDivide). Real (with derivatives) and int32/int64, with
// broadcasting, or a scalar b.
#include <type_traits>

#include "tenax/core/instances.hpp"
#include "tenax/ops/binary/modulo.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Remainder : Modulo<Remainder, fn::Remainder> {
  static constexpr const char* name = "remainder";
  template <class T>
  static Tensor<T> round(const Tensor<T>& q) {
    return floor(q);
  }
};

}  // namespace ops

template <RealNumber T>
Tensor<T> remainder(const Tensor<T>& a, const Tensor<T>& b) {
  return ops::apply_modulo(ops::Remainder{}, a, b);
}

template <RealNumber T>
Tensor<T> remainder(const Tensor<T>& a, std::type_identity_t<T> s) {
  return ops::apply_modulo(ops::ModuloScalar<ops::Remainder, fn::RemainderScalar<T>>{{s}}, a);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_REMAINDER(T)                                      \
  TENAX_INSTANCE Tensor<T> remainder(const Tensor<T>&, const Tensor<T>&); \
  TENAX_INSTANCE Tensor<T> remainder(const Tensor<T>&, T);
TENAX_DECLARE_INSTANCES(TENAX_FOR_REAL_NUMBER, TENAX_INSTANCES_REMAINDER)

}  // namespace tenax
