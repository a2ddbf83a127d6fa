// The Eigen provider: geev (EigenSolver for real matrices, ComplexEigenSolver for complex ones: a
// Hessenberg reduction and the shifted QR iteration of the Schur form, as LAPACK's geev). The
// eigenvectors are scaled to unit 2-norm; the caller fixes their phases (the backend's contract).
#include "eigen/common.hpp"

namespace tenax::cpu {
namespace {

template <class T>
int eigen_geev(bool vectors, std::int64_t n, T* A, std::int64_t lda, std::complex<real_t<T>>* w,
               std::complex<real_t<T>>* V, std::int64_t ldv) {
  using R = real_t<T>;
  using C = std::complex<R>;
  count_call(Routine::geev);
  if (n == 0) return 0;
  const CMap<T> a(A, n, n, Eigen::OuterStride<>(lda));
  using Solver = std::conditional_t<is_complex_v<T>, Eigen::ComplexEigenSolver<Mat<T>>, Eigen::EigenSolver<Mat<T>>>;
  Solver es(a, vectors);
  if (es.info() != Eigen::Success) return 1;
  for (Index j = 0; j < n; ++j) w[j] = C(es.eigenvalues()(j));
  if (!vectors) return 0;
  const Mat<C> vecs = es.eigenvectors();
  for (Index j = 0; j < n; ++j) {
    const R norm = vecs.col(j).norm();
    for (Index i = 0; i < n; ++i) V[i + j * ldv] = norm > R(0) ? vecs(i, j) / norm : vecs(i, j);
  }
  return 0;
}

}  // namespace

template <>
int geev<float>(bool vectors, std::int64_t n, float* A, std::int64_t lda, std::complex<float>* w,
                std::complex<float>* V, std::int64_t ldv) {
  return eigen_geev<float>(vectors, n, A, lda, w, V, ldv);
}
template <>
int geev<double>(bool vectors, std::int64_t n, double* A, std::int64_t lda, std::complex<double>* w,
                 std::complex<double>* V, std::int64_t ldv) {
  return eigen_geev<double>(vectors, n, A, lda, w, V, ldv);
}
template <>
int geev<std::complex<float>>(bool vectors, std::int64_t n, std::complex<float>* A, std::int64_t lda,
                              std::complex<float>* w, std::complex<float>* V, std::int64_t ldv) {
  return eigen_geev<std::complex<float>>(vectors, n, A, lda, w, V, ldv);
}
template <>
int geev<std::complex<double>>(bool vectors, std::int64_t n, std::complex<double>* A, std::int64_t lda,
                               std::complex<double>* w, std::complex<double>* V, std::int64_t ldv) {
  return eigen_geev<std::complex<double>>(vectors, n, A, lda, w, V, ldv);
}

}  // namespace tenax::cpu
