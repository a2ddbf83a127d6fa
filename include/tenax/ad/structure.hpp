#pragma once
// Results and arguments that are structures of tensors: a Tensor<T>, or a std::tuple / std::pair of
// structures (nested). Flattened depth first, left to right; the transforms (ad/functional.hpp,
// ad/jacobian.hpp) and the tracer (trace/traced.hpp) use the same order.
#include <array>
#include <cstddef>
#include <tuple>
#include <utility>

#include "tenax/core/tensor.hpp"
#include "tenax/ops/shape/cast.hpp"

namespace tenax::detail {

template <class R>
struct Structure;

template <class T>
struct Structure<Tensor<T>> {
  static constexpr std::size_t size = 1;
  static void flatten(const Tensor<T>& r, ImplPtr*& out) { *out++ = r.impl(); }
  static Tensor<T> unflatten(const ImplPtr*& in) { return Tensor<T>(*in++); }
  // The same, taking the bodies over (no reference count).
  static Tensor<T> take(ImplPtr*& in) { return Tensor<T>(std::move(*in++)); }
  // Replaces each flattened tensor whose flag is set by a copy (flags and io advance together).
  static void copy_flagged(const char*& flag, ImplPtr*& io) {
    if (*flag++) *io = clone(Tensor<T>(*io)).impl();
    ++io;
  }
  // Zeros of the shapes and devices of r.
  static Tensor<T> zeros_like(const Tensor<T>& r) { return Tensor<T>::zeros(r.shape(), r.device()); }
  // Applies f(Tensor<T>) to each tensor, in the flattened order.
  template <class F>
  static void for_each(const Tensor<T>& r, F&& f) {
    f(r);
  }
};

template <class... X>
struct Structure<std::tuple<X...>> {
  static constexpr std::size_t size = (std::size_t{0} + ... + Structure<X>::size);
  static void flatten(const std::tuple<X...>& r, ImplPtr*& out) {
    std::apply([&](const auto&... x) { (Structure<X>::flatten(x, out), ...); }, r);
  }
  static std::tuple<X...> unflatten(const ImplPtr*& in) { return std::tuple<X...>{Structure<X>::unflatten(in)...}; }
  static std::tuple<X...> take(ImplPtr*& in) { return std::tuple<X...>{Structure<X>::take(in)...}; }
  static void copy_flagged(const char*& flag, ImplPtr*& io) { (Structure<X>::copy_flagged(flag, io), ...); }
  static std::tuple<X...> zeros_like(const std::tuple<X...>& r) {
    return std::apply([](const auto&... x) { return std::tuple<X...>{Structure<X>::zeros_like(x)...}; }, r);
  }
  template <class F>
  static void for_each(const std::tuple<X...>& r, F&& f) {
    std::apply([&](const auto&... x) { (Structure<X>::for_each(x, f), ...); }, r);
  }
};

template <class A, class B>
struct Structure<std::pair<A, B>> {
  static constexpr std::size_t size = Structure<A>::size + Structure<B>::size;
  static void flatten(const std::pair<A, B>& r, ImplPtr*& out) {
    Structure<A>::flatten(r.first, out);
    Structure<B>::flatten(r.second, out);
  }
  static std::pair<A, B> unflatten(const ImplPtr*& in) {
    A a = Structure<A>::unflatten(in);
    B b = Structure<B>::unflatten(in);
    return {std::move(a), std::move(b)};
  }
  static std::pair<A, B> take(ImplPtr*& in) {
    A a = Structure<A>::take(in);
    B b = Structure<B>::take(in);
    return {std::move(a), std::move(b)};
  }
  static void copy_flagged(const char*& flag, ImplPtr*& io) {
    Structure<A>::copy_flagged(flag, io);
    Structure<B>::copy_flagged(flag, io);
  }
  static std::pair<A, B> zeros_like(const std::pair<A, B>& r) {
    return {Structure<A>::zeros_like(r.first), Structure<B>::zeros_like(r.second)};
  }
  template <class F>
  static void for_each(const std::pair<A, B>& r, F&& f) {
    Structure<A>::for_each(r.first, f);
    Structure<B>::for_each(r.second, f);
  }
};

// Whether R is a structure of tensors.
template <class R>
concept TensorStructure = requires {
  Structure<R>::size;
};

// The tensors of r, flattened.
template <class R>
std::array<ImplPtr, Structure<R>::size> flat_impls(const R& r) {
  std::array<ImplPtr, Structure<R>::size> a;
  ImplPtr* p = a.data();
  Structure<R>::flatten(r, p);
  return a;
}

// A structure of R's type from flattened tensors.
template <class R, class Container>
R unflatten_as(const Container& c) {
  const ImplPtr* p = c.data();
  return Structure<R>::unflatten(p);
}

}  // namespace tenax::detail
