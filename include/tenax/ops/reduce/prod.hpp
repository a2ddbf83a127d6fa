#pragma once
// prod over chosen axes or everything.
#include <utility>
#include <vector>

#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/reduce.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/reduce/sum.hpp"

namespace tenax {
namespace ops {

struct Prod {
  static constexpr const char* name = "prod";
  static constexpr bool one_kernel = true;      // forward is one captured kernel call (kernels/capture.hpp)
  static constexpr bool saves_outputs = false;  // the rules form the products of the others from x
  detail::AxisMask mask;
  bool keepdim;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    Tensor<T> r = detail::reduce<T>(name, x, mask, T(1), fn::Mul{});
    if (keepdim) return r;
    const Shape s = detail::reduced_shape(x.shape(), mask, false);
    return Tensor<T>(detail::make_view_impl(*r.impl(), s, col_major_strides(s), 0));
  }
  // With P_i = prod_{j != i} x_j over each reduced group: dy = sum(P dx); gx = conj(P) gy.
  template <class C>
  auto jvp(const C& c) const {
    auto P = others(c.x0());
    return detail::apply(Sum{mask, keepdim}, mul(P, c.dx0()));
  }
  template <class C>
  auto vjp(const C& c) const {
    auto P = others(c.x0());
    return mul(conj(P), expand(reshape(c.gy0(), kshape(c.x0())), c.x0().shape()));
  }

 private:
  Shape kshape(const auto& x) const { return detail::reduced_shape(x.shape(), mask, true); }
  // P by multiplications only, never y / x_i: exact with zeros, infinities and tiny entries, and
  // so are its derivatives, which the higher-order rules take through these products (y / x_i
  // loses its small terms to cancellation: the Hessian at x = [1e-16, 1] came out [0, 1], not
  // [1, 1]). The group's entries, moved to the first dimension (g x r), are multiplied in pairs up
  // a tree, the first half times the second with an odd half padded by a one (as JAX's reduce_prod
  // JVP); the product of all the others then comes down it: a node's is its parent's times its
  // sibling. About 8 log2(g) ops and 3 g r products.
  template <class T>
  Tensor<T> others(const Tensor<T>& x) const {
    const Shape& s = x.shape();
    Shape order, moved;  // the reduced axes first, then the kept ones
    std::int64_t g = 1;
    for (int d = 0; d < s.size(); ++d)
      if (mask[d]) {
        order.push_back(d);
        moved.push_back(s[d]);
        g *= s[d];
      }
    for (int d = 0; d < s.size(); ++d)
      if (!mask[d]) {
        order.push_back(d);
        moved.push_back(s[d]);
      }
    const std::int64_t r = g == 0 ? 0 : x.numel() / g;
    std::vector<Tensor<T>> up{reshape(permute(x, order), Shape{g, r})};
    while (up.back().shape()[0] > 1) {
      const auto [a, b] = halves(up.back());
      up.push_back(mul(a, b));
    }
    Tensor<T> down = Tensor<T>::ones(up.back().shape(), x.device());
    for (std::size_t k = up.size() - 1; k-- > 0;) {
      const auto [a, b] = halves(up[k]);
      const std::int64_t n = up[k].shape()[0];
      down = concat<T>({mul(down, b), slice(mul(down, a), 0, 0, n - (n + 1) / 2)}, 0);
    }
    Shape inverse;
    inverse.resize(order.size());
    for (int i = 0; i < order.size(); ++i) inverse[static_cast<int>(order[i])] = i;
    return permute(reshape(down, moved), inverse);
  }
  // The first ceil(n / 2) rows of v (n x r) and the rest, padded with a row of ones to as many.
  template <class T>
  static std::pair<Tensor<T>, Tensor<T>> halves(const Tensor<T>& v) {
    const std::int64_t n = v.shape()[0], n1 = (n + 1) / 2;
    Tensor<T> b = slice(v, 0, n1, n);
    if (n - n1 < n1) b = concat<T>({b, Tensor<T>::ones({1, v.shape()[1]}, v.device())}, 0);
    return {slice(v, 0, 0, n1), b};
  }
};

}  // namespace ops

template <Floating T>
Tensor<T> prod(const Tensor<T>& x, const std::vector<std::int64_t>& axes, bool keepdim) {
  detail::check_defined("prod", x);
  return detail::apply(ops::Prod{detail::axis_mask(axes, x, "prod"), keepdim}, x);
}

template <Floating T>
Tensor<T> prod(const Tensor<T>& x) {
  detail::check_defined("prod", x);
  return detail::apply(ops::Prod{detail::all_axes(x.dim()), false}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_PROD(T)                                                            \
  TENAX_INSTANCE Tensor<T> prod(const Tensor<T>&, const std::vector<std::int64_t>&, bool); \
  TENAX_INSTANCE Tensor<T> prod(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_PROD)

}  // namespace tenax
