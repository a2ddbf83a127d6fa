#pragma once
// reshape (column-major element order): a view when the strides allow it, a copy otherwise;
// squeeze, unsqueeze and flatten are reshapes.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax {
namespace detail {

// Strides that view x's elements (column-major order) with `shape`; false when the layout does
// not allow a view. Input dimensions are grouped into chunks that are contiguous with respect to
// each other; every chunk must be split exactly by consecutive output dimensions (the
// column-major mirror of PyTorch's computeStride).
inline bool view_strides(const TensorImpl& x, const Shape& shape, Strides& out) {
  out.resize(shape.size());
  const int ni = x.rank(), no = shape.size();
  int o = 0;
  if (ni == 0) {
    for (; o < no; ++o) out[o] = 1;
    return true;
  }
  std::int64_t base = x.strides[0], tensor_numel = 1, view_numel = 1;
  for (int i = 0; i < ni; ++i) {
    tensor_numel *= x.shape[i];
    const bool chunk_end = i == ni - 1 || (x.shape[i + 1] != 1 && x.strides[i + 1] != tensor_numel * base);
    if (!chunk_end) continue;
    while (o < no && (view_numel < tensor_numel || shape[o] == 1)) {
      out[o] = view_numel * base;
      view_numel *= shape[o];
      ++o;
    }
    if (view_numel != tensor_numel) return false;
    if (i < ni - 1) {
      base = x.strides[i + 1];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  return o == no;
}

}  // namespace detail

namespace ops {

struct Reshape {
  static constexpr const char* name = "reshape";
  static constexpr bool one_kernel = true;  // forward is one captured kernel call (kernels/capture.hpp)
  static constexpr bool saves_outputs = false;
  static constexpr bool batched_jvp = true, batched_vjp = true;  // batched (co)tangents (ad/apply.hpp)
  Shape shape;
  template <class T>
  Tensor<T> forward(const Tensor<T>& x) const {
    Strides st;
    if (x.numel() == 0) return Tensor<T>::empty(shape, x.device());
    if (detail::view_strides(*x.impl(), shape, st))
      return Tensor<T>(detail::make_view_impl(*x.impl(), shape, st, x.offset()));
    Tensor<T> c = Tensor<T>::empty(x.shape(), x.device());
    detail::copy_into(c, x);
    return Tensor<T>(detail::make_view_impl(*c.impl(), shape, col_major_strides(shape), 0));
  }
  // Linear re-indexing: dy = reshape(dx); gx = reshape(gy, x's shape).
  template <class C>
  auto jvp(const C& c) const {
    return reshape(c.dx0(), detail::tangent_shape(shape));
  }
  template <class C>
  auto vjp(const C& c) const {
    return reshape(c.gy0(), detail::tangent_shape(c.x0().shape()));
  }
};

}  // namespace ops

// Reshape in column-major element order. One dimension may be -1 (inferred).
template <Scalar T>
Tensor<T> reshape(const Tensor<T>& x, const Shape& shape_in) {
  detail::check_defined("reshape", x);
  Shape shape = shape_in;
  int infer = -1;
  // known: the product of the given dimensions; span: the same with zeros read as ones, which the
  // strides of an empty result still reach (so there it must fit in int64 byte offsets too).
  std::int64_t known = 1, span = 1;
  for (int i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      TENAX_CHECK(infer < 0, "reshape", "more than one -1 in ", shape_in, " for input ", x.shape(),
                  detail::dtype_on(x));
      infer = i;
    } else {
      TENAX_CHECK(shape[i] >= 0, "reshape", "negative dimension in ", shape_in, " for input ", x.shape(),
                  detail::dtype_on(x));
      const std::int64_t e = std::max<std::int64_t>(shape[i], 1);
      TENAX_CHECK(span <= INT64_MAX / e, "reshape", "shape ", shape_in, " overflows int64 elements",
                  detail::dtype_on(x));
      span *= e;
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    TENAX_CHECK(known != 0 && x.numel() % known == 0, "reshape", "cannot infer -1 in ", shape_in, " for ", x.numel(),
                " elements (input ", x.shape(), ", ", dtype_traits<T>::name, " on ", x.device().str(), ")");
    shape[infer] = x.numel() / known;
  }
  TENAX_CHECK(known != 0 || span <= INT64_MAX / 16, "reshape", "shape ", shape_in, " overflows int64 byte offsets",
              detail::dtype_on(x));
  TENAX_CHECK(numel_of(shape) == x.numel(), "reshape", "shape ", shape_in, " has ", numel_of(shape),
              " elements, input ", x.shape(), " has ", x.numel(), " (", dtype_traits<T>::name, " on ", x.device().str(),
              ")");
  if (shape == x.shape()) return x;
  if constexpr (dtype_traits<T>::is_floating)
    return detail::apply(ops::Reshape{shape}, x);
  else
    return detail::apply_nondiff(ops::Reshape{shape}, x);
}

template <Scalar T>
Tensor<T> squeeze(const Tensor<T>& x, int dim) {
  detail::check_defined("squeeze", x);
  int d = wrap_axis(dim, x, "squeeze");
  TENAX_CHECK(x.shape()[d] == 1, "squeeze", "dimension ", d, " of shape ", x.shape(), " is not 1", detail::dtype_on(x));
  Shape s = x.shape();
  s.erase(d);
  return reshape(x, s);
}

template <Scalar T>
Tensor<T> unsqueeze(const Tensor<T>& x, int dim) {
  detail::check_defined("unsqueeze", x);
  TENAX_CHECK(x.dim() < kMaxRank, "unsqueeze", "rank ", x.dim() + 1, " exceeds the maximum of ", kMaxRank,
              " (input shape ", x.shape(), ", ", dtype_traits<T>::name, " on ", x.device().str(), ")");
  const int r = x.dim() + 1;  // the result's rank: the new axis may go at any of its positions
  TENAX_CHECK(axis_in_range(dim, r), "unsqueeze", "axis ", dim, " out of range for inserting into a ",
              dtype_traits<T>::name, " tensor of shape ", x.shape(), " on ", x.device().str(), " (axes ", -r, " to ",
              r - 1, ")");
  Shape s = x.shape();
  s.insert(wrap_axis(dim, r, "unsqueeze"), 1);
  return reshape(x, s);
}

template <Scalar T>
Tensor<T> flatten(const Tensor<T>& x) {
  detail::check_defined("flatten", x);
  return reshape(x, Shape{x.numel()});
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_RESHAPE(T)                                  \
  TENAX_INSTANCE Tensor<T> reshape(const Tensor<T>&, const Shape&); \
  TENAX_INSTANCE Tensor<T> squeeze(const Tensor<T>&, int);          \
  TENAX_INSTANCE Tensor<T> unsqueeze(const Tensor<T>&, int);        \
  TENAX_INSTANCE Tensor<T> flatten(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_SCALAR, TENAX_INSTANCES_RESHAPE)

}  // namespace tenax
