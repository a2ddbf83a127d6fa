#pragma once
// clamp(x, lo, hi) = min(max(x, lo), hi), with scalar bounds or tensor bounds (broadcasting), and
// the one-sided clamp_min(x, lo) and clamp_max(x, hi) (real).
//
// Gradients follow PyTorch: x gets the gradient where lo <= x <= hi (the bounds included), a tensor
// bound where it is the value taken (lo where x < lo, hi where x > hi). Unlike maximum and minimum,
// which split the gradient evenly at ties, a tie x == lo or x == hi gives it all to x. Where
// lo > hi the result is hi (as PyTorch) and hi gets the gradient; where x, lo or hi is NaN the
// result is NaN (x's first, then lo's, then hi's) and no input gets a gradient.
#include <array>
#include <limits>
#include <tuple>
#include <type_traits>

#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

namespace clamp_detail {
inline Tensor<bool> both(const Tensor<bool>& a, const Tensor<bool>& b) {
  return where(a, b, Tensor<bool>::scalar(false, a.device()));
}
inline Tensor<bool> either(const Tensor<bool>& a, const Tensor<bool>& b) {
  return where(a, Tensor<bool>::scalar(true, a.device()), b);
}
// v where the mask holds, 0 elsewhere (not v * mask: an infinite v would give NaN).
template <class T>
Tensor<T> masked(const Tensor<bool>& m, const Tensor<T>& v) {
  return where(m, v, Tensor<T>::scalar(T(0), v.device()));
}
}  // namespace clamp_detail

// Scalar bounds: dy = [lo <= x <= hi] dx; gx = [lo <= x <= hi] gy.
template <class T>
struct ClampScalar {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "clamp";
  static constexpr bool saves_outputs = false;
  T lo, hi;
  Tensor<T> forward(const Tensor<T>& x) const {
    return detail::map<T>(name, fn::ClampScalar{static_cast<double>(lo), static_cast<double>(hi)}, x);
  }
  template <class C>
  auto jvp(const C& c) const {
    return clamp_detail::masked(inside(c.x0()), c.dx0());
  }
  template <class C>
  auto vjp(const C& c) const {
    return clamp_detail::masked(inside(c.x0()), c.gy0());
  }

 private:
  Tensor<bool> inside(const Tensor<T>& x) const {
    return clamp_detail::both(ge(x, Tensor<T>::scalar(lo, x.device())), le(x, Tensor<T>::scalar(hi, x.device())));
  }
};

// Tensor bounds: with the masks sx = [lo <= x <= hi], slo = [x < lo <= hi], shi = [hi < x or
// hi < lo] (none where x or lo is NaN): dy = sx dx + slo dlo + shi dhi, and each input's cotangent
// is its mask times gy, summed over its broadcast dimensions.
struct Clamp {
  static constexpr bool elementwise = true;  // forward is one detail::map (see kernels/donation.hpp)
  static constexpr const char* name = "clamp";
  static constexpr bool saves_outputs = false;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x, const Tensor<T>& lo, const Tensor<T>& hi) const {
    return detail::map<T>(name, fn::Clamp{}, x, lo, hi);
  }
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const auto m = masks(c.x0(), c.x1(), c.x2());
    Tensor<T> r;
    if (c.dx0().defined()) r = clamp_detail::masked(m[0], c.dx0());
    if (c.dx1().defined()) r = detail::accumulate(r, clamp_detail::masked(m[1], c.dx1()));
    if (c.dx2().defined()) r = detail::accumulate(r, clamp_detail::masked(m[2], c.dx2()));
    return broadcast_to(r, c.dy0_shape());
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const auto m = masks(c.x0(), c.x1(), c.x2());
    Tensor<T> g[3];
    const Shape* shapes[3] = {&c.x0().shape(), &c.x1().shape(), &c.x2().shape()};
    for (int i = 0; i < 3; ++i)
      if (c.needs(i)) g[i] = sum_to(clamp_detail::masked(m[i], c.gy0()), *shapes[i]);
    return std::tuple{g[0], g[1], g[2]};
  }

 private:
  template <class T>
  static std::array<Tensor<bool>, 3> masks(const Tensor<T>& x, const Tensor<T>& lo, const Tensor<T>& hi) {
    using clamp_detail::both, clamp_detail::either;
    const auto lo_above_hi = lt(hi, lo);
    return {both(le(lo, x), le(x, hi)), both(lt(x, lo), le(lo, hi)),
            both(either(lt(hi, x), lo_above_hi), both(eq(x, x), eq(lo, lo)))};
  }
};

}  // namespace ops

template <RealFloating T>
Tensor<T> clamp(const Tensor<T>& x, std::type_identity_t<T> lo, std::type_identity_t<T> hi) {
  return detail::apply(ops::ClampScalar<T>{lo, hi}, x);
}

template <RealFloating T>
Tensor<T> clamp(const Tensor<T>& x, const Tensor<T>& lo, const Tensor<T>& hi) {
  return detail::apply(ops::Clamp{}, x, lo, hi);
}

// max(x, lo), with clamp's gradient (all of it to x at x == lo).
template <RealFloating T>
Tensor<T> clamp_min(const Tensor<T>& x, std::type_identity_t<T> lo) {
  return clamp(x, lo, std::numeric_limits<T>::infinity());
}
template <RealFloating T>
Tensor<T> clamp_min(const Tensor<T>& x, const Tensor<T>& lo) {
  detail::check_defined("clamp_min", x, lo);
  return clamp(x, lo, Tensor<T>::scalar(std::numeric_limits<T>::infinity(), x.device()));
}

// min(x, hi), with clamp's gradient (all of it to x at x == hi).
template <RealFloating T>
Tensor<T> clamp_max(const Tensor<T>& x, std::type_identity_t<T> hi) {
  return clamp(x, -std::numeric_limits<T>::infinity(), hi);
}
template <RealFloating T>
Tensor<T> clamp_max(const Tensor<T>& x, const Tensor<T>& hi) {
  detail::check_defined("clamp_max", x, hi);
  return clamp(x, Tensor<T>::scalar(-std::numeric_limits<T>::infinity(), x.device()), hi);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_CLAMP(T)                                                        \
  TENAX_INSTANCE Tensor<T> clamp(const Tensor<T>&, T, T);                               \
  TENAX_INSTANCE Tensor<T> clamp(const Tensor<T>&, const Tensor<T>&, const Tensor<T>&); \
  TENAX_INSTANCE Tensor<T> clamp_min(const Tensor<T>&, T);                              \
  TENAX_INSTANCE Tensor<T> clamp_min(const Tensor<T>&, const Tensor<T>&);               \
  TENAX_INSTANCE Tensor<T> clamp_max(const Tensor<T>&, T);                              \
  TENAX_INSTANCE Tensor<T> clamp_max(const Tensor<T>&, const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_REAL, TENAX_INSTANCES_CLAMP)

}  // namespace tenax
