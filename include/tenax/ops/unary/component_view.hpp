#pragma once
// The real or imaginary part of a complex tensor as a view of the same storage: element strides
// double and the offset points at the chosen component.
#include "tenax/core/tensor_impl.hpp"

namespace tenax::detail {

inline ImplPtr component_view(const TensorImpl& x, int part) {
  Strides st = x.strides;
  for (auto& s : st) s *= 2;
  ImplPtr v = make_view_impl(x, x.shape, st, 2 * x.offset + part);
  v->dtype = x.dtype == DType::C64 ? DType::F32 : DType::F64;
  // Another value, also where the view's geometry is x's (a 0-d real part: strides and offset 0),
  // which make_view_impl would take for a shallow copy standing for the same traced value.
  v->trace_id = 0;
  return v;
}

}  // namespace tenax::detail
