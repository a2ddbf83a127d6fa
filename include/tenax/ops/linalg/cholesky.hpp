#pragma once
// cholesky: A = L L^H (lower) or A = U^H U (upper) for Hermitian positive definite A.
#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/linalg/batched.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/info_check.hpp"
#include "tenax/ops/linalg/solve_triangular.hpp"
#include "tenax/ops/linalg/triangular_matmul.hpp"

namespace tenax {
namespace ops {

// Outputs: the lower factor L and info. Only A's lower triangle is read.
struct Cholesky {
  static constexpr const char* name = "cholesky";
  static constexpr bool one_kernel = true;  // on the CPU, forward is one captured kernel (kernels/capture.hpp)
  static constexpr bool saves_outputs = true;

  // L (lower, zero above) and info per matrix: a matrix with inf or NaN in its lower triangle has
  // info kNonFiniteInfo, a failed one NaN factors. The device's backend computes it (on the CPU
  // one captured kernel, src/cpu/linalg_cholesky_qr.cpp).
  template <class T>
  std::tuple<Tensor<T>, Tensor<std::int32_t>> forward(const Tensor<T>& A) const {
    return detail::linalg_backend<T>(name, A.device()).cholesky(A);
  }

  // A = L L^H, with dA Hermitian (the returned gA is Hermitian, PyTorch's convention):
  //   dL = L Phi(L^-1 dA L^-H),  Phi(X) = tril(X) - Diag(X)/2
  //   X = tril(L^H gL);  gA = L^-H [ (X + X^H)/2 - ReDiag(X)/2 ] L^-1
  // (docs/MATH.md section 7.)
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>& L = c.y0();
    auto inner = linalg::solve_triangular(L, linalg::solve_triangular(L, c.dx0(), false, false, false, cpu::Trans::C),
                                          false, true);
    auto phi = sub(tril(inner), mul(diag_embed(diagonal(inner)), T(0.5)));
    return std::tuple{linalg::triangular_matmul(L, phi, false), Tensor<std::int32_t>()};
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>& L = c.y0();
    auto X = tril(linalg::triangular_matmul(L, tril(c.gy0()), false, true, false, cpu::Trans::C));
    auto mid = sub(mul(add(X, X.mH()), T(0.5)), mul(diag_embed(cast<T>(real(diagonal(X)))), T(0.5)));
    // L^-H mid L^-1: a left solve with L^H, then a right solve with L.
    auto left = linalg::solve_triangular(L, mid, false, true, false, cpu::Trans::C);
    return linalg::solve_triangular(L, left, false, false);
  }
};

}  // namespace ops

namespace linalg {
namespace detail_cholesky {
template <class T>
std::pair<Tensor<T>, Tensor<std::int32_t>> run(const Tensor<T>& A, bool upper) {
  tenax::detail::check_square("cholesky", A);
  auto [L, info] = tenax::detail::apply(ops::Cholesky{}, upper ? A.mH() : A);
  return {upper ? L.mH() : L, info};
}
}  // namespace detail_cholesky

// Cholesky factor of a Hermitian positive definite A: lower L with A = L L^H, or (upper) U with
// A = U^H U. Reads the lower (upper) triangle only. Throws LinAlgError naming the batch element
// and the order of the first non-positive leading minor.
template <Floating T>
Tensor<T> cholesky(const Tensor<T>& A, bool upper = false) {
  auto [L, info] = detail_cholesky::run(A, upper);
  tenax::detail::raise_info("cholesky", info, A.shape(), dtype_traits<T>::name, [](std::int32_t k) {
    if (k == tenax::detail::kNonFiniteInfo) return std::string(tenax::detail::kNonFiniteMessage);
    return "the matrix is not positive definite: the leading minor of order " + std::to_string(k) + " is not positive";
  });
  return L;
}

// As cholesky with per-matrix info instead of an exception (failed matrices give NaN factors).
template <Floating T>
std::pair<Tensor<T>, Tensor<std::int32_t>> cholesky_ex(const Tensor<T>& A, bool upper = false) {
  return detail_cholesky::run(A, upper);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_CHOLESKY(T)                          \
  TENAX_INSTANCE Tensor<T> cholesky(const Tensor<T>&, bool); \
  TENAX_INSTANCE std::pair<Tensor<T>, Tensor<std::int32_t>> cholesky_ex(const Tensor<T>&, bool);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_CHOLESKY)

}  // namespace linalg
}  // namespace tenax
