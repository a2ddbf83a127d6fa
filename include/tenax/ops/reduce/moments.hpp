#pragma once
// var and std over axes, with Bessel's correction as an argument (PyTorch's `correction`: the sum
// of squared deviations is divided by max(0, N - correction), N the number of reduced elements; 1 is
// the unbiased estimate, 0 the population variance). Complex input: the mean of |x - mean|^2, real.
// Written with public ops, so differentiable to any order in both modes, traced and on every
// device; std's derivative at zero variance is inf (as sqrt's), as in PyTorch.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "tenax/core/instances.hpp"
#include "tenax/core/tensor.hpp"
#include "tenax/ops/binary/div_scalar.hpp"
#include "tenax/ops/binary/mul.hpp"
#include "tenax/ops/binary/sub.hpp"
#include "tenax/ops/reduce/sum.hpp"
#include "tenax/ops/shape/reshape.hpp"
#include "tenax/ops/unary/conj.hpp"
#include "tenax/ops/unary/real.hpp"
#include "tenax/ops/unary/sqrt.hpp"
#include "tenax/ops/unary/square.hpp"

namespace tenax {

// The variance of x over `axes` (negative axes count from the end).
template <Floating T>
RealTensor<T> var(const Tensor<T>& x, const std::vector<std::int64_t>& axes, double correction = 1,
                  bool keepdim = false) {
  detail::check_defined("var", x);
  const detail::AxisMask m = detail::axis_mask(axes, x, "var");
  double n = 1;
  for (int d = 0; d < x.dim(); ++d)
    if (m[d]) n *= static_cast<double>(x.shape()[d]);
  const Tensor<T> dev = sub(x, mean(x, axes, true));
  RealTensor<T> sq;
  if constexpr (is_complex_v<T>)
    sq = real(mul(conj(dev), dev));
  else
    sq = square(dev);
  return div(sum(sq, axes, keepdim), static_cast<real_t<T>>(std::max(0.0, n - correction)));
}

// The unbiased variance of all elements (a 0-d tensor; another correction: name the axes).
template <Floating T>
RealTensor<T> var(const Tensor<T>& x) {
  detail::check_defined("var", x);
  return var(reshape(x, Shape{x.numel()}), {0}, 1.0, false);
}

// The standard deviation: sqrt(var).
template <Floating T>
RealTensor<T> std(const Tensor<T>& x, const std::vector<std::int64_t>& axes, double correction = 1,
                  bool keepdim = false) {
  detail::check_defined("std", x);
  return sqrt(var(x, axes, correction, keepdim));
}

template <Floating T>
RealTensor<T> std(const Tensor<T>& x) {
  detail::check_defined("std", x);
  return sqrt(var(x));
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_MOMENTS(T)                                                                    \
  TENAX_INSTANCE RealTensor<T> var(const Tensor<T>&, const std::vector<std::int64_t>&, double, bool); \
  TENAX_INSTANCE RealTensor<T> var(const Tensor<T>&);                                                 \
  TENAX_INSTANCE RealTensor<T> std(const Tensor<T>&, const std::vector<std::int64_t>&, double, bool); \
  TENAX_INSTANCE RealTensor<T> std(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_MOMENTS)

}  // namespace tenax
