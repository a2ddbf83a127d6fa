#pragma once
// Elementwise functors shared by every backend: plain structs with a templated call operator, so
// a device backend instantiates the very same definitions (the CUDA backend compiles them with
// cuda::std::complex standing in for std::complex, see cuda/src/device_types.cuh).
//
// Math goes through fn::math, whose wrappers call the function unqualified after a using-declaration
// of the std:: overloads: on the host that is exactly std::exp etc., and for a device complex type
// argument-dependent lookup finds the device library's overloads instead.
#include <cmath>
#include <complex>
#include <type_traits>

#include "tenax/core/dtype.hpp"

#if defined(__CUDACC__)
#define TENAX_HD __host__ __device__
#else
#define TENAX_HD
#endif

// The functors name the kernel slots of every device (kernels/map.hpp, kernels/reduce.hpp): a
// slot's template static data takes the visibility of its template arguments, so these types keep
// default visibility in programs compiled with -fvisibility=hidden, which then share the library's
// slots (and see the device entries the library's backends register).
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility push(default)
#endif
namespace tenax::fn {
namespace math {

#define TENAX_MATH_WRAP(F)         \
  template <class T>               \
  TENAX_HD inline auto F##_(T x) { \
    using std::F;                  \
    return F(x);                   \
  }
TENAX_MATH_WRAP(exp)
TENAX_MATH_WRAP(log)
TENAX_MATH_WRAP(log1p)
TENAX_MATH_WRAP(expm1)
TENAX_MATH_WRAP(sqrt)
TENAX_MATH_WRAP(sin)
TENAX_MATH_WRAP(cos)
TENAX_MATH_WRAP(tanh)
TENAX_MATH_WRAP(abs)
TENAX_MATH_WRAP(real)
TENAX_MATH_WRAP(imag)
TENAX_MATH_WRAP(tan)
TENAX_MATH_WRAP(asin)
TENAX_MATH_WRAP(acos)
TENAX_MATH_WRAP(atan)
TENAX_MATH_WRAP(sinh)
TENAX_MATH_WRAP(cosh)
TENAX_MATH_WRAP(asinh)
TENAX_MATH_WRAP(acosh)
TENAX_MATH_WRAP(atanh)
TENAX_MATH_WRAP(log2)
TENAX_MATH_WRAP(log10)
TENAX_MATH_WRAP(erf)
TENAX_MATH_WRAP(erfc)
TENAX_MATH_WRAP(floor)
TENAX_MATH_WRAP(ceil)
TENAX_MATH_WRAP(trunc)
TENAX_MATH_WRAP(rint)  // to nearest, ties to even (the default rounding mode)
#undef TENAX_MATH_WRAP
#define TENAX_MATH_WRAP2(F)             \
  template <class T>                    \
  TENAX_HD inline auto F##_(T x, T y) { \
    using std::F;                       \
    return F(x, y);                     \
  }
TENAX_MATH_WRAP2(atan2)
TENAX_MATH_WRAP2(hypot)
TENAX_MATH_WRAP2(fmod)
TENAX_MATH_WRAP2(copysign)
#undef TENAX_MATH_WRAP2

template <class T>
TENAX_HD inline T conj_(T x) {
  if constexpr (is_complex_v<T>) {
    using std::conj;
    return conj(x);
  } else {
    return x;
  }
}
// x^0 = 1 for every x, as for real types (std::pow of a complex 0 or inf to the power 0 gives
// NaN: it computes exp(0 log x)).
template <class T, class E>
TENAX_HD inline T pow_(T x, E e) {
  using std::pow;
  if (e == E(0)) return T(1);
  return pow(x, e);
}

}  // namespace math

template <class T>
TENAX_HD inline T conj_of(T x) {
  return math::conj_(x);
}

// int32 and int64, the integer dtypes with arithmetic.
template <class T>
inline constexpr bool is_int_v = std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t>;

// Integer a + b, a - b, a * b and -a wrap around modulo 2^bits (two's complement), as in PyTorch
// and NumPy, where the signed operation would be undefined behaviour.
template <class T>
TENAX_HD inline T wrap_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <class T>
TENAX_HD inline T wrap_sub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <class T>
TENAX_HD inline T wrap_mul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}

