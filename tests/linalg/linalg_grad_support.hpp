#pragma once
// Inputs and checks shared by the linalg gradient tests (test_linalg_grad_*.cpp): well-conditioned
// and well-separated matrices, views with other layouts, and "batched equals a loop over the batch".
// The AD checks themselves are tests/support/gradcheck.hpp (expect_ad / TENAX_CHECK_GRADS).
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include <tenax/linalg.hpp>

#include "support/gradcheck.hpp"
#include "support/matrices.hpp"

namespace tenax::lgtest {

using ::tenax::testing::as_tuple;
using ::tenax::testing::expect_close;
using ::tenax::testing::re_inner;
using ::tenax::testing::values;
using ::tenax::testing::Vec;

using Types = ::testing::Types<double, std::complex<double>>;

// Shape {m, n, batch...}.
inline Shape mshape(std::int64_t m, std::int64_t n, const Shape& batch = {}) {
  Shape s{m, n};
  for (auto d : batch) s.push_back(d);
  return s;
}

// n x n identity broadcast over `batch`, as a contiguous tensor.
template <class T>
Tensor<T> eye_batch(std::int64_t n, const Shape& batch = {}) {
  return clone(expand(Tensor<T>::eye(n, n), mshape(n, n, batch)));
}

// Random normal entries plus shift * I: a well-conditioned square matrix (shift defaults to n).
template <class T>
Tensor<T> well_conditioned(std::int64_t n, const Shape& batch, std::uint64_t seed, double shift = -1) {
  const double s = shift < 0 ? static_cast<double>(n) : shift;
  return add(Tensor<T>::randn(mshape(n, n, batch), seed), mul(eye_batch<T>(n, batch), T(s)));
}

// m x k with orthonormal columns (Q of a random matrix).
template <class T>
Tensor<T> orthonormal(std::int64_t m, std::int64_t k, const Shape& batch, std::uint64_t seed) {
  return linalg::qr(Tensor<T>::randn(mshape(m, k, batch), seed)).first;
}

// Real values, one column per batch element: v[i] + 0.05 b (so batch elements differ).
template <class R>
Tensor<R> per_batch(const std::vector<double>& v, const Shape& batch) {
  std::int64_t nb = 1;
  for (auto d : batch) nb *= d;
  std::vector<R> out;
  for (std::int64_t b = 0; b < nb; ++b)
    for (double x : v) out.push_back(static_cast<R>(x + 0.05 * static_cast<double>(b)));
  Shape s{static_cast<std::int64_t>(v.size())};
  for (auto d : batch) s.push_back(d);
  return Tensor<R>::from_col_major(s, out);
}

// Q diag(lambda) Q^H with the given (well-separated) eigenvalues.
template <class T>
Tensor<T> hermitian_with(const std::vector<double>& lambda, const Shape& batch, std::uint64_t seed) {
  const auto n = static_cast<std::int64_t>(lambda.size());
  const Tensor<T> Q = orthonormal<T>(n, n, batch, seed);
  const Tensor<T> D = diag_embed(cast<T>(per_batch<real_t<T>>(lambda, batch)));
  return matmul(Q, matmul(D, Q.mH()));
}

// Evenly spread eigenvalues: gaps of 0.7 (>= 0.1 as the tests require), mixed signs.
inline std::vector<double> spread(std::int64_t n, double lo = -1.6, double gap = 0.7) {
  std::vector<double> v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back(lo + gap * static_cast<double>(i));
  return v;
}

// The input A for the op(A + A^H) wrapper of eigh: A + A^H = Q diag(lambda) Q^H, plus a random
// skew-Hermitian part that the wrapper cancels (so A itself is not Hermitian).
template <class T>
Tensor<T> eigh_input(std::int64_t n, const Shape& batch, std::uint64_t seed) {
  const Tensor<T> H = hermitian_with<T>(spread(n), batch, seed);
  const Tensor<T> K = Tensor<T>::randn(mshape(n, n, batch), seed + 1);
  return add(mul(H, T(0.5)), mul(sub(K, K.mH()), T(0.3)));
}

// The input A for the cholesky(A + A^H) wrapper: A + A^H = B B^H + n I (SPD, support/matrices.hpp),
// with a random skew-Hermitian part.
template <class T>
Tensor<T> spd_input(std::int64_t n, const Shape& batch, std::uint64_t seed) {
  const Tensor<T> S = ::tenax::testing::spd<T>(n, batch, seed);
  const Tensor<T> K = Tensor<T>::randn(mshape(n, n, batch), seed + 1);
  return add(mul(S, T(0.5)), mul(sub(K, K.mH()), T(0.3)));
}

// U diag(sigma) V^H (m x n) with distinct singular values 1.2 + 0.8 (k - 1 - i), k = min(m, n).
template <class T>
Tensor<T> svd_input(std::int64_t m, std::int64_t n, const Shape& batch, std::uint64_t seed) {
  const std::int64_t k = std::min(m, n);
  std::vector<double> s;
  for (std::int64_t i = 0; i < k; ++i) s.push_back(1.2 + 0.8 * static_cast<double>(k - 1 - i));
  const Tensor<T> U = orthonormal<T>(m, k, batch, seed), V = orthonormal<T>(n, k, batch, seed + 1);
  const Tensor<T> D = diag_embed(cast<T>(per_batch<real_t<T>>(s, batch)));
  return matmul(U, matmul(D, V.mH()));
}

// The same values as x (m x n x batch...), as a transposed view of a contiguous tensor.
template <class T>
Tensor<T> transposed_view(const Tensor<T>& x) {
  Tensor<T> v = clone(x.mT()).mT();
  EXPECT_FALSE(v.is_contiguous());
  return v;
}

// The same values as x, as rows 0, 2, 4, ... of a (2m x n x batch...) contiguous tensor (a slice
// with step 2 in dimension 0).
template <class T>
Tensor<T> step_view(const Tensor<T>& x) {
  const std::int64_t m = x.shape()[0];
  Shape s = x.shape();
  s[0] = 2 * m;
  const Tensor<T> big = clone(stack(std::vector<Tensor<T>>{x, mul(x, T(-3))}, 0)).reshape(s);
  Tensor<T> v = big.slice(0, 0, 2 * m, 2);
  EXPECT_FALSE(v.is_contiguous());
  return v;
}

// Element b of the last (batch) dimension.
template <class T>
Tensor<T> batch_elem(const Tensor<T>& t, std::int64_t b) {
  const int d = t.dim() - 1;
  return t.slice(d, b, b + 1).squeeze(d);
}

// f on inputs batched in their last dimension equals f on each batch element: values and the
// gradient of Re<W, f> for a random W (all inputs at once).
template <class F, class... T>
void expect_batch_matches_loop(F&& f, const Tensor<T>&... x) {
  const auto y = f(x...);
  using Y = std::remove_cvref_t<decltype(y)>;
  const std::int64_t nb = y.shape()[y.dim() - 1];
  const Y w = Y::randn(y.shape(), 4242);
  auto loss = [&](const auto&... a) { return re_inner(w, f(a...)); };
  const auto g = as_tuple(tenax::grad(loss, x...));
  for (std::int64_t b = 0; b < nb; ++b) {
    SCOPED_TRACE("batch element " + std::to_string(b));
    const auto yb = f(batch_elem(x, b)...);
    EXPECT_EQ(yb.shape(), batch_elem(y, b).shape());
    expect_close(values(yb), values(batch_elem(y, b)), 1e-12, "value: batched vs loop");
    const Y wb = clone(batch_elem(w, b));
    auto lb = [&](const auto&... a) { return re_inner(wb, f(a...)); };
    const auto gb = as_tuple(tenax::grad(lb, batch_elem(x, b)...));
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (expect_close(values(std::get<I>(gb)), values(batch_elem(std::get<I>(g), b)), 1e-12,
                    "gradient: batched vs loop, input " + std::to_string(I)),
       ...);
    }
    (std::index_sequence_for<T...>{});
  }
}

// Runtime choice of the harness options.
inline ::tenax::testing::GradOptions first_order_only() {
  ::tenax::testing::GradOptions o;
  o.second_order = false;
  return o;
}

// Real scalar type of a (generic-lambda) argument, for building constants of the right precision.
template <class X>
using real_of = real_t<::tenax::testing::scalar_of<X>>;

// A fixed real weight row c (1 x n) of the argument's precision, for V diag(c) V^H probes.
template <class X>
Tensor<::tenax::testing::scalar_of<X>> weight_row(const X&, std::int64_t n) {
  using S = ::tenax::testing::scalar_of<X>;
  std::vector<S> c;
  for (std::int64_t i = 0; i < n; ++i) c.push_back(S(0.7 + 0.9 * static_cast<double>(i) - 0.4 * (i % 2)));
  return Tensor<S>::from_col_major(Shape{1, n}, c);
}

// A + A^H (the Hermitian-input wrapper).
template <class X>
X herm(const X& a) {
  return add(a, a.mH());
}

}  // namespace tenax::lgtest
