#pragma once
// Arithmetic operators on tensors and scalars.
#include "tenax/ops/fwd.hpp"

namespace tenax {

template <Floating T>
Tensor<T> operator+(const Tensor<T>& a, const Tensor<T>& b) {
  return add(a, b);
}
template <Floating T>
Tensor<T> operator-(const Tensor<T>& a, const Tensor<T>& b) {
  return sub(a, b);
}
template <Floating T>
Tensor<T> operator*(const Tensor<T>& a, const Tensor<T>& b) {
  return mul(a, b);
}
template <Floating T>
Tensor<T> operator/(const Tensor<T>& a, const Tensor<T>& b) {
  return div(a, b);
}
template <Floating T>
Tensor<T> operator-(const Tensor<T>& a) {
  return neg(a);
}

template <Floating T>
Tensor<T> operator+(const Tensor<T>& a, std::type_identity_t<T> s) {
  return add(a, s);
}
template <Floating T>
Tensor<T> operator+(std::type_identity_t<T> s, const Tensor<T>& a) {
  return add(a, s);
}
template <Floating T>
Tensor<T> operator-(const Tensor<T>& a, std::type_identity_t<T> s) {
  return add(a, T(-s));
}
template <Floating T>
Tensor<T> operator-(std::type_identity_t<T> s, const Tensor<T>& a) {
  return rsub(a, s);
}
template <Floating T>
Tensor<T> operator*(const Tensor<T>& a, std::type_identity_t<T> s) {
  return mul(a, s);
}
template <Floating T>
Tensor<T> operator*(std::type_identity_t<T> s, const Tensor<T>& a) {
  return mul(a, s);
}
template <Floating T>
Tensor<T> operator/(const Tensor<T>& a, std::type_identity_t<T> s) {
  return div(a, s);
}
template <Floating T>
Tensor<T> operator/(std::type_identity_t<T> s, const Tensor<T>& a) {
  return rdiv(a, s);
}

}  // namespace tenax
