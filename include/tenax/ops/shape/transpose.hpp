#pragma once
// permute / transpose: views that reorder dimensions (no copy).
#include <algorithm>

#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Permute {
  static constexpr const char* name = "permute";
  static constexpr bool saves_outputs = false;
  static constexpr bool batched_jvp = true, batched_vjp = true;  // batched (co)tangents (ad/apply.hpp)
  Shape order;                                                   // output dimension i is input dimension order[i]
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    Shape s, st;
    for (auto d : order) {
      s.push_back(x.shape()[static_cast<int>(d)]);
      st.push_back(x.strides()[static_cast<int>(d)]);
    }
    return Tensor<T>(detail::make_view_impl(*x.impl(), s, st, x.offset()));
  }
  Shape inverse() const {
    Shape inv;
    inv.resize(order.size());
    for (int i = 0; i < order.size(); ++i) inv[static_cast<int>(order[i])] = i;
    return inv;
  }
  // A permutation is linear and orthogonal: dy = permute(dx); gx = permute(gy, inverse order).
  template <class C>
  auto jvp(const C& c) const {
    return permute(c.dx0(), extended(order, c.dx0().dim()));
  }
  template <class C>
  auto vjp(const C& c) const {
    return permute(c.gy0(), extended(inverse(), c.gy0().dim()));
  }
  // A batched (co)tangent's padding and directions stay in place (ad/apply.hpp).
  static Shape extended(Shape o, int rank) {
    while (o.size() < rank) o.push_back(o.size());
    return o;
  }
};

}  // namespace ops

template <Scalar T>
Tensor<T> permute(const Tensor<T>& x, const Shape& order) {
  detail::check_defined("permute", x);
  const int r = x.dim();
  TENAX_CHECK(order.size() == r, "permute", "order ", order, " does not match rank ", r, " of shape ", x.shape(),
              detail::dtype_on(x));
  Shape norm;
  std::array<bool, kMaxRank> seen{};
  for (auto d : order) {
    int a = wrap_axis(d, x, "permute");
    TENAX_CHECK(!seen[a], "permute", "order ", order, " repeats dimension ", a, " of shape ", x.shape(),
                detail::dtype_on(x));
    seen[a] = true;
    norm.push_back(a);
  }
  if constexpr (dtype_traits<T>::is_floating)
    return detail::apply(ops::Permute{norm}, x);
  else
    return detail::apply_nondiff(ops::Permute{norm}, x);
}

template <Scalar T>
Tensor<T> transpose(const Tensor<T>& x, int d0, int d1) {
  detail::check_defined("transpose", x);
  const int r = x.dim();
  // Below rank 2 there is nothing to swap: any two axes of a matrix (-2 to 1) leave x as it is, so
  // a vector is its own transpose, as transpose(0, 1) and transpose(0, 0) alike.
  if (r < 2) {
    TENAX_CHECK(axis_in_range(d0, 2) && axis_in_range(d1, 2), "transpose", "axes ", d0, " and ", d1,
                " out of range for shape ", x.shape(), detail::dtype_on(x));
    return x;
  }
  Shape order;
  for (int i = 0; i < r; ++i) order.push_back(i);
  std::swap(order[wrap_axis(d0, x, "transpose")], order[wrap_axis(d1, x, "transpose")]);
  return permute(x, order);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_TRANSPOSE(T)                                \
  TENAX_INSTANCE Tensor<T> permute(const Tensor<T>&, const Shape&); \
  TENAX_INSTANCE Tensor<T> transpose(const Tensor<T>&, int, int);
TENAX_DECLARE_INSTANCES(TENAX_FOR_SCALAR, TENAX_INSTANCES_TRANSPOSE)

}  // namespace tenax
