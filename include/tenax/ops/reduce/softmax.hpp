#pragma once
// logsumexp, softmax and log_softmax over axes, stable (shifted by the maximum) with exact
// derivatives: the shift is computed without recording (it cancels in the value, so its derivative
// contributes nothing), and every other step is a public op, so the rules are the composition's:
// d logsumexp = softmax, to any order, in both modes, traced and on every device. A slice whose
// maximum is not finite (all -inf, or +inf or NaN present) is shifted by 0, so -inf gives -inf
// (softmax NaN, as 0/0 in PyTorch) and +inf or NaN propagate.
#include <cstdint>
#include <vector>

#include "tenax/ad/mode.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/core/tensor.hpp"
#include "tenax/ops/binary/add.hpp"
#include "tenax/ops/binary/div.hpp"
#include "tenax/ops/binary/sub.hpp"
#include "tenax/ops/binary/where.hpp"
#include "tenax/ops/reduce/extremum.hpp"
#include "tenax/ops/reduce/sum.hpp"
#include "tenax/ops/shape/reshape.hpp"
#include "tenax/ops/unary/exp.hpp"
#include "tenax/ops/unary/isfinite.hpp"
#include "tenax/ops/unary/log.hpp"

namespace tenax {
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
  detail::check_defined("softmax", x);
  detail::axis_mask({axis}, x, "softmax");
  const Tensor<T> e = exp(sub(x, detail::softmax_shift(x, {axis})));
  return div(e, sum(e, {axis}, true));
}

// x - logsumexp(x) along `axis` (the log of softmax, without forming it).
template <RealFloating T>
Tensor<T> log_softmax(const Tensor<T>& x, std::int64_t axis) {
  detail::check_defined("log_softmax", x);
  detail::axis_mask({axis}, x, "log_softmax");
  const Tensor<T> z = sub(x, detail::softmax_shift(x, {axis}));
  return sub(z, log(sum(exp(z), {axis}, true)));
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_SOFTMAX(T)                                                              \
  TENAX_INSTANCE Tensor<T> logsumexp(const Tensor<T>&, const std::vector<std::int64_t>&, bool); \
  TENAX_INSTANCE Tensor<T> logsumexp(const Tensor<T>&);                                         \
  TENAX_INSTANCE Tensor<T> softmax(const Tensor<T>&, std::int64_t);                             \
  TENAX_INSTANCE Tensor<T> log_softmax(const Tensor<T>&, std::int64_t);
TENAX_DECLARE_INSTANCES(TENAX_FOR_REAL, TENAX_INSTANCES_SOFTMAX)

}  // namespace tenax
