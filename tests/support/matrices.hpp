#pragma once
// Test matrices shared by the tests.
#include <cstdint>

#include <tenax/tenax.hpp>

namespace tenax::testing {

// A seeded symmetric (Hermitian for complex T) positive definite n x n matrix, batched over
// `batch` (shape {n, n, batch...}): B B^H + n I with B of normal entries (Tensor<T>::randn(seed)).
template <class T>
Tensor<T> spd(std::int64_t n, const Shape& batch, std::uint64_t seed) {
  Shape s{n, n};
  for (auto d : batch) s.push_back(d);
  const Tensor<T> b = Tensor<T>::randn(s, seed);
  return add(matmul(b, b.mH()), mul(Tensor<T>::eye(n), T(static_cast<double>(n))));
}

}  // namespace tenax::testing
