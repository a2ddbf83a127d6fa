#pragma once
// Internal to the Eigen provider (src/cpu/provider_eigen*.cpp): Eigen map types and the argument
// checks shared by its routines.
// The Eigen provider: every CPU kernel on Eigen 3.4 alone (no BLAS/LAPACK).
//
// Each LAPACK routine keeps LAPACK's contract, so code above the provider cannot tell which
// provider it runs on (except for rounding, and for the phase of eigen/singular vectors):
//   - getrf is LAPACK's recursive getrf2 (Eigen trsm + gemm on the blocks) with an unblocked
//     getf2 leaf: the same pivots (first index maximizing |x|, or |Re| + |Im| for complex, like
//     i?amax), the same 1-based ipiv and the same info (first exact zero on U's diagonal; the
//     factorization goes on).
//   - potrf is a blocked right-looking Cholesky that reads and writes only the uplo triangle and
//     stops like potf2 at the first leading minor that is not positive (or NaN), info = its order.
//   - geqrf / orgqr are LAPACK's geqrf / orgqr (larfg, larft, larfb, geqr2, org2r) written with
//     Eigen block operations: the reflectors and tau are LAPACK's (beta = -sign(Re alpha) * norm,
//     real R diagonal), so either provider's orgqr can read them.
//   - syevd / gesdd use SelfAdjointEigenSolver / BDCSVD on a copy of A; NoConvergence (and, for
//     gesdd, an infinite entry) is reported as info 1; like LAPACK's gesdd, a NaN entry in A is
//     an argument error. A is left as it was (LAPACK destroys it), except by gesdd's jobz 'O'.
// Arguments LAPACK would reject raise an internal tenax::Error with LAPACKE's argument number,
// exactly like the CBLAS provider.
#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>

#include "../workspace.hpp"
#include "tenax/backend/cpu_provider.hpp"
#include "tenax/core/error.hpp"

namespace tenax::cpu {
namespace {

using Eigen::Index;

template <class T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
template <class T>
using RowMajorMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using Vec = Eigen::Matrix<T, Eigen::Dynamic, 1>;
template <class T>
using RowVec = Eigen::Matrix<T, 1, Eigen::Dynamic>;
template <class T>
using CMap = Eigen::Map<const Mat<T>, 0, Eigen::OuterStride<>>;
template <class T>
using MMap = Eigen::Map<Mat<T>, 0, Eigen::OuterStride<>>;
template <class T>
using VMap = Eigen::Map<Vec<T>>;
template <class T>
using CVMap = Eigen::Map<const Vec<T>>;

template <class T>
MMap<T> mmap(T* p, Index rows, Index cols, Index ld) {
  return MMap<T>(p, rows, cols, Eigen::OuterStride<>(ld));
}
template <class T>
CMap<T> cmap(const T* p, Index rows, Index cols, Index ld) {
  return CMap<T>(p, rows, cols, Eigen::OuterStride<>(ld));
}

// A LAPACK argument error: a tenax bug, raised like the CBLAS provider raises LAPACKE's info
// (LAPACKE numbers the arguments from its matrix_layout, one past Fortran's numbering).
[[maybe_unused]] void check_arg(bool ok, const char* routine, int fortran_arg) {
  TENAX_CHECK(ok, routine, "internal error: LAPACK rejected argument ", fortran_arg + 1);
}
[[maybe_unused]] bool ld_ok(std::int64_t ld, std::int64_t rows) { return ld >= std::max<std::int64_t>(1, rows); }

template <class T>
T conj_of(const T& x) {
  return Eigen::numext::conj(x);
}

}  // namespace
}  // namespace tenax::cpu
