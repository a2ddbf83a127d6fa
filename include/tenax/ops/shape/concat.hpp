#pragma once
// concat / stack along a dimension. concat is the sum of each input embedded at its offset in
// the result (embed is the adjoint of slice), so its rules are slice's.
#include <vector>

#include "tenax/ad/apply.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/shape/slice.hpp"

namespace tenax {
namespace ops {

// [a, b] along dim, for tensors without derivatives (integer and boolean).
struct Concat2 {
  static constexpr const char* name = "concat";
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
};

}  // namespace ops

template <Scalar T>
Tensor<T> concat(const std::vector<Tensor<T>>& xs, int dim) {
  TENAX_CHECK(!xs.empty(), "concat", "needs at least one tensor");
  const int d = wrap_axis(dim, xs[0].dim(), "concat");
  Shape full = xs[0].shape();
  full[d] = 0;
  for (const auto& x : xs) {
    TENAX_CHECK(x.dim() == full.size(), "concat", "ranks differ: ", xs[0].shape(), " and ", x.shape());
    TENAX_CHECK(x.device() == xs[0].device(), "concat", "inputs are on different devices (", xs[0].device().str(),
                " and ", x.device().str(), ")");
    for (int i = 0; i < full.size(); ++i)
      TENAX_CHECK(i == d || x.shape()[i] == xs[0].shape()[i], "concat", "shapes ", xs[0].shape(), " and ", x.shape(),
                  " differ outside dimension ", d);
    full[d] += x.shape()[d];
  }
  Tensor<T> out;
  if constexpr (dtype_traits<T>::is_floating) {
    std::int64_t at = 0;
    for (const auto& x : xs) {
      ops::Embed<ops::Slice> op{{d, at, x.shape()[d], 1}, full};
      at += x.shape()[d];
      const Tensor<T> e = detail::apply(op, x);
      out = out.defined() ? add(out, e) : e;
    }
  } else {
    out = xs[0];
    for (std::size_t k = 1; k < xs.size(); ++k) out = detail::apply_nondiff(ops::Concat2{d}, out, xs[k]);
  }
  return out;
}

template <Scalar T>
Tensor<T> stack(const std::vector<Tensor<T>>& xs, int dim) {
  TENAX_CHECK(!xs.empty(), "stack", "needs at least one tensor");
  std::vector<Tensor<T>> u;
  u.reserve(xs.size());
  for (const auto& x : xs) {
    TENAX_CHECK(x.shape() == xs[0].shape(), "stack", "shapes differ: ", xs[0].shape(), " and ", x.shape());
    u.push_back(unsqueeze(x, dim));
  }
  return concat(u, dim);
}

}  // namespace tenax
