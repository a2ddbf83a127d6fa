// The CPU's triangle_fold (ops/linalg/triangle_fold.hpp): the Hermitian fold or fill of one strict
// triangle of each square matrix as one kernel, which a prepared program captures
// (kernels/capture.hpp), in place of generic::triangle_fold's tensor ops
// (backend/generic_linalg.hpp: an add or two, a conjugate transpose, tril/triu, the diagonal's
// embedding and scaling). Each entry is computed with the operations of those ops, so the two give
// the same bits (test_linalg_generic).
#include <cstdint>
#include <tuple>

#include "cpu_linalg.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/ops/functors.hpp"
#include "tenax/ops/linalg/common.hpp"

namespace tenax::detail {
namespace {

// One n x n matrix x into y (both contiguous).
template <class T>
void fold_one(const T* x, std::int64_t n, bool fold, bool upper, T* y) {
  const auto strict = [upper](std::int64_t i, std::int64_t j) { return upper ? i < j : i > j; };
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t i = 0; i < n; ++i) {
      const T xij = x[i + j * n], xji = x[j + i * n];
      if (fold) {  // triu(S) - Diag(S) * 0.5 with S = X + X^H (tril for the lower triangle)
        const T s = fn::Add{}(xij, fn::conj_of(xji));
        const T kept = (i == j || strict(i, j)) ? s : T(0);
        y[i + j * n] = fn::Sub{}(kept, fn::Mul{}(i == j ? s : T(0), T(0.5)));
      } else {  // (P + P^H) + Re Diag(X) with P the strict triangle of X
        const T p = strict(i, j) ? xij : T(0), ph = fn::conj_of(strict(j, i) ? xji : T(0));
        y[i + j * n] = fn::Add{}(fn::Add{}(p, ph), i == j ? T(std::real(xij)) : T(0));
      }
    }
  }
}

}  // namespace

template <class T>
Tensor<T> CpuLinalg<T>::triangle_fold(const Tensor<T>& X, bool fold, bool upper) const {
  const std::int64_t n = X.shape()[0];
  Tensor<T> Y = Tensor<T>::empty(X.shape());
  if (Y.numel() == 0) return Y;
  const std::int64_t nb = Y.numel() / (n * n);
  auto run = [in = ContiguousRead<T>(X), n, nb, fold, upper](char* const* p) {
    T* y = reinterpret_cast<T*>(p[0]);
    const T* x = in.read(p[1]);
    for (std::int64_t b = 0; b < nb; ++b) fold_one(x + b * n * n, n, fold, upper, y + b * n * n);
  };
  detail::record_kernel_n(run, {Y.impl().get()}, {X.impl().get()});
  return Y;
}

#define TENAX_CPU_FOLD(T) template Tensor<T> CpuLinalg<T>::triangle_fold(const Tensor<T>&, bool, bool) const;
TENAX_CPU_LINALG_FOR_FLOATING(TENAX_CPU_FOLD)

}  // namespace tenax::detail
