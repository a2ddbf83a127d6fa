#pragma once
// Scalar types tenax tensors hold, and their traits.
#include <complex>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace tenax {

using c64 = std::complex<float>;
using c128 = std::complex<double>;

enum class DType : std::uint8_t { Bool, I32, I64, F32, F64, C64, C128 };

template <class T>
struct dtype_traits;

#define TENAX_DTYPE_TRAIT(T, D, NAME, CPLX, FLT, REAL) \
  template <>                                          \
  struct dtype_traits<T> {                             \
    static constexpr DType value = DType::D;           \
    static constexpr const char* name = NAME;          \
    static constexpr bool is_complex = CPLX;           \
    static constexpr bool is_floating = FLT;           \
    using real = REAL;                                 \
  };
TENAX_DTYPE_TRAIT(bool, Bool, "bool", false, false, bool)
TENAX_DTYPE_TRAIT(std::int32_t, I32, "i32", false, false, std::int32_t)
TENAX_DTYPE_TRAIT(std::int64_t, I64, "i64", false, false, std::int64_t)
TENAX_DTYPE_TRAIT(float, F32, "f32", false, true, float)
TENAX_DTYPE_TRAIT(double, F64, "f64", false, true, double)
TENAX_DTYPE_TRAIT(c64, C64, "c64", true, true, float)
TENAX_DTYPE_TRAIT(c128, C128, "c128", true, true, double)
#undef TENAX_DTYPE_TRAIT

template <class T>
concept Scalar = requires {
  dtype_traits<T>::value;
};
template <class T>
concept Floating = Scalar<T> && dtype_traits<T>::is_floating;
template <class T>
concept ComplexScalar = Floating<T> && dtype_traits<T>::is_complex;
template <class T>
concept RealFloating = Floating<T> && !dtype_traits<T>::is_complex;
// int32 and int64: arithmetic without derivatives.
template <class T>
concept Integer = std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t>;
// The real dtypes with arithmetic: integers and real floating point.
template <class T>
concept RealNumber = Integer<T> || RealFloating<T>;

template <class T>
using real_t = typename dtype_traits<T>::real;
template <class T>
inline constexpr DType dtype_of = dtype_traits<T>::value;
template <class T>
inline constexpr bool is_complex_v = dtype_traits<T>::is_complex;

inline const char* dtype_name(DType d) {
  switch (d) {
    case DType::Bool:
      return "bool";
    case DType::I32:
      return "i32";
    case DType::I64:
      return "i64";
    case DType::F32:
      return "f32";
    case DType::F64:
      return "f64";
    case DType::C64:
      return "c64";
    case DType::C128:
      return "c128";
  }
  return "?";
}

inline std::size_t dtype_size(DType d) {
  switch (d) {
    case DType::Bool:
      return 1;
    case DType::I32:
      return 4;
    case DType::I64:
      return 8;
    case DType::F32:
      return 4;
    case DType::F64:
      return 8;
    case DType::C64:
      return 8;
    case DType::C128:
      return 16;
  }
  return 0;
}

// Calls f(T{}) with T the C++ type of a floating dtype (the types gradients can have).
template <class F>
decltype(auto) dispatch_floating(DType d, F&& f) {
  switch (d) {
    case DType::F32:
      return f(float{});
    case DType::F64:
      return f(double{});
    case DType::C64:
      return f(c64{});
    default:
      return f(c128{});
  }
}

}  // namespace tenax
