#pragma once
// fmod(a, b): C's fmod, a - trunc(a / b) b, with the sign of a; b == 0 gives NaN (integers:
// 0, see fn::FloorDivide). Real (with derivatives) and int32/int64.
#include <type_traits>
#include <utility>

#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/binary/slopes.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Fmod {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "fmod";
  static constexpr bool saves_outputs = false;
  template <class T>
  Tensor<T> forward(const Tensor<T>& a, const Tensor<T>& b) const {
    return detail::map<T>(name, fn::Fmod{}, a, b);
  }
  // y = a - trunc(a / b) b: dy = da - trunc(a / b) db (trunc's derivative is 0); ga = sum_to(gy),
  // gb = sum_to(-trunc(a / b) gy).
  template <class C>
  auto jvp(const C& c) const {
    return detail::tangent_by_slopes(c, std::remove_cvref_t<decltype(c.x0())>{}, slope(c.x0(), c.x1()));
  }
  template <class C>
  auto vjp(const C& c) const {
    return detail::cotangents_by_slopes(c, std::remove_cvref_t<decltype(c.x0())>{}, slope(c.x0(), c.x1()));
  }

 private:
  template <class T>
  static Tensor<T> slope(const Tensor<T>& a, const Tensor<T>& b) {
    return neg(trunc(div(a, b)));
  }
};

// a fmod s: dy = da; ga = gy.
template <class T>
struct FmodScalar {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "fmod";
  static constexpr bool saves_outputs = false;
  T s;
  Tensor<T> forward(const Tensor<T>& a) const { return detail::map<T>(name, fn::FmodScalar<T>{s}, a); }
  template <class C>
  auto jvp(const C& c) const {
    return c.dx0();
  }
  template <class C>
  auto vjp(const C& c) const {
    return c.gy0();
  }
};

}  // namespace ops

template <RealNumber T>
Tensor<T> fmod(const Tensor<T>& a, const Tensor<T>& b) {
  if constexpr (Integer<T>)
    return detail::apply_nondiff(ops::Fmod{}, a, b);
  else
    return detail::apply(ops::Fmod{}, a, b);
}

template <RealNumber T>
Tensor<T> fmod(const Tensor<T>& a, std::type_identity_t<T> s) {
  if constexpr (Integer<T>)
    return detail::apply_nondiff(ops::FmodScalar<T>{s}, a);
  else
    return detail::apply(ops::FmodScalar<T>{s}, a);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_FMOD(T)                                      \
  TENAX_INSTANCE Tensor<T> fmod(const Tensor<T>&, const Tensor<T>&); \
  TENAX_INSTANCE Tensor<T> fmod(const Tensor<T>&, T);
TENAX_DECLARE_INSTANCES(TENAX_FOR_REAL_NUMBER, TENAX_INSTANCES_FMOD)

}  // namespace tenax
