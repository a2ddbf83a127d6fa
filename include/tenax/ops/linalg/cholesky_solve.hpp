#pragma once
// cholesky_solve: X = A^-1 B from A's Cholesky factor, A = L L^H (lower) or U^H U (upper); batched
// with broadcast batch dimensions. It is the two triangular solves LAPACK's potrs and cuSOLVER's
// potrs make (trsm with the factor, then with its adjoint), written with solve_triangular, so it
// runs on every device, in every AD mode and in prepared programs, and its derivatives (to any
// order) are solve_triangular's.
#include "tenax/core/instances.hpp"
#include "tenax/ops/linalg/solve_triangular.hpp"

namespace tenax {
namespace linalg {

// Solves (L L^H) X = B (upper = false: factor is L, lower) or (U^H U) X = B (upper = true: factor
// is U), with factor as cholesky(A, upper) returns it. Only the factor's selected triangle is read,
// and its gradient lands only there. (PyTorch's torch.cholesky_solve takes B first; tenax keeps
// the factor first, as lu_solve does.)
template <Floating T>
Tensor<T> cholesky_solve(const Tensor<T>& factor, const Tensor<T>& B, bool upper = false) {
  detail::check_square("cholesky_solve", factor, "the factor");
  detail::check_triangular_args("cholesky_solve", factor, B, /*left=*/true);
  if (upper) return solve_triangular(factor, solve_triangular(factor, B, true, true, false, Trans::C), true);
  return solve_triangular(factor, solve_triangular(factor, B, false), false, true, false, Trans::C);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_CHOLESKY_SOLVE(T) \
  TENAX_INSTANCE Tensor<T> cholesky_solve(const Tensor<T>&, const Tensor<T>&, bool);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_CHOLESKY_SOLVE)

}  // namespace linalg
}  // namespace tenax
