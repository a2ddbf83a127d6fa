#pragma once
// concat / stack along a dimension: a balanced tree of two-input concatenations, each one copy of
// its inputs into a fresh tensor (so k inputs cost about log2(k) passes over the result, and
// values, -0.0 included, are copied, not summed). The rules are slice's adjoint pair.
#include <cstdint>
#include <vector>

#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/shape/cast.hpp"
#include "tenax/ops/shape/slice.hpp"

namespace tenax {
namespace ops {

// [a, b] along dim. dy = [da, db]; (ga, gb) = the two slices of gy.
struct Concat2 {
  static constexpr const char* name = "concat";
  static constexpr bool saves_outputs = false;
  int dim;
  template <class T>
  Tensor<T> forward(const Tensor<T>& a, const Tensor<T>& b) const {
    Shape full = a.shape();
    full[dim] += b.shape()[dim];
    Tensor<T> out = Tensor<T>::empty(full, a.device());
    detail::copy_into(Slice{dim, 0, a.shape()[dim], 1}.forward(out), a);
    detail::copy_into(Slice{dim, a.shape()[dim], b.shape()[dim], 1}.forward(out), b);
    return out;
  }
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    auto or_zeros = [](const Tensor<T>& d, const Tensor<T>& x) {
      return d.defined() ? d : Tensor<T>::zeros(x.shape(), x.device());
    };
    return detail::apply(*this, or_zeros(c.dx0(), c.x0()), or_zeros(c.dx1(), c.x1()));
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const std::int64_t na = c.x0().shape()[dim], nb = c.x1().shape()[dim];
    Tensor<T> ga, gb;
    if (c.needs(0)) ga = detail::apply(Slice{dim, 0, na, 1}, c.gy0());
    if (c.needs(1)) gb = detail::apply(Slice{dim, na, nb, 1}, c.gy0());
    return std::tuple{ga, gb};
  }
};

}  // namespace ops

template <Scalar T>
Tensor<T> concat(const std::vector<Tensor<T>>& xs, int dim) {
  TENAX_CHECK(!xs.empty(), "concat", "needs at least one tensor (", dtype_traits<T>::name, ")");
  for (const auto& x : xs) detail::check_defined("concat", x);
  const int d = wrap_axis(dim, xs[0], "concat");
  Shape full = xs[0].shape();
  full[d] = 0;
  for (const auto& x : xs) {
    TENAX_CHECK(x.dim() == full.size(), "concat", "ranks differ: ", xs[0].shape(), " and ", x.shape(), " (",
                dtype_traits<T>::name, " on ", x.device().str(), ")");
    TENAX_CHECK(x.device() == xs[0].device(), "concat", "inputs are on different devices (", xs[0].device().str(),
                " and ", x.device().str(), ")");
    for (int i = 0; i < full.size(); ++i)
      TENAX_CHECK(i == d || x.shape()[i] == xs[0].shape()[i], "concat", "shapes ", xs[0].shape(), " and ", x.shape(),
                  " differ outside dimension ", d, " (", dtype_traits<T>::name, " on ", x.device().str(), ")");
    TENAX_CHECK(full[d] <= INT64_MAX - x.shape()[d], "concat", "the result's dimension ", d, " overflows int64 (",
                xs.size(), " ", dtype_traits<T>::name, " inputs on ", x.device().str(), ")");
    full[d] += x.shape()[d];
  }
  const std::int64_t n = checked_numel(full, "concat");
  TENAX_CHECK(n <= INT64_MAX / std::int64_t{sizeof(T)}, "concat", "the result's shape ", full,
              " overflows int64 bytes (", xs.size(), " ", dtype_traits<T>::name, " inputs on ", xs[0].device().str(),
              ")");
  if (xs.size() == 1) return clone(xs[0]);
  // Balanced: [lo, hi) as [lo, mid) and [mid, hi).
  auto join = [&](auto&& self, std::size_t lo, std::size_t hi) -> Tensor<T> {
    if (hi - lo == 1) return xs[lo];
    const std::size_t mid = lo + (hi - lo) / 2;
    const Tensor<T> a = self(self, lo, mid), b = self(self, mid, hi);
    if constexpr (dtype_traits<T>::is_floating)
      return detail::apply(ops::Concat2{d}, a, b);
    else
      return detail::apply_nondiff(ops::Concat2{d}, a, b);
  };
  return join(join, 0, xs.size());
}

template <Scalar T>
Tensor<T> stack(const std::vector<Tensor<T>>& xs, int dim) {
  TENAX_CHECK(!xs.empty(), "stack", "needs at least one tensor (", dtype_traits<T>::name, ")");
  for (const auto& x : xs) detail::check_defined("stack", x);
  const int r = xs[0].dim() + 1;
  TENAX_CHECK(r <= kMaxRank, "stack", "the result's rank ", r, " exceeds the maximum of ", kMaxRank, " (", xs.size(),
              " ", dtype_traits<T>::name, " tensors of shape ", xs[0].shape(), " on ", xs[0].device().str(), ")");
  TENAX_CHECK(dim >= -r && dim < r, "stack", "dimension ", dim, " out of range for stacking ", xs.size(), " ",
              dtype_traits<T>::name, " tensors of shape ", xs[0].shape(), " on ", xs[0].device().str(),
              " (the result has rank ", r, ")");
  std::vector<Tensor<T>> u;
  u.reserve(xs.size());
  for (const auto& x : xs) {
    TENAX_CHECK(x.shape() == xs[0].shape(), "stack", "shapes differ: ", xs[0].shape(), " and ", x.shape(), " (",
                dtype_traits<T>::name, " on ", x.device().str(), ")");
    u.push_back(unsqueeze(x, dim));
  }
  return concat(u, dim);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_CONCAT(T)                                      \
  TENAX_INSTANCE Tensor<T> concat(const std::vector<Tensor<T>>&, int); \
  TENAX_INSTANCE Tensor<T> stack(const std::vector<Tensor<T>>&, int);
TENAX_DECLARE_INSTANCES(TENAX_FOR_SCALAR, TENAX_INSTANCES_CONCAT)

}  // namespace tenax
