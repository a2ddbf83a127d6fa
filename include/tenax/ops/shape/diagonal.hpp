#pragma once
// diagonal: the diagonal of dimensions (d0, d1) as a view; diag_embed and diag.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/shape/embed.hpp"

namespace tenax {
namespace ops {

// Removes d0 and d1 and puts the diagonal at position min(d0, d1): for an n x n x batch tensor
// the result is n x batch (matrix dimensions first, batch trailing).
struct Diagonal {
  static constexpr const char* name = "diagonal";
  static constexpr bool saves_outputs = false;
  std::int64_t offset;
  int d0, d1;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    const std::int64_t n0 = x.shape()[d0], n1 = x.shape()[d1];
    const std::int64_t s0 = x.strides()[d0], s1 = x.strides()[d1];
    std::int64_t len, off = x.offset();
    if (offset >= 0) {
      len = std::max<std::int64_t>(0, std::min(n0, n1 - offset));
      if (len > 0) off += offset * s1;
    } else {
      len = std::max<std::int64_t>(0, std::min(n0 + offset, n1));
      if (len > 0) off += -offset * s0;
    }
    Shape s;
    Strides st;
    const int at = std::min(d0, d1);
    for (int d = 0; d < x.dim(); ++d) {
      if (d == at) {
        s.push_back(len);
        st.push_back(s0 + s1);
      }
      if (d == d0 || d == d1) continue;
      s.push_back(x.shape()[d]);
      st.push_back(x.strides()[d]);
    }
    return Tensor<T>(detail::make_view_impl(*x.impl(), s, st, off));
  }
  // Linear: dy = diagonal(dx); gx = embed(gy) (zeros off the diagonal).
  template <class C>
  auto jvp(const C& c) const {
    return detail::apply(*this, c.dx0());
  }
  template <class C>
  auto vjp(const C& c) const {
    return detail::apply(Embed<Diagonal>{*this, c.x0().shape()}, c.gy0());
  }
};

}  // namespace ops

template <Scalar T>
Tensor<T> diagonal(const Tensor<T>& x, std::int64_t offset, int d0, int d1) {
  detail::check_defined("diagonal", x);
  TENAX_CHECK(x.dim() >= 2, "diagonal", "needs rank >= 2, got shape ", x.shape(), detail::dtype_on(x));
  const int a = wrap_axis(d0, x, "diagonal"), b = wrap_axis(d1, x, "diagonal");
  TENAX_CHECK(a != b, "diagonal", "dimensions must differ, got ", d0, " and ", d1, " for shape ", x.shape(),
              detail::dtype_on(x));
  ops::Diagonal op{offset, a, b};
  if constexpr (dtype_traits<T>::is_floating)
    return detail::apply(op, x);
  else
    return detail::apply_nondiff(op, x);
}

// n x batch... -> n x n x batch... with x on the diagonal.
template <Scalar T>
Tensor<T> diag_embed(const Tensor<T>& x) {
  detail::check_defined("diag_embed", x);
  TENAX_CHECK(x.dim() >= 1, "diag_embed", "needs rank >= 1, got shape ", x.shape(), detail::dtype_on(x));
  TENAX_CHECK(x.dim() < kMaxRank, "diag_embed", "the result's rank ", x.dim() + 1, " exceeds the maximum of ", kMaxRank,
              " (", dtype_traits<T>::name, " input of shape ", x.shape(), " on ", x.device().str(), ")");
  Shape full = x.shape();
  full.insert(1, x.shape()[0]);
  ops::Embed<ops::Diagonal> op{{0, 0, 1}, full};
  if constexpr (dtype_traits<T>::is_floating)
    return detail::apply(op, x);
  else
    return detail::apply_nondiff(op, x);
}

// A vector gives the diagonal matrix; a matrix gives its diagonal.
template <Scalar T>
Tensor<T> diag(const Tensor<T>& x) {
  detail::check_defined("diag", x);
  TENAX_CHECK(x.dim() == 1 || x.dim() == 2, "diag", "needs rank 1 or 2, got shape ", x.shape(), detail::dtype_on(x));
  return x.dim() == 1 ? diag_embed(x) : diagonal(x, 0, 0, 1);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_DIAGONAL(T)                                            \
  TENAX_INSTANCE Tensor<T> diagonal(const Tensor<T>&, std::int64_t, int, int); \
  TENAX_INSTANCE Tensor<T> diag_embed(const Tensor<T>&);                       \
  TENAX_INSTANCE Tensor<T> diag(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_SCALAR, TENAX_INSTANCES_DIAGONAL)

}  // namespace tenax
