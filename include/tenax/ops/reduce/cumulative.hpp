#pragma once
// cumsum and cumprod along one axis (every floating dtype): inclusive scans, one sequential pass
// per line (kernels/lines.hpp), so every device and thread count gives the same bits.
#include <cstdint>

#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/core/like.hpp"
#include "tenax/kernels/lines.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

// y_k = sum_{j <= k} x_j along the axis (reverse: sum_{j >= k}).
struct Cumsum {
  static constexpr const char* name = "cumsum";
  static constexpr bool one_kernel = true;  // forward is one captured kernel call (kernels/capture.hpp)
  static constexpr bool saves_outputs = false;
  int axis;
  bool reverse;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return detail::along_lines<T>(name, x, axis, fn::CumSum{reverse}, true);
  }
  // Linear, y = L x with L the (real) triangle of ones: dy = cumsum(dx); gx = L^T gy, the
  // cumulative sum of gy taken from the other end.
  template <class C>
  auto jvp(const C& c) const {
    return detail::apply(*this, c.dx0());
  }
  template <class C>
  auto vjp(const C& c) const {
    return detail::apply(Cumsum{axis, !reverse}, c.gy0());
  }
};

// y_k = prod_{j <= k} x_j along the axis.
struct Cumprod {
  static constexpr const char* name = "cumprod";
  static constexpr bool one_kernel = true;
  int axis;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return detail::along_lines<T>(name, x, axis, fn::CumProd{}, true);
  }
  // dy_k = sum_{j <= k} A_kj dx_j with A_kj = prod_{i <= k, i != j} x_i, and gx_j = sum_{k >= j}
  // conj(A_kj) gy_k (PyTorch's cumprod_backward, in masks rather than per-line branches):
  // - x_j != 0: A_kj = y_k / x_j (for k past a zero both sides are 0);
  // - x_j the line's first zero: A_kj = y1_k, y1 = cumprod of x with that entry replaced by 1;
  // - x_j a later zero: A_kj = 0 (the product holds the first zero).
  // So dy = y cumsum(dx / x over the non-zeros) + y1 cumsum(dx at the first zero), and
  // gx = rcumsum(gy conj(y)) / conj(x) at the non-zeros, rcumsum(gy conj(y1)) at the first zero,
  // 0 at later zeros (rcumsum: from the end). Nothing divides by a zero. As functions of x both
  // rules are exact wherever a line has at most one zero, so their derivatives are too; with two
  // or more zeros the first derivative is exact, the second misses the terms in which two zeros
  // are both left out of the product.
  template <class C>
  auto jvp(const C& c) const {
    const auto& x = c.x0();
    const Masks<typename std::remove_cvref_t<decltype(x)>::value_type> m(x, axis);
    const auto zero = zeros_like(x);
    const auto r = detail::apply(Cumsum{axis, false}, where(m.zero, zero, div(c.dx0(), m.safe)));
    const auto f = detail::apply(Cumsum{axis, false}, where(m.first, c.dx0(), zero));
    return add(mul(c.y0(), r), mul(m.y1(x), f));
  }
  template <class C>
  auto vjp(const C& c) const {
    const auto& x = c.x0();
    const Masks<typename std::remove_cvref_t<decltype(x)>::value_type> m(x, axis);
    const auto zero = zeros_like(x);
    const auto nz = div(detail::apply(Cumsum{axis, true}, mul(c.gy0(), conj(c.y0()))), conj(m.safe));
    const auto first = detail::apply(Cumsum{axis, true}, mul(c.gy0(), conj(m.y1(x))));
    return where(m.zero, where(m.first, first, zero), nz);
  }

 private:
  // The zeros of x, each line's first zero, x with its zeros replaced by 1 (no derivative flows
  // through the masks: they are comparisons).
  template <class T>
  struct Masks {
    Tensor<bool> zero, first;
    Tensor<T> safe;
    int axis;
    Masks(const Tensor<T>& x, int a) : axis(a) {
      const auto one = ones_like(x);
      zero = eq(x, zeros_like(x));
      const Tensor<T> count = detail::apply(Cumsum{axis, false}, cast<T>(zero));  // zeros up to here
      first = where(zero, eq(count, one), zero);
      safe = where(zero, one, x);
    }
    // cumprod of x with each line's first zero replaced by 1.
    Tensor<T> y1(const Tensor<T>& x) const { return detail::apply(Cumprod{axis}, where(first, ones_like(x), x)); }
  };
};

}  // namespace ops

namespace detail {
template <Floating T, class Make>
Tensor<T> scan(const char* name, const Tensor<T>& x, std::int64_t axis, Make make) {
  check_defined(name, x);
  if (x.dim() == 0) {  // a scalar is its own line (axis 0 or -1)
    wrap_axis(axis, 1, name);
    return reshape(detail::apply(make(0), reshape(x, {1})), Shape{});
  }
  return detail::apply(make(wrap_axis(axis, x, name)), x);
}
}  // namespace detail

// The cumulative sum along `axis`: y_k = x_0 + ... + x_k, summed in index order.
template <Floating T>
Tensor<T> cumsum(const Tensor<T>& x, std::int64_t axis) {
  return detail::scan("cumsum", x, axis, [](int a) { return ops::Cumsum{a, false}; });
}
// The cumulative product along `axis`: y_k = x_0 ... x_k, multiplied in index order.
template <Floating T>
Tensor<T> cumprod(const Tensor<T>& x, std::int64_t axis) {
  return detail::scan("cumprod", x, axis, [](int a) { return ops::Cumprod{a}; });
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_CUMULATIVE(T)                              \
  TENAX_INSTANCE Tensor<T> cumsum(const Tensor<T>&, std::int64_t); \
  TENAX_INSTANCE Tensor<T> cumprod(const Tensor<T>&, std::int64_t);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_CUMULATIVE)

}  // namespace tenax
