#pragma once
// Matrix products built from matmul: matrix_power (repeated squaring; negative powers through inv)
// and multi_dot (a chain of products in the cheapest order). Written with public ops, so they run
// on every device, in both AD modes, to any order and in prepared programs.
#include <cstdint>
#include <limits>
#include <vector>

#include "tenax/core/instances.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/solve.hpp"

namespace tenax {
namespace linalg {

// A^k for each square matrix of A (torch.linalg.matrix_power): k = 0 gives the identity, k < 0
// (A^-1)^|k| (an error naming the batch element when A is singular). ceil(log2 |k|) squarings and
// at most as many further products.
template <Floating T>
Tensor<T> matrix_power(const Tensor<T>& A, std::int64_t k) {
  tenax::detail::check_square("matrix_power", A);
  TENAX_CHECK(k != std::numeric_limits<std::int64_t>::min(), "matrix_power", "k = ", k,
              " has no representable magnitude (", dtype_traits<T>::name, " ", A.shape(), ")");
  if (k == 0)
    return clone(tenax::detail::batch_eye<T>(A.shape()[0], tenax::detail::mat_batch_shape(A.shape()), A.device()));
  Tensor<T> base = k < 0 ? inv(A) : A;
  std::uint64_t e = static_cast<std::uint64_t>(k < 0 ? -k : k);
  Tensor<T> result;
  for (;;) {
    if (e & 1) result = result.defined() ? matmul(result, base) : base;
    e >>= 1;
    if (e == 0) break;
    base = matmul(base, base);
  }
  return result.impl() == A.impl() ? clone(A) : result;
}

namespace detail_multi_dot {

// The cheapest parenthesisation of a chain with dims[i] x dims[i + 1] factors (the classic
// O(N^3) dynamic programme); split[i][j] is where the product of factors i..j splits.
inline std::vector<std::vector<std::size_t>> chain_order(const std::vector<std::int64_t>& dims) {
  const std::size_t n = dims.size() - 1;
  std::vector<std::vector<double>> cost(n, std::vector<double>(n, 0.0));
  std::vector<std::vector<std::size_t>> split(n, std::vector<std::size_t>(n, 0));
  for (std::size_t len = 1; len < n; ++len)
    for (std::size_t i = 0; i + len < n; ++i) {
      const std::size_t j = i + len;
      cost[i][j] = std::numeric_limits<double>::infinity();
      for (std::size_t s = i; s < j; ++s) {
        const double c =
            cost[i][s] + cost[s + 1][j] +
            static_cast<double>(dims[i]) * static_cast<double>(dims[s + 1]) * static_cast<double>(dims[j + 1]);
        if (c < cost[i][j]) cost[i][j] = c, split[i][j] = s;
      }
    }
  return split;
}

template <class T>
Tensor<T> product(const std::vector<Tensor<T>>& xs, const std::vector<std::vector<std::size_t>>& split, std::size_t i,
                  std::size_t j) {
  if (i == j) return xs[i];
  const std::size_t s = split[i][j];
  return matmul(product(xs, split, i, s), product(xs, split, s + 1, j));
}

}  // namespace detail_multi_dot

// The product of two or more matrices in the order of fewest scalar multiplications
// (torch.linalg.multi_dot): the first factor may be a vector (a row), the last a vector (a column);
// the others are matrices. The result drops the dimensions the vectors stand for (two vectors give
// a scalar).
template <Floating T>
Tensor<T> multi_dot(const std::vector<Tensor<T>>& xs) {
  TENAX_CHECK(xs.size() >= 2, "multi_dot", "needs at least two tensors, got ", xs.size());
  const std::size_t n = xs.size();
  std::vector<Tensor<T>> ms;
  std::vector<std::int64_t> dims;
  for (std::size_t i = 0; i < n; ++i) {
    const Tensor<T>& x = xs[i];
    TENAX_CHECK(x.defined(), "multi_dot", "tensor ", i, " is undefined");
    TENAX_CHECK(x.device() == xs[0].device(), "multi_dot", "tensor ", i, " is on ", x.device().str(), ", tensor 0 on ",
                xs[0].device().str());
    const bool end = i == 0 || i + 1 == n;
    TENAX_CHECK(x.dim() == 2 || (end && x.dim() == 1), "multi_dot", "tensor ", i, " has shape ", x.shape(),
                end ? ": the first and last may be vectors or matrices" : ": inner tensors must be matrices", " (",
                dtype_traits<T>::name, " on ", x.device().str(), ")");
    const Tensor<T> mi = x.dim() == 2 ? x : reshape(x, i == 0 ? Shape{1, x.shape()[0]} : Shape{x.shape()[0], 1});
    if (i == 0) dims.push_back(mi.shape()[0]);
    TENAX_CHECK(mi.shape()[0] == dims.back(), "multi_dot", "tensor ", i, " of shape ", x.shape(),
                " does not follow the previous one (", dims.back(), " columns; ", dtype_traits<T>::name, ")");
    dims.push_back(mi.shape()[1]);
    ms.push_back(mi);
  }
  const Tensor<T> p = detail_multi_dot::product(ms, detail_multi_dot::chain_order(dims), 0, n - 1);
  const bool row = xs.front().dim() == 1, col = xs.back().dim() == 1;
  if (row && col) return reshape(p, Shape{});
  if (row) return reshape(p, Shape{p.shape()[1]});
  if (col) return reshape(p, Shape{p.shape()[0]});
  return p;
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_PRODUCTS(T)                                      \
  TENAX_INSTANCE Tensor<T> matrix_power(const Tensor<T>&, std::int64_t); \
  TENAX_INSTANCE Tensor<T> multi_dot(const std::vector<Tensor<T>>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_PRODUCTS)

}  // namespace linalg
}  // namespace tenax
