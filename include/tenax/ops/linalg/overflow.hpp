#pragma once
// Solutions that overflowed. At a subnormal pivot (or a huge right-hand side) X = A^-1 B holds inf
// where the exact entry is merely larger than the largest float; a rule that multiplies X by
// another matrix then meets inf * 0 = NaN in entries whose exact value is finite (0 * huge = 0).
// The solve rules detect this where the host reads X at once and take forms that do not.
#include "tenax/kernels/dispatch.hpp"
#include "tenax/ops/binary/compare.hpp"
#include "tenax/ops/binary/where.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/matmul.hpp"
#include "tenax/ops/unary/isfinite.hpp"

namespace tenax {
namespace detail {

// Whether X holds inf or NaN where the host reads it at once (the host form of a
// kernels/dispatch.hpp slot); false on a device (the generic form), whose values a rule would have
// to wait for: there the plain forms stay.
template <class T>
bool nonfinite_now(const Tensor<T>& X) {
  if (X.numel() == 0) return false;
  const Tensor<T> c = X.contiguous();
  return !all_finite(c.data(), c.numel());
}
template <class T>
bool nonfinite_unknown(const Tensor<T>&) {
  return false;
}
template <class T>
bool nonfinite_on_host(const Tensor<T>& X) {
  return dispatch<&nonfinite_now<T>, &nonfinite_unknown<T>>(X.device(), X);
}

// M X (left) or X M (right) with X's non-finite entries taken as huge finite numbers: an entry of
// the product is X's finite part's product where no nonzero of M meets a non-finite entry of X
// (exactly the limit: those terms are 0 * huge), and the plain IEEE product (inf or NaN) where one
// does. Recorded public ops, so differentiable again (the choice is piecewise constant); in the
// entries that meet an overflowed one (inf or NaN themselves) M is not differentiated, whose
// derivative there would be 0 * inf.
template <class T>
Tensor<T> matmul_past_overflow(const Tensor<T>& M, const Tensor<T>& X, bool left) {
  using R = real_t<T>;
  const Tensor<bool> finite = isfinite(X);
  const Tensor<T> zero = Tensor<T>::zeros({}, X.device());
  const Tensor<R> r0 = Tensor<R>::zeros({}, X.device()), r1 = Tensor<R>::ones({}, X.device());
  const Tensor<T> Xf = where(finite, X, zero);
  const Tensor<R> nz = where(ne(M, zero), r1, r0), bad = where(finite, r0, r1);
  const Tensor<bool> hit = gt(left ? matmul(nz, bad) : matmul(bad, nz), r0);
  const Tensor<T> Mc = M.detach();
  return left ? where(hit, matmul(Mc, X), matmul(M, Xf)) : where(hit, matmul(X, Mc), matmul(Xf, M));
}

}  // namespace detail
}  // namespace tenax
