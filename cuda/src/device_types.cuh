#pragma once
// Host element types as device code sees them: std::complex<T> becomes cuda::std::complex<T> (same
// layout, device arithmetic and math), everything else stays. Functors carrying a scalar (AddScalar,
// PowScalar, Convert, ...) are re-instantiated with the device type.
#include <cuda/std/complex>

#include <complex>
#include <type_traits>

#include "tenax/core/dtype.hpp"

namespace tenax {

// The device complex types are complex dtypes for the functors' traits (real_t, is_complex_v).
template <class R>
struct dtype_traits<cuda::std::complex<R>> {
  static constexpr DType value = std::is_same_v<R, float> ? DType::C64 : DType::C128;
  static constexpr const char* name = std::is_same_v<R, float> ? "c64" : "c128";
  static constexpr bool is_complex = true;
  static constexpr bool is_floating = true;
  using real = R;
};

namespace detail::cuda {

template <class T>
struct device_type {
  using type = T;
};
template <class R>
struct device_type<std::complex<R>> {
  using type = ::cuda::std::complex<R>;
};
template <class T>
using dev_t = typename device_type<T>::type;

static_assert(sizeof(::cuda::std::complex<double>) == sizeof(std::complex<double>));
static_assert(alignof(::cuda::std::complex<float>) >= alignof(std::complex<float>));

template <class T>
__host__ __device__ inline dev_t<T> to_device_value(const T& v) {
  if constexpr (is_complex_v<T>)
    return dev_t<T>(v.real(), v.imag());
  else
    return v;
}

// A value computed on the device, stored as Out (a functor may build a std::complex, e.g. MakeComplex).
template <class Out, class V>
__device__ inline Out store_value(const V& v) {
  if constexpr (std::is_same_v<V, Out>)
    return v;
  else if constexpr (is_complex_v<Out> && is_complex_v<V>)
    return Out(v.real(), v.imag());
  else
    return static_cast<Out>(v);
}

// The device instance of a functor.
template <class F>
struct device_functor {
  using type = F;
  static type convert(const F& f) { return f; }
};
template <template <class> class F, class S>
struct device_functor<F<S>> {
  using type = F<dev_t<S>>;
  static type convert(const F<S>& f) {
    if constexpr (std::is_empty_v<F<S>>) {
      return type{};
    } else {
      const auto& [member] = f;
      return type{to_device_value(member)};
    }
  }
};

}  // namespace detail::cuda
}  // namespace tenax
