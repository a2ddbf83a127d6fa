#pragma once
// logsumexp, softmax and log_softmax over axes, stable (shifted by the maximum) with exact
// derivatives. softmax and log_softmax along one axis are ops of their own: one pass per line for
// the maximum, one for the exponentials and their sum, one write (kernels/lines.hpp,
// fn::SoftmaxLine), with rules written in public ops, so differentiable to any order, traced and
// on every device. logsumexp is a composition: the shift is computed without recording (it cancels
// in the value, so its derivative contributes nothing), and every other step is a public op, so
// d logsumexp = softmax to any order. A slice whose maximum is not finite (all -inf, or +inf or NaN
// present) is shifted by 0, so -inf gives -inf (softmax NaN, as 0/0 in PyTorch) and +inf or NaN
// propagate.
#include <cstdint>
#include <vector>

#include "tenax/ad/apply.hpp"
#include "tenax/ad/mode.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/core/tensor.hpp"
#include "tenax/kernels/lines.hpp"
#include "tenax/ops/binary/add.hpp"
#include "tenax/ops/binary/mul.hpp"
#include "tenax/ops/binary/sub.hpp"
#include "tenax/ops/binary/where.hpp"
#include "tenax/ops/reduce/cumulative.hpp"
#include "tenax/ops/reduce/extremum.hpp"
#include "tenax/ops/reduce/sum.hpp"
#include "tenax/ops/shape/reshape.hpp"
#include "tenax/ops/unary/exp.hpp"
#include "tenax/ops/unary/isfinite.hpp"
#include "tenax/ops/unary/log.hpp"

namespace tenax {
namespace ops {

// y = softmax(x) (log_softmax when Log) along the axis, sums over the axis kept as size 1:
//   softmax:     dy = y (dx - sum(y dx)),   gx = y (gy - sum(y gy));
//   log_softmax: dy = dx - sum(p dx),       gx = gy - p sum(gy),   p = exp(y).
template <bool Log>
struct Softmax {
  static constexpr const char* name = Log ? "log_softmax" : "softmax";
  static constexpr bool one_kernel = true;  // forward is one captured kernel call (kernels/capture.hpp)
  static constexpr bool saves_outputs = true;
  int axis;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return detail::along_lines<T>(name, x, axis, fn::SoftmaxLine<Log>{}, true);
  }
  template <class C>
  auto jvp(const C& c) const {
    const auto& y = c.y0();
    if constexpr (Log)
      return sub(c.dx0(), sum(mul(exp(y), c.dx0()), {axis}, true));
    else
      return mul(y, sub(c.dx0(), sum(mul(y, c.dx0()), {axis}, true)));
  }
  template <class C>
  auto vjp(const C& c) const {
    const auto& y = c.y0();
    if constexpr (Log)
      return sub(c.gy0(), mul(exp(y), sum(c.gy0(), {axis}, true)));
    else
      return mul(y, sub(c.gy0(), sum(mul(y, c.gy0()), {axis}, true)));
  }
};

}  // namespace ops

namespace detail {

// The stable shift of x over `axes` (kept as size-1 dims): the maximum where finite, else 0;
// computed without recording or tangents.
template <RealFloating T>
Tensor<T> softmax_shift(const Tensor<T>& x, const std::vector<std::int64_t>& axes) {
  NoGradGuard no_tape;
  ForwardOffGuard no_tangents;
  if (x.numel() == 0) return sum(x, axes, true);  // (zeros of the reduced shape)
  const Tensor<T> m = max(x, axes, true);
  return where(isfinite(m), m, Tensor<T>::zeros({}, x.device()));
}

}  // namespace detail

// log(sum(exp(x))) over `axes` (negative axes count from the end), keepdim as sum's.
template <RealFloating T>
Tensor<T> logsumexp(const Tensor<T>& x, const std::vector<std::int64_t>& axes, bool keepdim = false) {
  detail::check_defined("logsumexp", x);
  detail::axis_mask(axes, x, "logsumexp");  // (checks the axes, naming this op)
  const Tensor<T> m = detail::softmax_shift(x, axes);
  const Tensor<T> s = log(sum(exp(sub(x, m)), axes, keepdim));
  return add(s, keepdim ? m : reshape(m, s.shape()));
}

// log(sum(exp(x))) over all elements (a 0-d tensor).
template <RealFloating T>
Tensor<T> logsumexp(const Tensor<T>& x) {
  detail::check_defined("logsumexp", x);
  return logsumexp(reshape(x, Shape{x.numel()}), {0}, false);
}

// exp(x) / sum(exp(x)) along `axis`.
template <RealFloating T>
Tensor<T> softmax(const Tensor<T>& x, std::int64_t axis) {
  return detail::scan("softmax", x, axis, [](int a) { return ops::Softmax<false>{a}; });
}

// x - logsumexp(x) along `axis` (the log of softmax, without forming it).
template <RealFloating T>
Tensor<T> log_softmax(const Tensor<T>& x, std::int64_t axis) {
  return detail::scan("log_softmax", x, axis, [](int a) { return ops::Softmax<true>{a}; });
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_SOFTMAX(T)                                                              \
  TENAX_INSTANCE Tensor<T> logsumexp(const Tensor<T>&, const std::vector<std::int64_t>&, bool); \
  TENAX_INSTANCE Tensor<T> logsumexp(const Tensor<T>&);                                         \
  TENAX_INSTANCE Tensor<T> softmax(const Tensor<T>&, std::int64_t);                             \
  TENAX_INSTANCE Tensor<T> log_softmax(const Tensor<T>&, std::int64_t);
TENAX_DECLARE_INSTANCES(TENAX_FOR_REAL, TENAX_INSTANCES_SOFTMAX)

}  // namespace tenax
