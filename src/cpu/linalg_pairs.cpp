// The CPU's inverse_pairs (ops/linalg/spectral.hpp, InversePairs): the 1/gap terms of the eigh,
// SVD and eig rules as one kernel, which a prepared program captures (kernels/capture.hpp), in
// place of generic::inverse_pairs's dozen tensor ops (backend/generic_linalg.hpp). Each entry is
// computed with the operations of those ops (the same functors, the same tolerance), so the two
// give the same bits (test_linalg_generic).
#include <cstdint>
#include <tuple>

#include "cpu_linalg.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/kernels/parallel.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/linalg/common.hpp"

namespace tenax::detail {
namespace {

// The Mask tolerance of one matrix's n values x: rtol max_k |x_k|, NaN when one is (the max
// reduction's fold).
template <class T>
real_t<T> mask_tol(const T* x, std::int64_t n, double rtol) {
  using R = real_t<T>;
  R scale = fn::Abs{}(x[0]);
  for (std::int64_t k = 1; k < n; ++k) scale = fn::Maximum{}(scale, fn::Abs{}(x[k]));
  return scale * static_cast<R>(rtol);
}

// Column j of F and masked (n entries each) of one matrix from its n values x.
template <class T>
void pairs_column(const T* x, std::int64_t n, std::int64_t j, bool sums, bool mask, real_t<T> tol, T* F, bool* masked) {
  for (std::int64_t i = 0; i < n; ++i) {
    const T d = sums ? fn::Add{}(x[j], x[i]) : fn::Sub{}(x[j], x[i]);
    const bool drop = i == j || (mask && fn::Le{}(fn::Abs{}(d), tol));
    F[i] = drop ? T(0) : fn::Div{}(T(1), d);
    masked[i] = i != j && drop;
  }
}

}  // namespace

template <class T>
std::tuple<Tensor<T>, Tensor<bool>> CpuLinalg<T>::inverse_pairs(const Tensor<T>& x, bool sums, bool mask,
                                                                double rtol) const {
  const std::int64_t n = x.shape()[0];
  const Shape shape = with_batch(n, n, Shape(x.shape().begin() + 1, x.shape().end()));
  Tensor<T> F = Tensor<T>::empty(shape);
  Tensor<bool> masked = Tensor<bool>::empty(shape);
  if (F.numel() == 0) return {F, masked};
  const std::int64_t nb = F.numel() / (n * n);
  auto run = [in = ContiguousRead<T>(x), tols = Scratch<real_t<T>>(Shape{mask ? nb : 0}), n, nb, sums, mask,
              rtol](char* const* p) {
    T* f = reinterpret_cast<T*>(p[0]);
    bool* m = reinterpret_cast<bool*>(p[1]);
    const T* v = in.read(p[2]);
    // Column c of the batch (matrix c / n), spread over the pool when there is work enough
    // (kernels/parallel.hpp); the tolerances first, one per matrix.
    if (mask)
      for (std::int64_t b = 0; b < nb; ++b) tols.get()[b] = mask_tol(v + b * n, n, rtol);
    const auto column = [&](std::int64_t c) {
      const std::int64_t b = c / n;
      pairs_column(v + b * n, n, c % n, sums, mask, mask ? tols.get()[b] : real_t<T>(0), f + c * n, m + c * n);
    };
    if (nb * n * n >= cpu::kParallelMinBatchWork)
      cpu::parallel_for(nb * n, column);
    else
      for (std::int64_t c = 0; c < nb * n; ++c) column(c);
  };
  detail::record_kernel_n(run, {F.impl().get(), masked.impl().get()}, {x.impl().get()});
  return {F, masked};
}

#define TENAX_CPU_PAIRS(T) \
  template std::tuple<Tensor<T>, Tensor<bool>> CpuLinalg<T>::inverse_pairs(const Tensor<T>&, bool, bool, double) const;
TENAX_CPU_LINALG_FOR_FLOATING(TENAX_CPU_PAIRS)

}  // namespace tenax::detail
