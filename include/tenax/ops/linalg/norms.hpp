#pragma once
// Norms (torch.linalg's): vector_norm over chosen axes, matrix_norm of each matrix of a batch,
// norm dispatching between them, and cond. Written with public ops, so they run on every device,
// in both AD modes, to any order and in prepared programs; the results are real.
//
// Derivatives follow PyTorch where a norm is not differentiable: a zero subgradient, never NaN.
// The 2-norm's square root and a p-norm's powers see a safe operand where the sum (or the entry)
// is zero (where(s > 0, f(where(s > 0, s, 1)), 0)), so the derivative there is 0; the inf and
// -inf norms and the spectral norms share the derivative evenly among ties (max/min); ord 0 counts
// nonzeros and has no derivative.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "tenax/core/instances.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/solve.hpp"
#include "tenax/ops/linalg/svd.hpp"
#include "tenax/ops/reduce/extremum.hpp"
#include "tenax/ops/reduce/sum.hpp"

namespace tenax {
namespace linalg {
namespace detail_norms {

// f(s) where s > 0, else 0, with f evaluated on a safe operand (1) there.
template <class R>
Tensor<R> where_positive(const Tensor<R>& s, auto&& f) {
  const Tensor<R> zero = Tensor<R>::scalar(R(0), s.device());
  const Tensor<bool> pos = gt(s, zero);
  return where(pos, f(where(pos, s, Tensor<R>::scalar(R(1), s.device()))), zero);
}

inline std::string ord_str(double ord) {
  if (std::isinf(ord)) return ord > 0 ? "inf" : "-inf";
  std::string s = std::to_string(ord);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

}  // namespace detail_norms

// The ord-norm of x over `axes` (all axes when empty), torch.linalg.vector_norm: ord 2 (default),
// any real p != 0 ((sum |x|^p)^(1/p)), inf (max |x|), -inf (min |x|) and 0 (the number of nonzero
// entries). keepdim keeps the reduced axes with size 1. Real result for real and complex x.
template <Floating T>
RealTensor<T> vector_norm(const Tensor<T>& x, double ord = 2.0, const std::vector<std::int64_t>& axes = {},
                          bool keepdim = false) {
  using R = real_t<T>;
  tenax::detail::check_defined("vector_norm", x);
  TENAX_CHECK(!std::isnan(ord), "vector_norm", "ord is NaN (", dtype_traits<T>::name, " ", x.shape(), " on ",
              x.device().str(), ")");
  std::vector<std::int64_t> ax = axes;
  if (ax.empty())
    for (int d = 0; d < x.dim(); ++d) ax.push_back(d);
  const Tensor<R> a = abs(x);
  if (std::isinf(ord)) {
    const auto mask = tenax::detail::axis_mask(ax, x, "vector_norm");
    for (int d = 0; d < x.dim(); ++d)
      TENAX_CHECK(!mask[d] || x.shape()[d] > 0, "vector_norm", "ord ", detail_norms::ord_str(ord),
                  " over an empty dimension of ", x.shape(), " (", dtype_traits<T>::name, " on ", x.device().str(),
                  ")");
    return ord > 0 ? max(a, ax, keepdim) : min(a, ax, keepdim);
  }
  if (ord == 0) return sum(cast<R>(ne(a, Tensor<R>::scalar(R(0), x.device()))), ax, keepdim);
  if (ord == 1) return sum(a, ax, keepdim);
  if (ord == 2)
    return detail_norms::where_positive(sum(square(a), ax, keepdim), [](const Tensor<R>& s) { return sqrt(s); });
  const R p = static_cast<R>(ord);
  if (ord < 0) return pow(sum(pow(a, p), ax, keepdim), R(1) / p);  // a zero entry makes the sum inf, the norm 0
  const Tensor<R> ap = detail_norms::where_positive(a, [p](const Tensor<R>& v) { return pow(v, p); });
  return detail_norms::where_positive(sum(ap, ax, keepdim), [p](const Tensor<R>& s) { return pow(s, R(1) / p); });
}

// The norm of each matrix (axes 0 and 1) of A, torch.linalg.matrix_norm: "fro" (default) and
// "nuc" (the sum of the singular values).
template <Floating T>
RealTensor<T> matrix_norm(const Tensor<T>& A, std::string_view ord = "fro", bool keepdim = false) {
  using R = real_t<T>;
  tenax::detail::check_matrix("matrix_norm", A);
  Tensor<R> r;
  if (ord == "fro") {
    r = vector_norm(A, 2.0, {0, 1}, false);
  } else if (ord == "nuc") {
    r = sum(svdvals(A), {0}, false);
  } else {
    tenax::detail::fail("matrix_norm", "ord \"", ord, "\" is not one of \"fro\", \"nuc\" or a number (",
                        dtype_traits<T>::name, " ", A.shape(), " on ", A.device().str(), ")");
  }
  return keepdim ? reshape(r, tenax::detail::with_batch(1, 1, r.shape())) : r;
}

// The induced norms of each matrix of A: 1 and -1 (max and min column sum of |a_ij|), inf and
// -inf (max and min row sum), 2 and -2 (the largest and smallest singular value).
template <Floating T>
RealTensor<T> matrix_norm(const Tensor<T>& A, double ord, bool keepdim = false) {
  using R = real_t<T>;
  tenax::detail::check_matrix("matrix_norm", A);
  const bool ok = ord == 1 || ord == -1 || ord == 2 || ord == -2 || std::isinf(ord);
  TENAX_CHECK(ok, "matrix_norm", "ord ", detail_norms::ord_str(ord),
              " is not one of 1, -1, 2, -2, inf, -inf, \"fro\" or \"nuc\" (", dtype_traits<T>::name, " ", A.shape(),
              " on ", A.device().str(), ")");
  TENAX_CHECK(A.shape()[0] > 0 && A.shape()[1] > 0, "matrix_norm", "ord ", detail_norms::ord_str(ord),
              " of empty matrices ", A.shape(), " (", dtype_traits<T>::name, " on ", A.device().str(), ")");
  const bool largest = ord > 0;
  Tensor<R> per;  // the candidates, reduced over axis 0 below
  if (ord == 2 || ord == -2)
    per = svdvals(A);  // k x batch
  else
    per = vector_norm(A, 1.0, {std::isinf(ord) ? 1 : 0}, false);  // column sums (n x batch) or row sums (m x batch)
  const Tensor<R> r = largest ? max(per, {0}, false) : min(per, {0}, false);
  return keepdim ? reshape(r, tenax::detail::with_batch(1, 1, r.shape())) : r;
}

// torch.linalg.norm: the 2-norm of all of x (of a matrix: its Frobenius norm), or with ord the
// vector norm of a vector and the matrix norm of (each matrix of) a matrix batch.
template <Floating T>
RealTensor<T> norm(const Tensor<T>& x) {
  return vector_norm(x, 2.0);
}
template <Floating T>
RealTensor<T> norm(const Tensor<T>& x, double ord) {
  tenax::detail::check_defined("norm", x);
  return x.dim() <= 1 ? vector_norm(x, ord) : matrix_norm(x, ord);
}
template <Floating T>
RealTensor<T> norm(const Tensor<T>& x, std::string_view ord) {
  return matrix_norm(x, ord);
}

// The condition number of each matrix of A in the ord-norm (torch.linalg.cond): for 2 and -2 the
// ratio of the extreme singular values (any shape; inf for a singular matrix with ord 2),
// otherwise norm(A) norm(A^-1) (square, invertible A).
template <Floating T>
RealTensor<T> cond(const Tensor<T>& A, double ord = 2.0) {
  tenax::detail::check_matrix("cond", A);
  if (ord == 2 || ord == -2) {
    const auto s = svdvals(A);
    const auto hi = max(s, {0}, false), lo = min(s, {0}, false);
    return ord > 0 ? div(hi, lo) : div(lo, hi);
  }
  tenax::detail::check_square("cond", A);
  return mul(matrix_norm(A, ord), matrix_norm(inv(A), ord));
}
template <Floating T>
RealTensor<T> cond(const Tensor<T>& A, std::string_view ord) {
  tenax::detail::check_square("cond", A);
  return mul(matrix_norm(A, ord), matrix_norm(inv(A), ord));
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_NORMS(T)                                                                              \
  TENAX_INSTANCE RealTensor<T> vector_norm(const Tensor<T>&, double, const std::vector<std::int64_t>&, bool); \
  TENAX_INSTANCE RealTensor<T> matrix_norm(const Tensor<T>&, std::string_view, bool);                         \
  TENAX_INSTANCE RealTensor<T> matrix_norm(const Tensor<T>&, double, bool);                                   \
  TENAX_INSTANCE RealTensor<T> norm(const Tensor<T>&);                                                        \
  TENAX_INSTANCE RealTensor<T> norm(const Tensor<T>&, double);                                                \
  TENAX_INSTANCE RealTensor<T> norm(const Tensor<T>&, std::string_view);                                      \
  TENAX_INSTANCE RealTensor<T> cond(const Tensor<T>&, double);                                                \
  TENAX_INSTANCE RealTensor<T> cond(const Tensor<T>&, std::string_view);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_NORMS)

}  // namespace linalg
}  // namespace tenax
