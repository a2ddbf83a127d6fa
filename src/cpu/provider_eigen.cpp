// The Eigen provider (TENAX_PROVIDER=eigen): its name and the BLAS routines gemm, trsm and trmm.
// The LAPACK routines live in provider_eigen_*.cpp, one file each, so they compile in parallel.
#include <type_traits>

#include "eigen/common.hpp"
#include "scaled_trsm.hpp"

namespace tenax::cpu {
namespace {

// ---- BLAS ------------------------------------------------------------------------------------

template <class T>
void eigen_gemm(Trans ta, Trans tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* A,
                std::int64_t lda, const T* B, std::int64_t ldb, T beta, T* C, std::int64_t ldc) {
  count_call(Routine::gemm);
  MMap<T> c(C, m, n, Eigen::OuterStride<>(ldc));
  if (beta == T(0))
    c.setZero();
  else if (beta != T(1))
    c *= beta;
  if (k == 0 || m == 0 || n == 0) return;
  CMap<T> a(A, ta == Trans::N ? m : k, ta == Trans::N ? k : m, Eigen::OuterStride<>(lda));
  CMap<T> b(B, tb == Trans::N ? k : n, tb == Trans::N ? n : k, Eigen::OuterStride<>(ldb));
  auto apply_b = [&](const auto& opa) {
    switch (tb) {
      case Trans::N:
        c.noalias() += alpha * opa * b;
        break;
      case Trans::T:
        c.noalias() += alpha * opa * b.transpose();
        break;
      case Trans::C:
        c.noalias() += alpha * opa * b.adjoint();
        break;
    }
  };
  switch (ta) {
    case Trans::N:
      apply_b(a);
      break;
    case Trans::T:
      apply_b(a.transpose());
      break;
    case Trans::C:
      apply_b(a.adjoint());
      break;
  }
}

// Solves in place with the Mode triangle of a (Eigen::Lower/Upper, optionally | UnitDiag).
// Calls f(std::integral_constant<int, Mode>{}) with Eigen's triangular-view mode for (uplo, diag).
template <class F>
void with_triangle_mode(Uplo uplo, Diag diag, F&& f) {
  const bool unit = diag == Diag::Unit;
  if (uplo == Uplo::Lower) {
    if (unit)
      f(std::integral_constant<int, Eigen::UnitLower>{});
    else
      f(std::integral_constant<int, Eigen::Lower>{});
  } else {
    if (unit)
      f(std::integral_constant<int, Eigen::UnitUpper>{});
    else
      f(std::integral_constant<int, Eigen::Upper>{});
  }
}

template <int Mode, class T>
void trsm_solve(Side side, Trans trans, const CMap<T>& a, MMap<T>& b) {
  constexpr int Flip = ((Mode & Eigen::Lower) ? Eigen::Upper : Eigen::Lower) | (Mode & Eigen::UnitDiag);
  if (side == Side::Left) {
    switch (trans) {
      case Trans::N:
        a.template triangularView<Mode>().solveInPlace(b);
        break;
      case Trans::T:
        a.transpose().template triangularView<Flip>().solveInPlace(b);
        break;
      case Trans::C:
        a.adjoint().template triangularView<Flip>().solveInPlace(b);
        break;
    }
  } else {
    switch (trans) {
      case Trans::N:
        a.template triangularView<Mode>().template solveInPlace<Eigen::OnTheRight>(b);
        break;
      case Trans::T:
        a.transpose().template triangularView<Flip>().template solveInPlace<Eigen::OnTheRight>(b);
        break;
      case Trans::C:
        a.adjoint().template triangularView<Flip>().template solveInPlace<Eigen::OnTheRight>(b);
        break;
    }
  }
}

template <class T>
void eigen_trsm_call(Side side, Uplo uplo, Trans trans, Diag diag, std::int64_t m, std::int64_t n, T alpha, const T* A,
                     std::int64_t lda, T* B, std::int64_t ldb) {
  MMap<T> b = mmap(B, m, n, ldb);
  if (alpha == T(0)) {  // BLAS: B = 0 and A is not referenced
    b.setZero();
    return;
  }
  if (alpha != T(1)) b *= alpha;
  const Index k = side == Side::Left ? m : n;
  const CMap<T> a = cmap(A, k, k, lda);
  with_triangle_mode(uplo, diag, [&](auto mode) { trsm_solve<decltype(mode)::value>(side, trans, a, b); });
}

// Eigen's triangular solves multiply by the reciprocal of the diagonal: a subnormal diagonal
// entry goes through scaled_trsm.
template <class T>
void eigen_trsm(Side side, Uplo uplo, Trans trans, Diag diag, std::int64_t m, std::int64_t n, T alpha, const T* A,
                std::int64_t lda, T* B, std::int64_t ldb) {
  count_call(Routine::trsm);
  if (m == 0 || n == 0) return;
  trsm_with_tiny_pivots(side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb,
                        [](auto... args) { eigen_trsm_call(args...); });
}

// B = op(tri(a)) B or B op(tri(a)) with the Mode triangle of a (Eigen::Lower/Upper, optionally
// | UnitDiag); evaluated into a temporary (the product aliases b).
template <int Mode, class T>
void trmm_product(Side side, Trans trans, const CMap<T>& a, MMap<T>& b) {
  constexpr int Flip = ((Mode & Eigen::Lower) ? Eigen::Upper : Eigen::Lower) | (Mode & Eigen::UnitDiag);
  using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
  Mat r;
  if (side == Side::Left) {
    switch (trans) {
      case Trans::N:
        r = a.template triangularView<Mode>() * b;
        break;
      case Trans::T:
        r = a.transpose().template triangularView<Flip>() * b;
        break;
      case Trans::C:
        r = a.adjoint().template triangularView<Flip>() * b;
        break;
    }
  } else {
    switch (trans) {
      case Trans::N:
        r = b * a.template triangularView<Mode>();
        break;
      case Trans::T:
        r = b * a.transpose().template triangularView<Flip>();
        break;
      case Trans::C:
        r = b * a.adjoint().template triangularView<Flip>();
        break;
    }
  }
  b = r;
}

template <class T>
void eigen_trmm(Side side, Uplo uplo, Trans trans, Diag diag, std::int64_t m, std::int64_t n, T alpha, const T* A,
                std::int64_t lda, T* B, std::int64_t ldb) {
  count_call(Routine::trmm);
  if (m == 0 || n == 0) return;
  MMap<T> b = mmap(B, m, n, ldb);
  if (alpha == T(0)) {  // BLAS: B = 0 and A is not referenced
    b.setZero();
    return;
  }
  const Index k = side == Side::Left ? m : n;
  const CMap<T> a = cmap(A, k, k, lda);
  with_triangle_mode(uplo, diag, [&](auto mode) { trmm_product<decltype(mode)::value>(side, trans, a, b); });
  if (alpha != T(1)) b *= alpha;
}

}  // namespace

#define TENAX_EIGEN_TRMM(T)                                                                                       \
  template <>                                                                                                     \
  void trmm<T>(Side side, Uplo uplo, Trans trans, Diag diag, std::int64_t m, std::int64_t n, T alpha, const T* A, \
               std::int64_t lda, T* B, std::int64_t ldb) {                                                        \
    eigen_trmm<T>(side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb);                                          \
  }
TENAX_EIGEN_TRMM(float)
TENAX_EIGEN_TRMM(double)
TENAX_EIGEN_TRMM(std::complex<float>)
TENAX_EIGEN_TRMM(std::complex<double>)
#undef TENAX_EIGEN_TRMM

std::string provider_name() {
  return "eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
         std::to_string(EIGEN_MINOR_VERSION);
}

// Eigen threads its products only when built with OpenMP; otherwise nbThreads() is 1.
void set_provider_threads(int n) { Eigen::setNbThreads(n); }
int provider_threads() { return Eigen::nbThreads(); }
int provider_call_threads() { return -1; }

template <>
void gemm<float>(Trans ta, Trans tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* A,
                 std::int64_t lda, const float* B, std::int64_t ldb, float beta, float* C, std::int64_t ldc) {
  eigen_gemm<float>(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
template <>
void trsm<float>(Side side, Uplo uplo, Trans trans, Diag diag, std::int64_t m, std::int64_t n, float alpha,
                 const float* A, std::int64_t lda, float* B, std::int64_t ldb) {
  eigen_trsm<float>(side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb);
}
template <>
void gemm<double>(Trans ta, Trans tb, std::int64_t m, std::int64_t n, std::int64_t k, double alpha, const double* A,
                  std::int64_t lda, const double* B, std::int64_t ldb, double beta, double* C, std::int64_t ldc) {
  eigen_gemm<double>(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
template <>
void trsm<double>(Side side, Uplo uplo, Trans trans, Diag diag, std::int64_t m, std::int64_t n, double alpha,
                  const double* A, std::int64_t lda, double* B, std::int64_t ldb) {
  eigen_trsm<double>(side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb);
}
template <>
void gemm<std::complex<float>>(Trans ta, Trans tb, std::int64_t m, std::int64_t n, std::int64_t k,
                               std::complex<float> alpha, const std::complex<float>* A, std::int64_t lda,
                               const std::complex<float>* B, std::int64_t ldb, std::complex<float> beta,
                               std::complex<float>* C, std::int64_t ldc) {
  eigen_gemm<std::complex<float>>(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
template <>
void trsm<std::complex<float>>(Side side, Uplo uplo, Trans trans, Diag diag, std::int64_t m, std::int64_t n,
                               std::complex<float> alpha, const std::complex<float>* A, std::int64_t lda,
                               std::complex<float>* B, std::int64_t ldb) {
  eigen_trsm<std::complex<float>>(side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb);
}
template <>
void gemm<std::complex<double>>(Trans ta, Trans tb, std::int64_t m, std::int64_t n, std::int64_t k,
                                std::complex<double> alpha, const std::complex<double>* A, std::int64_t lda,
                                const std::complex<double>* B, std::int64_t ldb, std::complex<double> beta,
                                std::complex<double>* C, std::int64_t ldc) {
  eigen_gemm<std::complex<double>>(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
template <>
void trsm<std::complex<double>>(Side side, Uplo uplo, Trans trans, Diag diag, std::int64_t m, std::int64_t n,
                                std::complex<double> alpha, const std::complex<double>* A, std::int64_t lda,
                                std::complex<double>* B, std::int64_t ldb) {
  eigen_trsm<std::complex<double>>(side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb);
}

}  // namespace tenax::cpu
