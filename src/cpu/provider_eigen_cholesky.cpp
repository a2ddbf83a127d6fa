// The Eigen provider: potrf.
#include "eigen/common.hpp"

namespace tenax::cpu {
namespace {

// ---- Cholesky --------------------------------------------------------------------------------

// Unblocked lower Cholesky (potf2) of the lower triangle of a. Returns -1, or the 0-based column
// whose leading minor is not positive (or NaN); its diagonal then holds that value, like LAPACK.
template <class M>
Index potf2_lower(M& a) {
  using T = typename M::Scalar;
  using R = real_t<T>;
  const Index n = a.rows();
  for (Index j = 0; j < n; ++j) {
    R ajj = Eigen::numext::real(a(j, j));
    if (j > 0) ajj -= a.row(j).head(j).squaredNorm();
    if (!(ajj > R(0))) {
      a(j, j) = T(ajj);
      return j;
    }
    ajj = std::sqrt(ajj);
    a(j, j) = T(ajj);
    const Index rs = n - j - 1;
    if (rs > 0) {
      if (j > 0) a.col(j).tail(rs).noalias() -= a.bottomLeftCorner(rs, j) * a.row(j).head(j).adjoint();
      a.col(j).tail(rs) *= T(R(1) / ajj);
    }
  }
  return -1;
}

// Blocked right-looking lower Cholesky; reads and writes only the lower triangle of a.
template <class M>
Index potrf_lower(M& a) {
  using T = typename M::Scalar;
  constexpr Index kBlock = 64;
  const Index n = a.rows();
  if (n <= kBlock) return potf2_lower(a);
  for (Index k = 0; k < n; k += kBlock) {
    const Index bs = std::min(kBlock, n - k), rs = n - k - bs;
    auto a11 = a.block(k, k, bs, bs);
    const Index r = potf2_lower(a11);
    if (r >= 0) return k + r;
    if (rs > 0) {
      auto a21 = a.block(k + bs, k, rs, bs);
      auto a22 = a.block(k + bs, k + bs, rs, rs);
      // L21 = A21 L11^-H, A22 -= L21 L21^H (lower triangle only)
      a11.adjoint().template triangularView<Eigen::Upper>().template solveInPlace<Eigen::OnTheRight>(a21);
      a22.template selfadjointView<Eigen::Lower>().rankUpdate(a21, T(-1));
    }
  }
  return -1;
}

template <class T>
int eigen_potrf(Uplo uplo, std::int64_t n, T* A, std::int64_t lda) {
  count_call(Routine::potrf);
  if (n == 0) return 0;
  check_arg(n >= 0, "potrf", 2);
  check_arg(ld_ok(lda, n), "potrf", 4);
  Index r;
  if (uplo == Uplo::Lower) {
    MMap<T> a = mmap(A, n, n, lda);
    r = potrf_lower(a);
  } else {
    // The row-major view B = A^T: B's lower triangle is conj(A_H)'s lower triangle (A_H the
    // Hermitian matrix), whose Cholesky factor conj(L) = (L^H)^T puts U = L^H in A's upper triangle.
    Eigen::Map<RowMajorMat<T>, 0, Eigen::OuterStride<>> b(A, n, n, Eigen::OuterStride<>(lda));
    r = potrf_lower(b);
  }
  return r < 0 ? 0 : static_cast<int>(r + 1);
}

}  // namespace

template <>
int potrf<float>(Uplo uplo, std::int64_t n, float* A, std::int64_t lda) {
  return eigen_potrf<float>(uplo, n, A, lda);
}
template <>
int potrf<double>(Uplo uplo, std::int64_t n, double* A, std::int64_t lda) {
  return eigen_potrf<double>(uplo, n, A, lda);
}
template <>
int potrf<std::complex<float>>(Uplo uplo, std::int64_t n, std::complex<float>* A, std::int64_t lda) {
  return eigen_potrf<std::complex<float>>(uplo, n, A, lda);
}
template <>
int potrf<std::complex<double>>(Uplo uplo, std::int64_t n, std::complex<double>* A, std::int64_t lda) {
  return eigen_potrf<std::complex<double>>(uplo, n, A, lda);
}

}  // namespace tenax::cpu
