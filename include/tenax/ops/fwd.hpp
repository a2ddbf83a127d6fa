#pragma once
// Declarations of the public ops, so that rules can call each other whatever the include order.
// Each op is defined in its own header under tenax/ops/.
#include <cstdint>
#include <type_traits>
#include <vector>

#include "tenax/core/tensor.hpp"

namespace tenax {

template <class T>
using RealTensor = Tensor<real_t<T>>;
template <Scalar T>
using BoolTensor = Tensor<bool>;

// Elementwise unary
template <Floating T>
Tensor<T> neg(const Tensor<T>& x);
template <Floating T>
RealTensor<T> abs(const Tensor<T>& x);
template <Floating T>
Tensor<T> sign(const Tensor<T>& x);
template <Floating T>
Tensor<T> exp(const Tensor<T>& x);
template <Floating T>
Tensor<T> log(const Tensor<T>& x);
template <RealFloating T>
Tensor<T> log1p(const Tensor<T>& x);
template <RealFloating T>
Tensor<T> expm1(const Tensor<T>& x);
template <Floating T>
Tensor<T> sqrt(const Tensor<T>& x);
template <Floating T>
Tensor<T> rsqrt(const Tensor<T>& x);
template <Floating T>
Tensor<T> square(const Tensor<T>& x);
template <Floating T>
Tensor<T> sin(const Tensor<T>& x);
template <Floating T>
Tensor<T> cos(const Tensor<T>& x);
template <Floating T>
Tensor<T> tanh(const Tensor<T>& x);
template <Floating T>
Tensor<T> sigmoid(const Tensor<T>& x);
template <RealFloating T>
Tensor<T> relu(const Tensor<T>& x);
template <Floating T>
Tensor<T> sinh(const Tensor<T>& x);
template <Floating T>
Tensor<T> cosh(const Tensor<T>& x);
template <RealFloating T>
Tensor<T> floor(const Tensor<T>& x);
template <RealFloating T>
Tensor<T> trunc(const Tensor<T>& x);
template <Floating T>
RealTensor<T> real(const Tensor<T>& x);
template <Floating T>
RealTensor<T> imag(const Tensor<T>& x);
template <Floating T>
Tensor<T> pow(const Tensor<T>& x, T exponent);
template <Floating T>
Tensor<T> pow(const Tensor<T>& x, const Tensor<T>& exponent);
// A complex tensor from real and imaginary parts.
template <RealFloating T>
Tensor<std::complex<T>> complex(const Tensor<T>& re, const Tensor<T>& im);

// Elementwise binary (broadcasting)
template <Floating T>
Tensor<T> add(const Tensor<T>& a, const Tensor<T>& b);
template <Floating T>
Tensor<T> sub(const Tensor<T>& a, const Tensor<T>& b);
template <Floating T>
Tensor<T> mul(const Tensor<T>& a, const Tensor<T>& b);
template <Floating T>
Tensor<T> div(const Tensor<T>& a, const Tensor<T>& b);
template <RealFloating T>
Tensor<T> maximum(const Tensor<T>& a, const Tensor<T>& b);
template <RealFloating T>
Tensor<T> minimum(const Tensor<T>& a, const Tensor<T>& b);
template <Floating T>
Tensor<T> add(const Tensor<T>& a, T s);
template <Floating T>
Tensor<T> mul(const Tensor<T>& a, T s);
template <Floating T>
Tensor<T> rsub(const Tensor<T>& a, T s);  // s - a
template <Floating T>
Tensor<T> rdiv(const Tensor<T>& a, T s);  // s / a
template <Floating T>
Tensor<T> div(const Tensor<T>& a, T s);  // a / s
template <Scalar T>
Tensor<T> where(const Tensor<bool>& cond, const Tensor<T>& a, const Tensor<T>& b);

// Comparisons (no gradient)
template <Scalar T>
Tensor<bool> eq(const Tensor<T>& a, const Tensor<T>& b);
template <Floating T>
Tensor<bool> isfinite(const Tensor<T>& x);
template <Scalar T>
Tensor<bool> ne(const Tensor<T>& a, const Tensor<T>& b);
template <Scalar T>
Tensor<bool> lt(const Tensor<T>& a, const Tensor<T>& b);
template <Scalar T>
Tensor<bool> le(const Tensor<T>& a, const Tensor<T>& b);
template <Scalar T>
Tensor<bool> gt(const Tensor<T>& a, const Tensor<T>& b);
template <Scalar T>
Tensor<bool> ge(const Tensor<T>& a, const Tensor<T>& b);

// Reductions
template <Floating T>
Tensor<T> sum(const Tensor<T>& x);
template <Floating T>
Tensor<T> sum(const Tensor<T>& x, const std::vector<std::int64_t>& axes, bool keepdim = false);
template <Floating T>
Tensor<T> mean(const Tensor<T>& x);
template <Floating T>
Tensor<T> mean(const Tensor<T>& x, const std::vector<std::int64_t>& axes, bool keepdim = false);
template <Floating T>
Tensor<T> prod(const Tensor<T>& x);
template <Floating T>
Tensor<T> prod(const Tensor<T>& x, const std::vector<std::int64_t>& axes, bool keepdim = false);
template <RealFloating T>
Tensor<T> max(const Tensor<T>& x);
template <RealFloating T>
Tensor<T> max(const Tensor<T>& x, const std::vector<std::int64_t>& axes, bool keepdim = false);
template <RealFloating T>
Tensor<T> min(const Tensor<T>& x);
template <RealFloating T>
Tensor<T> min(const Tensor<T>& x, const std::vector<std::int64_t>& axes, bool keepdim = false);
// Sums x down to `shape` (the inverse of broadcasting to x's shape).
template <Floating T>
Tensor<T> sum_to(const Tensor<T>& x, const Shape& shape);

// Shape and views
template <Scalar T>
Tensor<T> broadcast_to(const Tensor<T>& x, const Shape& shape);
template <Scalar T>
Tensor<T> flatten(const Tensor<T>& x);
template <Scalar T>
Tensor<T> tril(const Tensor<T>& x, std::int64_t k = 0);
template <Scalar T>
Tensor<T> triu(const Tensor<T>& x, std::int64_t k = 0);
template <Scalar T>
Tensor<T> diag_embed(const Tensor<T>& x);
template <Scalar T>
Tensor<T> diag(const Tensor<T>& x);
template <Scalar T>
Tensor<T> concat(const std::vector<Tensor<T>>& xs, int dim);
template <Scalar T>
Tensor<T> stack(const std::vector<Tensor<T>>& xs, int dim);
template <Scalar U, Scalar T>
Tensor<U> cast(const Tensor<T>& x);
template <Scalar T>
Tensor<T> clone(const Tensor<T>& x);

// Indexing (ops/index/)
template <class T>
concept AddableScalar = Floating<T> || std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t>;
template <Scalar T>
Tensor<T> gather(const Tensor<T>& x, int axis, const Tensor<std::int64_t>& idx);
template <AddableScalar T>
Tensor<T> scatter_add(const Tensor<T>& x, int axis, const Tensor<std::int64_t>& idx, const Tensor<T>& src);
template <Scalar T>
Tensor<T> put_along_axis(const Tensor<T>& x, const Tensor<std::int64_t>& idx, const Tensor<T>& values, int axis);

// Linear algebra basics
template <Floating T>
Tensor<T> matmul(const Tensor<T>& a, const Tensor<T>& b);

namespace detail {
// a + b where an undefined tensor is a symbolic zero (rules' tangents and cotangents): the other
// operand when one is undefined, undefined when both are.
template <class T>
Tensor<T> accumulate(const Tensor<T>& a, const Tensor<T>& b) {
  return !a.defined() ? b : !b.defined() ? a : add(a, b);
}
// a - b with the same convention.
template <class T>
Tensor<T> subtract(const Tensor<T>& a, const Tensor<T>& b) {
  return !b.defined() ? a : !a.defined() ? neg(b) : sub(a, b);
}
}  // namespace detail

}  // namespace tenax