struct Neg {
  template <class T>
  TENAX_HD T operator()(T x) const {
    if constexpr (is_int_v<T>)
      return wrap_sub(T(0), x);
    else
      return -x;
  }
};
struct Conj {
  template <class T>
  TENAX_HD T operator()(T x) const {
    return conj_of(x);
  }
};
struct Abs {
  template <class T>
  TENAX_HD real_t<T> operator()(T x) const {
    if constexpr (is_int_v<T>)
      return x < 0 ? wrap_sub(T(0), x) : x;  // |min| wraps to min, as in PyTorch
    else
      return math::abs_(x);
  }
};
struct Sign {
  template <class T>
  TENAX_HD T operator()(T x) const {
    if constexpr (is_complex_v<T>) {
      // x / |x|, with x first scaled by a power of two (exactly) where |x| is subnormal (it has
      // few significant bits: 1e-320 (1 + i) gave 0.70720 + 0.70720i) or overflows with finite
      // parts ((1.5e308, 1.5e308) gave 0).
      using R = real_t<T>;
      constexpr bool dbl = sizeof(R) == 8;
      constexpr R smallest_normal = dbl ? R(2.2250738585072014e-308) : R(1.17549435e-38f);
      constexpr R up = dbl ? R(9007199254740992.0) : R(16777216.0f);  // 2^53, 2^24
      auto r = math::abs_(x);
      if (r == 0) return T(0);
      if (r < smallest_normal) {
        x = x * up;
        r = math::abs_(x);
      } else if (r - r != 0 && math::real_(x) - math::real_(x) == 0 && math::imag_(x) - math::imag_(x) == 0) {
        x = x * R(0.25);  // |x| = inf with finite parts: |x / 4| is finite
        r = math::abs_(x);
      }
      return x / r;
    } else {
      return x != x ? x : static_cast<T>((x > 0) - (x < 0));  // NaN stays NaN (as for complex x)
    }
  }
};
struct Exp {
  template <class T>
  TENAX_HD T operator()(T x) const {
    return math::exp_(x);
  }
};
struct Log {
  template <class T>
  TENAX_HD T operator()(T x) const {
    return math::log_(x);
  }
};
struct Log1p {
  template <class T>
  TENAX_HD T operator()(T x) const {
    return math::log1p_(x);
  }
};
struct Expm1 {
  template <class T>
  TENAX_HD T operator()(T x) const {
    return math::expm1_(x);
  }
};
struct Sqrt {
  template <class T>
  TENAX_HD T operator()(T x) const {
    return math::sqrt_(x);
  }
};
struct Rsqrt {
  template <class T>
  TENAX_HD T operator()(T x) const {
    return T(1) / math::sqrt_(x);
  }
};
struct Square {
  template <class T>
  TENAX_HD T operator()(T x) const {
    return x * x;
  }
};
struct Sin {
  template <class T>
  TENAX_HD T operator()(T x) const {
    return math::sin_(x);
  }
};
struct Cos {
  template <class T>
  TENAX_HD T operator()(T x) const {
    return math::cos_(x);
  }
};
struct Tanh {
  template <class T>
  TENAX_HD T operator()(T x) const {
    return math::tanh_(x);
  }
};
struct Sigmoid {
  template <class T>
  TENAX_HD T operator()(T x) const {
    return T(1) / (T(1) + math::exp_(-x));
  }
};
struct Relu {
  template <class T>
  TENAX_HD T operator()(T x) const {
    return x > T(0) || x != x ? x : T(0);  // NaN propagates (PyTorch and JAX agree)
  }
};
// relu's derivative applied to v: v where x > 0, else 0 (also at x = 0 and where x is NaN).
struct ReluMask {
  template <class T>
  TENAX_HD T operator()(T x, T v) const {
    return x > T(0) ? v : T(0);
  }
};
// The unary functors that are one math function.
#define TENAX_MATH_FUNCTOR(N, F)       \
  struct N {                           \
    template <class T>                 \
    TENAX_HD T operator()(T x) const { \
      return math::F##_(x);            \
    }                                  \
  };
TENAX_MATH_FUNCTOR(Tan, tan)
TENAX_MATH_FUNCTOR(Asin, asin)
TENAX_MATH_FUNCTOR(Acos, acos)
TENAX_MATH_FUNCTOR(Atan, atan)
TENAX_MATH_FUNCTOR(Sinh, sinh)
TENAX_MATH_FUNCTOR(Cosh, cosh)
TENAX_MATH_FUNCTOR(Asinh, asinh)
TENAX_MATH_FUNCTOR(Acosh, acosh)
TENAX_MATH_FUNCTOR(Atanh, atanh)
TENAX_MATH_FUNCTOR(Log2, log2)
TENAX_MATH_FUNCTOR(Log10, log10)
TENAX_MATH_FUNCTOR(Erf, erf)
TENAX_MATH_FUNCTOR(Erfc, erfc)
TENAX_MATH_FUNCTOR(Floor, floor)
TENAX_MATH_FUNCTOR(Ceil, ceil)
TENAX_MATH_FUNCTOR(Round, rint)  // half to even, as NumPy and PyTorch
TENAX_MATH_FUNCTOR(Trunc, trunc)
#undef TENAX_MATH_FUNCTOR
// log(1 + e^x) = max(x, 0) + log1p(e^-|x|): no overflow for large x, no loss for very negative x.
struct Softplus {
  template <class T>
  TENAX_HD T operator()(T x) const {
    const T ax = x < T(0) ? -x : x;
    return (x > T(0) ? x : T(0)) + math::log1p_(math::exp_(-ax));
  }
};
struct Real {
  template <class T>
  TENAX_HD real_t<T> operator()(T x) const {
    return math::real_(x);
  }
};
struct Imag {
  template <class T>
  TENAX_HD real_t<T> operator()(T x) const {
    return math::imag_(x);
  }
};
struct MakeComplex {
  template <class T>
  TENAX_HD std::complex<T> operator()(T a, T b) const {
    return {a, b};
  }
};
template <class S>
struct PowScalar {
  S p;
  template <class T>
  TENAX_HD T operator()(T x) const {
    return math::pow_(x, p);
  }
};
struct Pow {
  template <class T>
  TENAX_HD T operator()(T x, T e) const {
    return math::pow_(x, e);
  }
};

