#pragma once
// Functors of the kernels that run along one axis (kernels/lines.hpp): f(x, xs, y, ys, n) reads the
// line x[0], x[xs], ... x[(n-1) xs] and writes its result at y with step ys. Sequential, in index
// order, so every device computes the same sums and products in the same order. Compiled by the
// CUDA backend too (cuda/src/scan.cu), with its device complex type.
#include <cstdint>

#include "tenax/ops/functors.hpp"

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility push(default)
#endif
namespace tenax::fn {

// Inclusive prefix sum, from the first element (or from the last when reverse).
struct CumSum {
  bool reverse = false;
  template <class T>
  TENAX_HD void operator()(const T* x, std::int64_t xs, T* y, std::int64_t ys, std::int64_t n) const {
    T acc = T(0);
    for (std::int64_t k = 0; k < n; ++k) {
      const std::int64_t i = reverse ? n - 1 - k : k;
      acc = acc + x[i * xs];
      y[i * ys] = acc;
    }
  }
};

// Inclusive prefix product.
struct CumProd {
  template <class T>
  TENAX_HD void operator()(const T* x, std::int64_t xs, T* y, std::int64_t ys, std::int64_t n) const {
    T acc = T(1);
    for (std::int64_t i = 0; i < n; ++i) {
      acc = acc * x[i * xs];
      y[i * ys] = acc;
    }
  }
};

// The index of the line's largest (is_max) or smallest element, the first one on ties; a NaN
// counts as both, so the first NaN's index wins (PyTorch's argmax/argmin). n >= 1.
template <bool is_max>
struct ArgExtremum {
  template <class T>
  TENAX_HD void operator()(const T* x, std::int64_t xs, std::int64_t* y, std::int64_t, std::int64_t n) const {
    T best = x[0];
    std::int64_t at = 0;
    for (std::int64_t i = 1; i < n && best == best; ++i) {
      const T v = x[i * xs];
      if (v != v || (is_max ? v > best : v < best)) {
        best = v;
        at = i;
      }
    }
    *y = at;
  }
};
using ArgMax = ArgExtremum<true>;
using ArgMin = ArgExtremum<false>;

// softmax (log_softmax when Log) of the line: shifted by the line's maximum where that is finite,
// else by 0 (so a line of -inf gives NaN, and +inf or NaN propagate), the exponentials summed in
// index order. One read for the maximum, one for the exponentials, one write pass.
template <bool Log>
struct SoftmaxLine {
  template <class T>
  TENAX_HD void operator()(const T* x, std::int64_t xs, T* y, std::int64_t ys, std::int64_t n) const {
    T m = x[0];
    for (std::int64_t i = 1; i < n; ++i) m = Maximum{}(x[i * xs], m);
    if (!(m - m == T(0))) m = T(0);  // inf or NaN
    T s = T(0);
    for (std::int64_t i = 0; i < n; ++i) {
      const T e = math::exp_(x[i * xs] - m);
      if constexpr (!Log) y[i * ys] = e;
      s = s + e;
    }
    if constexpr (Log) {
      const T l = math::log_(s);
      for (std::int64_t i = 0; i < n; ++i) y[i * ys] = (x[i * xs] - m) - l;
    } else {
      for (std::int64_t i = 0; i < n; ++i) y[i * ys] = y[i * ys] / s;
    }
  }
};
using Softmax = SoftmaxLine<false>;
using LogSoftmax = SoftmaxLine<true>;

}  // namespace tenax::fn
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility pop
#endif
