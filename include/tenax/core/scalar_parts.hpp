#pragma once
// Component-wise helpers for real and complex scalars, exact where the arithmetic is.
#include <algorithm>
#include <cmath>

#include "tenax/core/dtype.hpp"

namespace tenax {

// max(|Re x|, |Im x|) (|x| for real x).
template <class T>
real_t<T> max_component(const T& x) {
  if constexpr (is_complex_v<T>)
    return std::max(std::abs(x.real()), std::abs(x.imag()));
  else
    return std::abs(x);
}

// x 2^e per component: exact unless it overflows or underflows, with no intermediate 2^e that
// could overflow on its own.
template <class T>
T ldexp_each(const T& x, int e) {
  if constexpr (is_complex_v<T>)
    return T(std::ldexp(x.real(), e), std::ldexp(x.imag(), e));
  else
    return std::ldexp(x, e);
}

}  // namespace tenax