struct Add {
  template <class T>
  TENAX_HD T operator()(T a, T b) const {
    if constexpr (is_int_v<T>)
      return wrap_add(a, b);
    else
      return a + b;
  }
};
struct Sub {
  template <class T>
  TENAX_HD T operator()(T a, T b) const {
    if constexpr (is_int_v<T>)
      return wrap_sub(a, b);
    else
      return a - b;
  }
};
struct Mul {
  template <class T>
  TENAX_HD T operator()(T a, T b) const {
    if constexpr (is_int_v<T>)
      return wrap_mul(a, b);
    else
      return a * b;
  }
};
struct Div {
  template <class T>
  TENAX_HD T operator()(T a, T b) const {
    return a / b;
  }
};
struct Maximum {
  template <class T>
  TENAX_HD T operator()(T a, T b) const {
    return (a != a || a > b) ? a : b;
  }
};
struct Minimum {
  template <class T>
  TENAX_HD T operator()(T a, T b) const {
    return (a != a || a < b) ? a : b;
  }
};
struct Atan2 {
  template <class T>
  TENAX_HD T operator()(T y, T x) const {
    return math::atan2_(y, x);
  }
};
struct Hypot {
  template <class T>
  TENAX_HD T operator()(T a, T b) const {
    return math::hypot_(a, b);
  }
};
// log(e^a + e^b) = max(a, b) + log1p(e^-|a - b|); equal arguments (both infinities of one sign
// included, where a - b is NaN) give a + log 2. A NaN propagates.
struct LogAddExp {
  template <class T>
  TENAX_HD T operator()(T a, T b) const {
    if (a == b) return a + T(0.69314718055994530942);
    const T m = a > b ? a : b;
    const T d = a > b ? b - a : a - b;
    return m + math::log1p_(math::exp_(d));
  }
};
// Integer a / b and a % b are undefined for b == 0 and, for b == -1, where a / b overflows (the
// hardware traps on both: SIGFPE). These give defined values instead: a / 0 and a % 0 are 0, as
// NumPy; a / -1 wraps (-min is min) and a % -1 is 0.
struct FloorDivide {
  template <class T>
  TENAX_HD T operator()(T a, T b) const {
    static_assert(is_int_v<T>);
    if (b == 0) return T(0);
    if (b == -1) return wrap_sub(T(0), a);
    const T q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? T(q - 1) : q;  // toward -inf
  }
};
// C's fmod: the result has the sign of a (for integers: a % b, with b == 0 giving 0).
struct Fmod {
  template <class T>
  TENAX_HD T operator()(T a, T b) const {
    if constexpr (is_int_v<T>)
      return (b == 0 || b == -1) ? T(0) : T(a % b);
    else
      return math::fmod_(a, b);
  }
};
// Python's a % b: a - floor(a / b) b, with the sign of b (a zero result too: 4 % -2 is -0.0, as
// NumPy); b == 0 gives NaN (integers: 0). Computed from the exact fmod: no rounding of a / b.
struct Remainder {
  template <class T>
  TENAX_HD T operator()(T a, T b) const {
    const T r = Fmod{}(a, b);
    if constexpr (is_int_v<T>) {
      return (r != 0 && ((r < 0) != (b < 0))) ? T(r + b) : r;
    } else {
      if (r == T(0)) return math::copysign_(T(0), b);
      return ((r < T(0)) != (b < T(0))) ? T(r + b) : r;
    }
  }
};
// clamp(x, lo, hi) = min(max(x, lo), hi) (hi where lo > hi, as PyTorch); a NaN x, lo or hi
// propagates, in that order.
struct Clamp {
  template <class T>
  TENAX_HD T operator()(T x, T lo, T hi) const {
    if (x != x) return x;
    if (lo != lo) return lo;
    if (hi != hi) return hi;
    const T t = x < lo ? lo : x;
    return t > hi ? hi : t;
  }
};
// Scalar bounds, held as double (real dtypes only: a float bound converts exactly): one functor for
// every dtype, with two members (device_functor converts the one-member functors F<S>).
struct ClampScalar {
  double lo, hi;
  template <class T>
  TENAX_HD T operator()(T x) const {
    return Clamp{}(x, T(lo), T(hi));
  }
};
template <class S>
struct RemainderScalar {
  S s;
  template <class T>
  TENAX_HD T operator()(T a) const {
    return Remainder{}(a, T(s));
  }
};
template <class S>
struct FmodScalar {
  S s;
  template <class T>
  TENAX_HD T operator()(T a) const {
    return Fmod{}(a, T(s));
  }
};
template <class S>
struct AddScalar {
  S s;
  template <class T>
  TENAX_HD T operator()(T a) const {
    return a + s;
  }
};
template <class S>
struct MulScalar {
  S s;
  template <class T>
  TENAX_HD T operator()(T a) const {
    return a * s;
  }
};
template <class S>
struct RSubScalar {
  S s;
  template <class T>
  TENAX_HD T operator()(T a) const {
    return s - a;
  }
};
template <class S>
struct DivScalar {
  S s;
  template <class T>
  TENAX_HD T operator()(T a) const {
    return a / s;
  }
};
template <class S>
struct RDivScalar {
  S s;
  template <class T>
  TENAX_HD T operator()(T a) const {
    return s / a;
  }
};
struct Where {
  template <class T>
  TENAX_HD T operator()(bool c, T a, T b) const {
    return c ? a : b;
  }
};

