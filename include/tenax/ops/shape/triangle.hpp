#pragma once
// tril / triu: keep the lower (upper) triangle from diagonal k of each matrix, zero the rest.
#include <algorithm>

#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/dispatch.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace ops {

struct Triangle {
  static constexpr const char* name = "tril/triu";
  static constexpr bool one_kernel = true;  // forward is one captured kernel call (kernels/capture.hpp)
  static constexpr bool saves_outputs = false;
  bool lower;
  std::int64_t k;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    return detail::dispatch<&Triangle::host<T>, &Triangle::generic<T>>(x.device(), *this, x);
  }
  // One kernel, which a prepared program captures: per column, the kept rows [lo, hi) copied and
  // the others zeroed (a contiguous x is read directly; any other layout is copied first).
  template <class T>
  static Tensor<T> host(const Triangle& op, const Tensor<T>& x) {
    Tensor<T> out = Tensor<T>::empty(x.shape(), x.device());
    const std::int64_t m = x.shape()[0], n = x.shape()[1], batch = m * n != 0 ? out.numel() / (m * n) : 0;
    // k clamped to [-m, n] keeps the same rows and keeps j - k from overflowing.
    auto run = [copy = detail::copy_kernel<T, T>(*out.impl(), *x.impl()), dense = x.is_contiguous(), lower = op.lower,
                k = std::clamp<std::int64_t>(op.k, -m, n), m, n, batch](char* const* p) {
      const bool read = dense && p[0] != p[1];
      if (!dense) copy(p[0], p[1]);
      T* q = reinterpret_cast<T*>(p[0]);
      const T* s = reinterpret_cast<const T*>(p[1]);
      for (std::int64_t b = 0; b < batch; ++b, q += m * n, s += m * n)
        for (std::int64_t j = 0; j < n; ++j) {
          // lower keeps i >= j - k, upper keeps i <= j - k
          const std::int64_t lo = lower ? std::clamp<std::int64_t>(j - k, 0, m) : 0;
          const std::int64_t hi = lower ? m : std::clamp<std::int64_t>(j - k + 1, 0, m);
          T* c = q + j * m;
          std::fill(c, c + lo, T(0));
          if (read) std::copy(s + j * m + lo, s + j * m + hi, c + lo);
          std::fill(c + hi, c + m, T(0));
        }
    };
    detail::record_kernel(run, out, x);
    return out;
  }
  // A copy, then the backend's kernel.
  template <class T>
  static Tensor<T> generic(const Triangle& op, const Tensor<T>& x) {
    Tensor<T> out = Tensor<T>::empty(x.shape(), x.device());
    const std::int64_t m = x.shape()[0], n = x.shape()[1], batch = m * n != 0 ? out.numel() / (m * n) : 0;
    const detail::DeviceKernels& kernels = *detail::backend_for(name, out.device()).kernels;
    detail::copy_into(out, x);
    if (batch > 0)
      kernels.zero_triangle(out.device().index, op.lower, op.k, m, n, batch, out.impl()->data(), sizeof(T));
    return out;
  }
  // A projection (linear and self-adjoint): dy = P(dx); gx = P(gy).
  template <class C>
  auto jvp(const C& c) const {
    return detail::apply(*this, c.dx0());
  }
  template <class C>
  auto vjp(const C& c) const {
    return detail::apply(*this, c.gy0());
  }
};

}  // namespace ops

template <Scalar T>
Tensor<T> tril(const Tensor<T>& x, std::int64_t k) {
  detail::check_defined("tril", x);
  TENAX_CHECK(x.dim() >= 2, "tril", "needs rank >= 2, got shape ", x.shape(), detail::dtype_on(x));
  detail::check_kernel_device("tril", x.device());
  if constexpr (dtype_traits<T>::is_floating)
    return detail::apply(ops::Triangle{true, k}, x);
  else
    return detail::apply_nondiff(ops::Triangle{true, k}, x);
}

template <Scalar T>
Tensor<T> triu(const Tensor<T>& x, std::int64_t k) {
  detail::check_defined("triu", x);
  TENAX_CHECK(x.dim() >= 2, "triu", "needs rank >= 2, got shape ", x.shape(), detail::dtype_on(x));
  detail::check_kernel_device("triu", x.device());
  if constexpr (dtype_traits<T>::is_floating)
    return detail::apply(ops::Triangle{false, k}, x);
  else
    return detail::apply_nondiff(ops::Triangle{false, k}, x);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_TRIANGLE(T)                              \
  TENAX_INSTANCE Tensor<T> tril(const Tensor<T>&, std::int64_t); \
  TENAX_INSTANCE Tensor<T> triu(const Tensor<T>&, std::int64_t);
TENAX_DECLARE_INSTANCES(TENAX_FOR_SCALAR, TENAX_INSTANCES_TRIANGLE)

}  // namespace tenax
