#pragma once
// prod over chosen axes or everything.
#include <vector>

#include "tenax/ad/apply.hpp"
#include "tenax/kernels/reduce.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/reduce/sum.hpp"

namespace tenax {
namespace ops {

struct Prod {
  static constexpr const char* name = "prod";
  static constexpr bool one_kernel = true;  // forward is one captured kernel call (kernels/capture.hpp)
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
  // P is exact with zeros: where x_i = 0, P_i = (product of the group's nonzero entries) times
  // (product of its other zeros): the first factor alone when x_i is the only zero; times the
  // other zero x_l (= sum of the group's zero entries - x_i) when there are two, which is 0 but
  // carries the derivative d P_i = (prod of nonzeros) dx_l, so Hessians are exact too; 0 with
  // three or more (value and derivative). Elsewhere P_i = y / x_i (y is 0 if the group has a
  // zero). Every division is by a nonzero value, so no inf/NaN enters the (higher) derivatives.
  template <class C>
  auto jvp(const C& c) const {
    auto P = others(c.x0(), c.y0());
    return detail::apply(Sum{mask, keepdim}, mul(P, c.dx0()));
  }
  template <class C>
  auto vjp(const C& c) const {
    auto P = others(c.x0(), c.y0());
    return mul(conj(P), expand(reshape(c.gy0(), kshape(c.x0())), c.x0().shape()));
  }

 private:
  Shape kshape(const auto& x) const { return detail::reduced_shape(x.shape(), mask, true); }
  template <class T>
  Tensor<T> others(const Tensor<T>& x, const Tensor<T>& y) const {
    const Shape& s = x.shape();
    auto zero = Tensor<T>::zeros({}, x.device()), one = Tensor<T>::ones({}, x.device());
    auto is0 = eq(x, zero);
    auto nonzero_prod = expand(detail::apply(Prod{mask, true}, where(is0, one, x)), s);
    auto zeros = expand(detail::apply(Sum{mask, true}, cast<T>(is0)), s);
    auto yk = expand(reshape(y, kshape(x)), s);
    auto other_zero = sub(expand(detail::apply(Sum{mask, true}, where(is0, x, zero)), s), x);
    auto at_zero = where(eq(zeros, one), nonzero_prod,
                         where(eq(zeros, Tensor<T>::full({}, T(2), x.device())), mul(nonzero_prod, other_zero), zero));
    return where(is0, at_zero, div(yk, where(is0, one, x)));
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

}  // namespace tenax
