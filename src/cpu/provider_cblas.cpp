// The CBLAS/LAPACKE provider (OpenBLAS by default; reference LAPACK or MKL by TENAX_PROVIDER).
#include <algorithm>
#include <atomic>
#include <complex>
#include <utility>
#define LAPACK_COMPLEX_CUSTOM
#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <cblas.h>
#include <lapacke.h>

#include "eigen_small_gesdd.hpp"
#include "eigen_syevd.hpp"
#include "scaled_trsm.hpp"
#include "tenax/backend/cpu_provider.hpp"
#include "tenax/backend/eigenvectors.hpp"
#include "tenax/core/error.hpp"
#include "workspace.hpp"

#if defined(TENAX_PROVIDER_OPENBLAS)
extern "C" char* openblas_get_config(void);
extern "C" void openblas_set_num_threads(int);
extern "C" int openblas_get_num_threads(void);
#elif defined(TENAX_PROVIDER_MKL)
extern "C" void MKL_Set_Num_Threads(int);
extern "C" int MKL_Get_Max_Threads(void);
#endif

namespace tenax::cpu {
namespace {

using c64 = std::complex<float>;
using c128 = std::complex<double>;

CBLAS_TRANSPOSE cblas_trans(Trans t) {
  switch (t) {
    case Trans::N:
      return CblasNoTrans;
    case Trans::T:
      return CblasTrans;
    default:
      return CblasConjTrans;
  }
}

int checked(const char* routine, lapack_int info) {
  TENAX_CHECK(info >= 0, routine, "internal error: LAPACK rejected argument ", -info);
  return static_cast<int>(info);
}

template <class T>
constexpr int type_tag() {
  return static_cast<int>(dtype_of<T>);
}

template <class T>
std::int64_t lwork_of(T w) {
  return static_cast<std::int64_t>(std::real(w));
}

}  // namespace

std::string provider_name() {
#if defined(TENAX_PROVIDER_OPENBLAS)
  return std::string("openblas (") + openblas_get_config() + ")";
#elif defined(TENAX_PROVIDER_MKL)
  return "mkl";
#else
  return "cblas/lapacke (reference)";
#endif
}

// ---- The provider's threads per call ----------------------------------------------------------
//
// OpenBLAS (0.3.21) runs a call on all its threads above thresholds of its own, and at two threads
// that is slower for mid-sized factorizations and costs tenax's pool the CPU its spinning threads
// take. Measured on this machine kind (2 CPUs, one call at a time, us, t1 / t2):
//   gemm n = 64: 7.6 / 7.5; 128: 78 / 57; 256: 550 / 318; 512: 4202 / 2114
//   getrf n = 128: 96 / 112; 256: 505 / 525; 512: 3184 / 2920; 1024: 19234 / 16035
//   potrf n = 64: 7.8 / 26.2; 256: 223 / 298; 512: 1462 / 1329; 1024: 9344 / 7049
// So a call gets the budget's threads when its work passes the threshold of its kind (BLAS-3:
// m n k >= 128^3; LAPACK factorizations and eigen/singular solvers: >= 512^3), and one thread
// otherwise, and always inside one of tenax's parallel regions (its batches are split over the
// pool already). The count changes only when the decision does (openblas_set_num_threads: a
// few ns). Concurrent calls from several user threads may see each other's setting: that costs
// speed, never correctness. With the provider pinned by its own environment variables, tenax
// never sets its count (budget 0 here).
bool in_parallel_region();  // kernels/parallel.hpp (whose cpu::detail would hide tenax::detail here)
namespace {
std::atomic<int> provider_budget{0};  // the count tenax gave the provider, 0: left to its environment
std::atomic<int> provider_now{0};     // the count last set
constexpr double kBlas3ThreadWork = 128.0 * 128.0 * 128.0;
constexpr double kLapackThreadWork = 512.0 * 512.0 * 512.0;

// Sets the provider's threads for a call of `work` (a flop-like product of its dimensions).
void threads_for(double work, double threshold) {
#if defined(TENAX_PROVIDER_OPENBLAS)
  const int budget = provider_budget.load(std::memory_order_relaxed);
  if (budget <= 1) return;
  const int want = work >= threshold && !in_parallel_region() ? budget : 1;
  if (provider_now.load(std::memory_order_relaxed) == want) return;
  openblas_set_num_threads(want);
  provider_now.store(want, std::memory_order_relaxed);
#else
  (void)work, (void)threshold;
#endif
}
double dims(std::int64_t a, std::int64_t b, std::int64_t c) {
  return static_cast<double>(a) * static_cast<double>(b) * static_cast<double>(c);
}
}  // namespace

void set_provider_threads(int n) {
#if defined(TENAX_PROVIDER_OPENBLAS)
  openblas_set_num_threads(n);
  provider_budget.store(n, std::memory_order_relaxed);
  provider_now.store(n, std::memory_order_relaxed);
#elif defined(TENAX_PROVIDER_MKL)
  MKL_Set_Num_Threads(n);
#else
  (void)n;
#endif
}

int provider_threads() {
#if defined(TENAX_PROVIDER_OPENBLAS)
  if (const int b = provider_budget.load(std::memory_order_relaxed); b > 0) return b;
  return openblas_get_num_threads();
#elif defined(TENAX_PROVIDER_MKL)
  return MKL_Get_Max_Threads();
#else
  return -1;
#endif
}

int provider_call_threads() {
#if defined(TENAX_PROVIDER_OPENBLAS)
  if (provider_budget.load(std::memory_order_relaxed) > 0) return provider_now.load(std::memory_order_relaxed);
#endif
  return -1;
}

// ---- BLAS ------------------------------------------------------------------------------------

template <>
void gemm<float>(Trans ta, Trans tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* A,
                 std::int64_t lda, const float* B, std::int64_t ldb, float beta, float* C, std::int64_t ldc) {
  count_call(Routine::gemm);
  threads_for(dims(m, n, k), kBlas3ThreadWork);
  cblas_sgemm(CblasColMajor, cblas_trans(ta), cblas_trans(tb), m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
template <>
void gemm<double>(Trans ta, Trans tb, std::int64_t m, std::int64_t n, std::int64_t k, double alpha, const double* A,
                  std::int64_t lda, const double* B, std::int64_t ldb, double beta, double* C, std::int64_t ldc) {
  count_call(Routine::gemm);
  threads_for(dims(m, n, k), kBlas3ThreadWork);
  cblas_dgemm(CblasColMajor, cblas_trans(ta), cblas_trans(tb), m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
template <>
void gemm<c64>(Trans ta, Trans tb, std::int64_t m, std::int64_t n, std::int64_t k, c64 alpha, const c64* A,
               std::int64_t lda, const c64* B, std::int64_t ldb, c64 beta, c64* C, std::int64_t ldc) {
  count_call(Routine::gemm);
  threads_for(dims(m, n, k), kBlas3ThreadWork);
  cblas_cgemm(CblasColMajor, cblas_trans(ta), cblas_trans(tb), m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc);
}
template <>
void gemm<c128>(Trans ta, Trans tb, std::int64_t m, std::int64_t n, std::int64_t k, c128 alpha, const c128* A,
                std::int64_t lda, const c128* B, std::int64_t ldb, c128 beta, c128* C, std::int64_t ldc) {
  count_call(Routine::gemm);
  threads_for(dims(m, n, k), kBlas3ThreadWork);
  cblas_zgemm(CblasColMajor, cblas_trans(ta), cblas_trans(tb), m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc);
}

// trsm (B = alpha op(A)^-1 B) and trmm (B = alpha op(A) B): the same flags and operands.
namespace {
#define TENAX_TRIANGULAR_CALL(NAME, T, fn, ALPHA)                                                                     \
  void NAME##_call(Side side, Uplo uplo, Trans trans, Diag diag, std::int64_t m, std::int64_t n, T alpha, const T* A, \
                   std::int64_t lda, T* B, std::int64_t ldb) {                                                        \
    fn(CblasColMajor, side == Side::Left ? CblasLeft : CblasRight, uplo == Uplo::Lower ? CblasLower : CblasUpper,     \
       cblas_trans(trans), diag == Diag::Unit ? CblasUnit : CblasNonUnit, m, n, ALPHA, A, lda, B, ldb);               \
  }
TENAX_TRIANGULAR_CALL(trsm, float, cblas_strsm, alpha)
TENAX_TRIANGULAR_CALL(trsm, double, cblas_dtrsm, alpha)
TENAX_TRIANGULAR_CALL(trsm, c64, cblas_ctrsm, &alpha)
TENAX_TRIANGULAR_CALL(trsm, c128, cblas_ztrsm, &alpha)
TENAX_TRIANGULAR_CALL(trmm, float, cblas_strmm, alpha)
TENAX_TRIANGULAR_CALL(trmm, double, cblas_dtrmm, alpha)
TENAX_TRIANGULAR_CALL(trmm, c64, cblas_ctrmm, &alpha)
TENAX_TRIANGULAR_CALL(trmm, c128, cblas_ztrmm, &alpha)
#undef TENAX_TRIANGULAR_CALL

// trsm: a diagonal with a subnormal entry goes through scaled_trsm.
template <class T>
void checked_trsm(Side side, Uplo uplo, Trans trans, Diag diag, std::int64_t m, std::int64_t n, T alpha, const T* A,
                  std::int64_t lda, T* B, std::int64_t ldb) {
  trsm_with_tiny_pivots(side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb, [](auto... args) { trsm_call(args...); });
}
}  // namespace

#define TENAX_TRIANGULAR(NAME, T, call)                                                                           \
  template <>                                                                                                     \
  void NAME<T>(Side side, Uplo uplo, Trans trans, Diag diag, std::int64_t m, std::int64_t n, T alpha, const T* A, \
               std::int64_t lda, T* B, std::int64_t ldb) {                                                        \
    count_call(Routine::NAME);                                                                                    \
    if (m == 0 || n == 0) return;                                                                                 \
    threads_for(dims(m, n, side == Side::Left ? m : n), kBlas3ThreadWork);                                        \
    call(side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb);                                                   \
  }
TENAX_TRIANGULAR(trsm, float, checked_trsm<float>)
TENAX_TRIANGULAR(trsm, double, checked_trsm<double>)
TENAX_TRIANGULAR(trsm, c64, checked_trsm<c64>)
TENAX_TRIANGULAR(trsm, c128, checked_trsm<c128>)
TENAX_TRIANGULAR(trmm, float, trmm_call)
TENAX_TRIANGULAR(trmm, double, trmm_call)
TENAX_TRIANGULAR(trmm, c64, trmm_call)
TENAX_TRIANGULAR(trmm, c128, trmm_call)
#undef TENAX_TRIANGULAR

// ---- LAPACK ----------------------------------------------------------------------------------

#define TENAX_GETRF(NAME, T, fn)                                                              \
  template <>                                                                                 \
  int NAME<T>(std::int64_t m, std::int64_t n, T * A, std::int64_t lda, std::int32_t * ipiv) { \
    count_call(Routine::getrf);                                                               \
    threads_for(dims(m, n, std::min(m, n)), kLapackThreadWork);                               \
    if (m == 0 || n == 0) return 0;                                                           \
    return checked(#NAME, fn(LAPACK_COL_MAJOR, m, n, A, lda, ipiv));                          \
  }
TENAX_GETRF(getrf, float, LAPACKE_sgetrf_work)
TENAX_GETRF(getrf, double, LAPACKE_dgetrf_work)
TENAX_GETRF(getrf, c64, LAPACKE_cgetrf_work)
TENAX_GETRF(getrf, c128, LAPACKE_zgetrf_work)
TENAX_GETRF(getrf2, float, LAPACKE_sgetrf2_work)
TENAX_GETRF(getrf2, double, LAPACKE_dgetrf2_work)
TENAX_GETRF(getrf2, c64, LAPACKE_cgetrf2_work)
TENAX_GETRF(getrf2, c128, LAPACKE_zgetrf2_work)
#undef TENAX_GETRF

namespace {

// OpenBLAS 0.3.21 (Debian 12's) splits getrs over its threads whatever the size, and its laswp
// too: at 2 provider threads, one getrs of a 4 x 4 system with 4 right-hand sides took 1.7 us
// instead of 0.2 us (1024 such systems, /tmp micro-benchmark, AMD EPYC, 2 CPUs). Its trsm stays
// on one thread below 8 rows. So small systems with several right-hand sides are solved here by
// the same steps getrs takes (row interchanges, then two trsm), which at one thread cost the same
// as getrs. Below kSmallGetrsWork = n * n * nrhs the serial path won at 2 threads in that
// measurement (n = nrhs = 24: 6.0 vs 6.3 us; n = nrhs = 28: getrs 7.6 vs 8.2 us); a single
// right-hand side is never split, and getrs's trsv path is faster there.
constexpr std::int64_t kSmallGetrsWork = 16384;

bool small_getrs(std::int64_t n, std::int64_t nrhs, std::int64_t lda, std::int64_t ldb) {
#if defined(TENAX_PROVIDER_OPENBLAS)
  return nrhs > 1 && n * n * nrhs < kSmallGetrsWork && lda >= n && ldb >= n;
#else
  (void)n, (void)nrhs, (void)lda, (void)ldb;
  return false;
#endif
}

// B := op(T)^-1 B for the n x n triangle T (left side, alpha 1), without counting a trsm call.
void left_trsm(CBLAS_UPLO u, CBLAS_TRANSPOSE t, CBLAS_DIAG d, int n, int k, const float* A, int lda, float* B,
               int ldb) {
  cblas_strsm(CblasColMajor, CblasLeft, u, t, d, n, k, 1.0f, A, lda, B, ldb);
}
void left_trsm(CBLAS_UPLO u, CBLAS_TRANSPOSE t, CBLAS_DIAG d, int n, int k, const double* A, int lda, double* B,
               int ldb) {
  cblas_dtrsm(CblasColMajor, CblasLeft, u, t, d, n, k, 1.0, A, lda, B, ldb);
}
void left_trsm(CBLAS_UPLO u, CBLAS_TRANSPOSE t, CBLAS_DIAG d, int n, int k, const c64* A, int lda, c64* B, int ldb) {
  const c64 one(1);
  cblas_ctrsm(CblasColMajor, CblasLeft, u, t, d, n, k, &one, A, lda, B, ldb);
}
void left_trsm(CBLAS_UPLO u, CBLAS_TRANSPOSE t, CBLAS_DIAG d, int n, int k, const c128* A, int lda, c128* B, int ldb) {
  const c128 one(1);
  cblas_ztrsm(CblasColMajor, CblasLeft, u, t, d, n, k, &one, A, lda, B, ldb);
}

// getrs by its steps: with A = P L U, op N is B := U^-1 L^-1 (P^T B), ops T and C are
// B := P (L^-op U^-op B); P^T B applies the interchanges ipiv[0..n) in order, P B in reverse.
// Also taken when U has a subnormal pivot: the U solve then goes through scaled_trsm.
template <class T>
void getrs_by_steps(Trans trans, std::int64_t n, std::int64_t nrhs, const T* LU, std::int64_t lda,
                    const std::int32_t* ipiv, T* B, std::int64_t ldb) {
  const auto interchange = [&](std::int64_t i) {
    const std::int64_t r = ipiv[i] - 1;
    if (r == i) return;
    for (std::int64_t j = 0; j < nrhs; ++j) std::swap(B[i + j * ldb], B[r + j * ldb]);
  };
  const CBLAS_TRANSPOSE t = cblas_trans(trans);
  const auto ni = static_cast<int>(n), ki = static_cast<int>(nrhs);
  const auto la = static_cast<int>(lda), lb = static_cast<int>(ldb);
  if (trans == Trans::N) {
    for (std::int64_t i = 0; i < n; ++i) interchange(i);
    left_trsm(CblasLower, t, CblasUnit, ni, ki, LU, la, B, lb);
    checked_trsm(Side::Left, Uplo::Upper, trans, Diag::NonUnit, n, nrhs, T(1), LU, lda, B, ldb);
  } else {
    if (has_tiny_diagonal(n, LU, lda)) {
      scaled_getrs_transposed(
          trans, n, nrhs, LU, lda, B, ldb,
          [](Uplo u, Diag d, Trans op, std::int64_t m, std::int64_t k, const T* a, std::int64_t ld, T* x,
             std::int64_t ldx) { trsm_call(Side::Left, u, op, d, m, k, T(1), a, ld, x, ldx); });
    } else {
      left_trsm(CblasUpper, t, CblasNonUnit, ni, ki, LU, la, B, lb);
      left_trsm(CblasLower, t, CblasUnit, ni, ki, LU, la, B, lb);
    }
    for (std::int64_t i = n - 1; i >= 0; --i) interchange(i);
  }
}

}  // namespace

#define TENAX_GETRS(T, fn)                                                                                   \
  template <>                                                                                                \
  int getrs<T>(Trans trans, std::int64_t n, std::int64_t nrhs, const T* LU, std::int64_t lda,                \
               const std::int32_t* ipiv, T* B, std::int64_t ldb) {                                           \
    count_call(Routine::getrs);                                                                              \
    threads_for(dims(n, n, nrhs), kBlas3ThreadWork);                                                         \
    if (n == 0 || nrhs == 0) return 0;                                                                       \
    if (small_getrs(n, nrhs, lda, ldb) || has_tiny_diagonal(n, LU, lda)) {                                   \
      getrs_by_steps(trans, n, nrhs, LU, lda, ipiv, B, ldb);                                                 \
      return 0;                                                                                              \
    }                                                                                                        \
    return checked("getrs", fn(LAPACK_COL_MAJOR, static_cast<char>(trans), n, nrhs, LU, lda, ipiv, B, ldb)); \
  }
TENAX_GETRS(float, LAPACKE_sgetrs_work)
TENAX_GETRS(double, LAPACKE_dgetrs_work)
TENAX_GETRS(c64, LAPACKE_cgetrs_work)
TENAX_GETRS(c128, LAPACKE_zgetrs_work)
#undef TENAX_GETRS

#define TENAX_POTRF(T, fn)                                                             \
  template <>                                                                          \
  int potrf<T>(Uplo uplo, std::int64_t n, T * A, std::int64_t lda) {                   \
    count_call(Routine::potrf);                                                        \
    threads_for(dims(n, n, n), kLapackThreadWork);                                     \
    if (n == 0) return 0;                                                              \
    return checked("potrf", fn(LAPACK_COL_MAJOR, static_cast<char>(uplo), n, A, lda)); \
  }
TENAX_POTRF(float, LAPACKE_spotrf_work)
TENAX_POTRF(double, LAPACKE_dpotrf_work)
TENAX_POTRF(c64, LAPACKE_cpotrf_work)
TENAX_POTRF(c128, LAPACKE_zpotrf_work)
#undef TENAX_POTRF

#define TENAX_GEQRF(T, fn)                                                                                 \
  template <>                                                                                              \
  int geqrf<T>(std::int64_t m, std::int64_t n, T * A, std::int64_t lda, T * tau) {                         \
    count_call(Routine::geqrf);                                                                            \
    threads_for(dims(m, n, std::min(m, n)), kLapackThreadWork);                                            \
    if (m == 0 || n == 0) return 0;                                                                        \
    const WorkSizes w = cached_work({static_cast<int>(Routine::geqrf), type_tag<T>(), m, n, lda, 0}, [&] { \
      T q{};                                                                                               \
      checked("geqrf", fn(LAPACK_COL_MAJOR, m, n, A, lda, tau, &q, -1));                                   \
      return WorkSizes{lwork_of(q), 0, 0};                                                                 \
    });                                                                                                    \
    Workspace<T> work(w[0]);                                                                               \
    return checked("geqrf", fn(LAPACK_COL_MAJOR, m, n, A, lda, tau, work.data(), w[0]));                   \
  }
TENAX_GEQRF(float, LAPACKE_sgeqrf_work)
TENAX_GEQRF(double, LAPACKE_dgeqrf_work)
TENAX_GEQRF(c64, LAPACKE_cgeqrf_work)
TENAX_GEQRF(c128, LAPACKE_zgeqrf_work)
#undef TENAX_GEQRF

#define TENAX_ORGQR(T, fn)                                                                                 \
  template <>                                                                                              \
  int orgqr<T>(std::int64_t m, std::int64_t n, std::int64_t k, T * A, std::int64_t lda, const T* tau) {    \
    count_call(Routine::orgqr);                                                                            \
    threads_for(dims(m, n, k), kLapackThreadWork);                                                         \
    if (m == 0 || n == 0) return 0;                                                                        \
    const WorkSizes w = cached_work({static_cast<int>(Routine::orgqr), type_tag<T>(), m, n, k, lda}, [&] { \
      T q{};                                                                                               \
      checked("orgqr", fn(LAPACK_COL_MAJOR, m, n, k, A, lda, tau, &q, -1));                                \
      return WorkSizes{lwork_of(q), 0, 0};                                                                 \
    });                                                                                                    \
    Workspace<T> work(w[0]);                                                                               \
    return checked("orgqr", fn(LAPACK_COL_MAJOR, m, n, k, A, lda, tau, work.data(), w[0]));                \
  }
TENAX_ORGQR(float, LAPACKE_sorgqr_work)
TENAX_ORGQR(double, LAPACKE_dorgqr_work)
TENAX_ORGQR(c64, LAPACKE_cungqr_work)
TENAX_ORGQR(c128, LAPACKE_zungqr_work)
#undef TENAX_ORGQR

// With eigenvectors, small matrices go to Eigen's SelfAdjointEigenSolver (eigen_syevd.cpp):
// LAPACK's syevd pays for sytrd + steqr + ormtr calls, with their workspaces and argument checks,
// and at these orders Eigen's one-pass tridiagonalization and QR iteration are faster. Measured on
// the development machine (one thread, OpenBLAS 0.3.21, interleaved medians, Eigen / syevd): real
// 0.4-0.6 for n = 3..24 and 0.7 at 32, 0.9 at 48; complex 0.5-0.8 for n = 2..24, 1.3 at 32. Without
// vectors LAPACK's sterf path is the faster one (Eigen 1.4-2x slower at n <= 12), so it stays.
template <class T>
constexpr std::int64_t kSmallEigenSyevd = is_complex_v<T> ? 24 : 32;

#define TENAX_SYEVD_REAL(T, fn)                                                                                   \
  template <>                                                                                                     \
  int syevd<T>(bool vectors, Uplo uplo, std::int64_t n, T* A, std::int64_t lda, T* w) {                           \
    count_call(Routine::syevd);                                                                                   \
    threads_for(dims(n, n, n), kLapackThreadWork);                                                                \
    if (n == 0) return 0;                                                                                         \
    if (vectors && n <= kSmallEigenSyevd<T>) return eigen_syevd<T>(vectors, uplo, n, A, lda, w);                  \
    const char jobz = vectors ? 'V' : 'N', up = static_cast<char>(uplo);                                          \
    const WorkSizes s = cached_work({static_cast<int>(Routine::syevd), type_tag<T>(), n, lda, jobz, up}, [&] {    \
      T q{};                                                                                                      \
      lapack_int iq = 0;                                                                                          \
      checked("syevd", fn(LAPACK_COL_MAJOR, jobz, up, n, A, lda, w, &q, -1, &iq, -1));                            \
      return WorkSizes{lwork_of(q), iq, 0};                                                                       \
    });                                                                                                           \
    Workspace<T> work(s[0]);                                                                                      \
    Workspace<lapack_int> iwork(s[1]);                                                                            \
    return checked("syevd", fn(LAPACK_COL_MAJOR, jobz, up, n, A, lda, w, work.data(), s[0], iwork.data(), s[1])); \
  }
TENAX_SYEVD_REAL(float, LAPACKE_ssyevd_work)
TENAX_SYEVD_REAL(double, LAPACKE_dsyevd_work)
#undef TENAX_SYEVD_REAL

#define TENAX_HEEVD(T, R, fn)                                                                                   \
  template <>                                                                                                   \
  int syevd<T>(bool vectors, Uplo uplo, std::int64_t n, T* A, std::int64_t lda, R* w) {                         \
    count_call(Routine::syevd);                                                                                 \
    threads_for(dims(n, n, n), kLapackThreadWork);                                                              \
    if (n == 0) return 0;                                                                                       \
    if (vectors && n <= kSmallEigenSyevd<T>) return eigen_syevd<T>(vectors, uplo, n, A, lda, w);                \
    const char jobz = vectors ? 'V' : 'N', up = static_cast<char>(uplo);                                        \
    const WorkSizes s = cached_work({static_cast<int>(Routine::syevd), type_tag<T>(), n, lda, jobz, up}, [&] {  \
      T q{};                                                                                                    \
      R rq{};                                                                                                   \
      lapack_int iq = 0;                                                                                        \
      checked("heevd", fn(LAPACK_COL_MAJOR, jobz, up, n, A, lda, w, &q, -1, &rq, -1, &iq, -1));                 \
      return WorkSizes{lwork_of(q), static_cast<std::int64_t>(rq), iq};                                         \
    });                                                                                                         \
    Workspace<T> work(s[0]);                                                                                    \
    Workspace<R> rwork(s[1]);                                                                                   \
    Workspace<lapack_int> iwork(s[2]);                                                                          \
    return checked("heevd", fn(LAPACK_COL_MAJOR, jobz, up, n, A, lda, w, work.data(), s[0], rwork.data(), s[1], \
                               iwork.data(), s[2]));                                                            \
  }
TENAX_HEEVD(c64, float, LAPACKE_cheevd_work)
TENAX_HEEVD(c128, double, LAPACKE_zheevd_work)
#undef TENAX_HEEVD

// The smallest SVDs go to Eigen's JacobiSVD (eigen_small_gesdd.cpp): gesdd's bidiagonalization,
// workspace queries and divide-and-conquer set-up dominate there. Measured like syevd above
// (JacobiSVD / gesdd, jobz S and N): real 0.07-0.1 at 2x2, 0.3-0.4 at 3x3, 0.5-0.65 at 4x4,
// 0.6-0.9 at 5x5, 1.2-1.6 at 8x8, 0.2-0.6 for 4x2, 2x4 and 8x4; complex 0.14-0.19 at 2x2,
// 0.74-0.82 at 3x3, 1.1-1.4 at 4x4.
template <class T>
constexpr bool small_jacobi_svd(std::int64_t m, std::int64_t n) {
  return std::min(m, n) <= (is_complex_v<T> ? 3 : 4) && std::max(m, n) <= 16;
}

#define TENAX_GESDD_REAL(T, fn)                                                                                        \
  template <>                                                                                                          \
  int gesdd<T>(char jobz, std::int64_t m, std::int64_t n, T* A, std::int64_t lda, T* s, T* U, std::int64_t ldu, T* VT, \
               std::int64_t ldvt) {                                                                                    \
    count_call(Routine::gesdd);                                                                                        \
    threads_for(dims(m, n, std::min(m, n)), kLapackThreadWork);                                                        \
    if (m == 0 || n == 0) return 0;                                                                                    \
    if (small_jacobi_svd<T>(m, n)) return eigen_small_gesdd<T>(jobz, m, n, A, lda, s, U, ldu, VT, ldvt);               \
    const std::int64_t mn = std::min(m, n);                                                                            \
    const WorkSizes w = cached_work({static_cast<int>(Routine::gesdd), type_tag<T>(), m, n, lda, jobz}, [&] {          \
      T q{};                                                                                                           \
      checked("gesdd", fn(LAPACK_COL_MAJOR, jobz, m, n, A, lda, s, U, ldu, VT, ldvt, &q, -1, nullptr));                \
      return WorkSizes{lwork_of(q), 8 * mn, 0};                                                                        \
    });                                                                                                                \
    Workspace<T> work(w[0]);                                                                                           \
    Workspace<lapack_int> iwork(w[1]);                                                                                 \
    return checked("gesdd",                                                                                            \
                   fn(LAPACK_COL_MAJOR, jobz, m, n, A, lda, s, U, ldu, VT, ldvt, work.data(), w[0], iwork.data()));    \
  }
TENAX_GESDD_REAL(float, LAPACKE_sgesdd_work)
TENAX_GESDD_REAL(double, LAPACKE_dgesdd_work)
#undef TENAX_GESDD_REAL

#define TENAX_GESDD_CPLX(T, R, fn)                                                                                     \
  template <>                                                                                                          \
  int gesdd<T>(char jobz, std::int64_t m, std::int64_t n, T* A, std::int64_t lda, R* s, T* U, std::int64_t ldu, T* VT, \
               std::int64_t ldvt) {                                                                                    \
    count_call(Routine::gesdd);                                                                                        \
    threads_for(dims(m, n, std::min(m, n)), kLapackThreadWork);                                                        \
    if (m == 0 || n == 0) return 0;                                                                                    \
    if (small_jacobi_svd<T>(m, n)) return eigen_small_gesdd<T>(jobz, m, n, A, lda, s, U, ldu, VT, ldvt);               \
    const std::int64_t mn = std::min(m, n), mx = std::max(m, n);                                                       \
    const std::int64_t lrwork = jobz == 'N' ? 7 * mn : mn * std::max(5 * mn + 7, 2 * mx + 2 * mn + 1);                 \
    const WorkSizes w = cached_work({static_cast<int>(Routine::gesdd), type_tag<T>(), m, n, lda, jobz}, [&] {          \
      T q{};                                                                                                           \
      checked("gesdd", fn(LAPACK_COL_MAJOR, jobz, m, n, A, lda, s, U, ldu, VT, ldvt, &q, -1, nullptr, nullptr));       \
      return WorkSizes{lwork_of(q), 8 * mn, lrwork};                                                                   \
    });                                                                                                                \
    Workspace<T> work(w[0]);                                                                                           \
    Workspace<lapack_int> iwork(w[1]);                                                                                 \
    Workspace<R> rwork(w[2]);                                                                                          \
    return checked("gesdd", fn(LAPACK_COL_MAJOR, jobz, m, n, A, lda, s, U, ldu, VT, ldvt, work.data(), w[0],           \
                               rwork.data(), iwork.data()));                                                           \
  }
TENAX_GESDD_CPLX(c64, float, LAPACKE_cgesdd_work)
TENAX_GESDD_CPLX(c128, double, LAPACKE_zgesdd_work)
#undef TENAX_GESDD_CPLX

// geev with right eigenvectors only (jobvl 'N'). Real A: wr, wi and the packed real vectors go to
// scratch and are unpacked into complex ones (backend/eigenvectors.hpp).
#define TENAX_GEEV_REAL(T, fn)                                                                                         \
  template <>                                                                                                          \
  int geev<T>(bool vectors, std::int64_t n, T* A, std::int64_t lda, std::complex<T>* w, std::complex<T>* V,            \
              std::int64_t ldv) {                                                                                      \
    count_call(Routine::geev);                                                                                         \
    threads_for(dims(n, n, n), kLapackThreadWork);                                                                     \
    if (n == 0) return 0;                                                                                              \
    const char jobvr = vectors ? 'V' : 'N';                                                                            \
    const std::int64_t ldvr = vectors ? n : 1;                                                                         \
    Workspace<T> wr(n), wi(n), vr(vectors ? n*n : 1);                                                                  \
    const WorkSizes s = cached_work({static_cast<int>(Routine::geev), type_tag<T>(), n, lda, jobvr}, [&] {             \
      T q{};                                                                                                           \
      checked("geev",                                                                                                  \
              fn(LAPACK_COL_MAJOR, 'N', jobvr, n, A, lda, wr.data(), wi.data(), nullptr, 1, vr.data(), ldvr, &q, -1)); \
      return WorkSizes{lwork_of(q), 0, 0};                                                                             \
    });                                                                                                                \
    Workspace<T> work(s[0]);                                                                                           \
    const int info = checked("geev", fn(LAPACK_COL_MAJOR, 'N', jobvr, n, A, lda, wr.data(), wi.data(), nullptr, 1,     \
                                        vr.data(), ldvr, work.data(), s[0]));                                          \
    if (info == 0)                                                                                                     \
      detail::unpack_real_eigenvectors<T>(n, wr.data(), wi.data(), vectors ? vr.data() : nullptr, w, V, ldv);          \
    return info;                                                                                                       \
  }
TENAX_GEEV_REAL(float, LAPACKE_sgeev_work)
TENAX_GEEV_REAL(double, LAPACKE_dgeev_work)
#undef TENAX_GEEV_REAL

#define TENAX_GEEV_CPLX(T, R, fn)                                                                                  \
  template <>                                                                                                      \
  int geev<T>(bool vectors, std::int64_t n, T* A, std::int64_t lda, T* w, T* V, std::int64_t ldv) {                \
    count_call(Routine::geev);                                                                                     \
    threads_for(dims(n, n, n), kLapackThreadWork);                                                                 \
    if (n == 0) return 0;                                                                                          \
    const char jobvr = vectors ? 'V' : 'N';                                                                        \
    T dummy{};                                                                                                     \
    T* const vr = vectors ? V : &dummy;                                                                            \
    const std::int64_t ldvr = vectors ? ldv : 1;                                                                   \
    const WorkSizes s = cached_work({static_cast<int>(Routine::geev), type_tag<T>(), n, lda, jobvr}, [&] {         \
      T q{};                                                                                                       \
      Workspace<R> rq(2 * n); /* (trevc3's query writes rwork[0]) */                                               \
      checked("geev", fn(LAPACK_COL_MAJOR, 'N', jobvr, n, A, lda, w, nullptr, 1, vr, ldvr, &q, -1, rq.data()));    \
      return WorkSizes{lwork_of(q), 2 * n, 0};                                                                     \
    });                                                                                                            \
    Workspace<T> work(s[0]);                                                                                       \
    Workspace<R> rwork(s[1]);                                                                                      \
    return checked("geev", fn(LAPACK_COL_MAJOR, 'N', jobvr, n, A, lda, w, nullptr, 1, vr, ldvr, work.data(), s[0], \
                              rwork.data()));                                                                      \
  }
TENAX_GEEV_CPLX(c64, float, LAPACKE_cgeev_work)
TENAX_GEEV_CPLX(c128, double, LAPACKE_zgeev_work)
#undef TENAX_GEEV_CPLX

}  // namespace tenax::cpu
