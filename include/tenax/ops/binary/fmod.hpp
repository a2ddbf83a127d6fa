#pragma once
// fmod(a, b): a - trunc(a / b) b, with the sign of a (C's fmod); b == 0 gives NaN (integers: 0,
// see fn::FloorDivide). Real (with derivatives) and int32/int64, with broadcasting, or a scalar b.
#include <type_traits>

#include "tenax/core/instances.hpp"
#include "tenax/ops/binary/modulo.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Fmod : Modulo<Fmod, fn::Fmod> {
  static constexpr const char* name = "fmod";
  template <class T>
  static Tensor<T> round(const Tensor<T>& q) {
    return trunc(q);
  }
};

}  // namespace ops

template <RealNumber T>
Tensor<T> fmod(const Tensor<T>& a, const Tensor<T>& b) {
  return ops::apply_modulo(ops::Fmod{}, a, b);
}

template <RealNumber T>
Tensor<T> fmod(const Tensor<T>& a, std::type_identity_t<T> s) {
  return ops::apply_modulo(ops::ModuloScalar<ops::Fmod, fn::FmodScalar<T>>{{s}}, a);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_FMOD(T)                                      \
  TENAX_INSTANCE Tensor<T> fmod(const Tensor<T>&, const Tensor<T>&); \
  TENAX_INSTANCE Tensor<T> fmod(const Tensor<T>&, T);
TENAX_DECLARE_INSTANCES(TENAX_FOR_REAL_NUMBER, TENAX_INSTANCES_FMOD)

}  // namespace tenax
