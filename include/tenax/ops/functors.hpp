#pragma once
// Elementwise functors shared by every backend: plain structs with a templated call operator, so
// a device backend can instantiate the same definitions.
#include <cmath>
#include <complex>

#include "tenax/core/dtype.hpp"

#if defined(__CUDACC__)
#define TENAX_HD __host__ __device__
#else
#define TENAX_HD
#endif

namespace tenax::fn {

template <class T>
TENAX_HD inline T conj_of(T x) {
  if constexpr (is_complex_v<T>)
    return std::conj(x);
  else
    return x;
}

struct Neg {
  template <class T>
  TENAX_HD T operator()(T x) const {
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
    return std::abs(x);
  }
};
struct Sign {
  template <class T>
  TENAX_HD T operator()(T x) const {
    if constexpr (is_complex_v<T>) {
      auto r = std::abs(x);
      return r == 0 ? T(0) : x / r;
    } else {
      return static_cast<T>((x > 0) - (x < 0));
    }
  }
};
struct Exp {
  template <class T>
  TENAX_HD T operator()(T x) const {
    return std::exp(x);
  }
};
struct Log {
  template <class T>
  TENAX_HD T operator()(T x) const {
    return std::log(x);
  }
};
struct Log1p {
  template <class T>
  TENAX_HD T operator()(T x) const {
    return std::log1p(x);
  }
};
struct Expm1 {
  template <class T>
  TENAX_HD T operator()(T x) const {
    return std::expm1(x);
  }
};
struct Sqrt {
  template <class T>
  TENAX_HD T operator()(T x) const {
    return std::sqrt(x);
  }
};
struct Rsqrt {
  template <class T>
  TENAX_HD T operator()(T x) const {
    return T(1) / std::sqrt(x);
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
    return std::sin(x);
  }
};
struct Cos {
  template <class T>
  TENAX_HD T operator()(T x) const {
    return std::cos(x);
  }
};
struct Tanh {
  template <class T>
  TENAX_HD T operator()(T x) const {
    return std::tanh(x);
  }
};
struct Sigmoid {
  template <class T>
  TENAX_HD T operator()(T x) const {
    return T(1) / (T(1) + std::exp(-x));
  }
};
struct Relu {
  template <class T>
  TENAX_HD T operator()(T x) const {
    return x > T(0) ? x : T(0);
  }
};
struct Real {
  template <class T>
  TENAX_HD real_t<T> operator()(T x) const {
    return std::real(x);
  }
};
struct Imag {
  template <class T>
  TENAX_HD real_t<T> operator()(T x) const {
    return std::imag(x);
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
    return std::pow(x, p);
  }
};
struct Pow {
  template <class T>
  TENAX_HD T operator()(T x, T e) const {
    return std::pow(x, e);
  }
};

struct Add {
  template <class T>
  TENAX_HD T operator()(T a, T b) const {
    return a + b;
  }
};
struct Sub {
  template <class T>
  TENAX_HD T operator()(T a, T b) const {
    return a - b;
  }
};
struct Mul {
  template <class T>
  TENAX_HD T operator()(T a, T b) const {
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

}  // namespace tenax::fn