struct Eq {
  template <class T>
  TENAX_HD bool operator()(T a, T b) const {
    return a == b;
  }
};
struct Ne {
  template <class T>
  TENAX_HD bool operator()(T a, T b) const {
    return a != b;
  }
};
struct Lt {
  template <class T>
  TENAX_HD bool operator()(T a, T b) const {
    return a < b;
  }
};
struct Le {
  template <class T>
  TENAX_HD bool operator()(T a, T b) const {
    return a <= b;
  }
};
struct Gt {
  template <class T>
  TENAX_HD bool operator()(T a, T b) const {
    return a > b;
  }
};
struct Ge {
  template <class T>
  TENAX_HD bool operator()(T a, T b) const {
    return a >= b;
  }
};

// Finite (neither inf nor NaN; complex: both parts): x - x is 0 exactly for finite x, NaN otherwise.
struct IsFinite {
  template <class T>
  TENAX_HD bool operator()(T x) const {
    if constexpr (is_complex_v<T>) {
      return operator()(math::real_(x)) && operator()(math::imag_(x));
    } else {
      const T z = x - x;
      return z == z;
    }
  }
};

// Reduction combines. Sum and product fold with Add and Mul; max/min keep a NaN once seen.
struct FoldMax {
  template <class T>
  TENAX_HD T operator()(T acc, T x) const {
    return Maximum{}(x, acc);
  }
};
struct FoldMin {
  template <class T>
  TENAX_HD T operator()(T acc, T x) const {
    return Minimum{}(x, acc);
  }
};

// Floating to int32/int64: NaN becomes 0 and values beyond the range saturate at its ends, where
// a plain static_cast is undefined behaviour. Values in range are truncated toward zero.
template <class D, class R>
TENAX_HD D saturating_int(R v) {
  static_assert(sizeof(D) == 4 || sizeof(D) == 8);
  constexpr R lo = sizeof(D) == 4 ? R(-2147483648.0) : R(-9223372036854775808.0);  // -2^31, -2^63: exact
  if (v != v) return D(0);
  if (v <= lo) return static_cast<D>(lo);
  if (v >= -lo) return static_cast<D>(-(static_cast<D>(lo) + 1));
  return static_cast<D>(v);
}

// Element conversion for casts and copies: complex to real keeps the real part, real to complex
// gets a zero imaginary part; floating to integer saturates (saturating_int).
template <class D>
struct Convert {
  template <class S>
  TENAX_HD D operator()(S v) const {
    constexpr bool to_int = std::is_integral_v<D> && !std::is_same_v<D, bool>;
    if constexpr (is_complex_v<S> && std::is_same_v<D, bool>)
      return math::real_(v) != 0 || math::imag_(v) != 0;  // nonzero, as for real values
    else if constexpr (is_complex_v<S> && to_int)
      return saturating_int<D>(math::real_(v));
    else if constexpr (is_complex_v<S> && !is_complex_v<D>)
      return static_cast<D>(math::real_(v));
    else if constexpr (is_complex_v<D> && !is_complex_v<S>)
      return D(static_cast<real_t<D>>(v), real_t<D>(0));
    else if constexpr (to_int && std::is_floating_point_v<S>)
      return saturating_int<D>(v);
    else
      return static_cast<D>(v);
  }
};

}  // namespace tenax::fn
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility pop
#endif
