#pragma once
// The CPU BLAS/LAPACK provider interface. One implementation file per provider is compiled:
// src/cpu/provider_cblas.cpp (OpenBLAS, reference LAPACK, MKL through CBLAS/LAPACKE) or
// src/cpu/provider_eigen.cpp (Eigen 3.4 alone). Every routine is counted, so tests can assert
// how many factorizations a forward+backward pass performed.
#include <array>
#include <complex>
#include <cstdint>
#include <string>

#include "tenax/backend/flags.hpp"
#include "tenax/core/dtype.hpp"

namespace tenax::cpu {

using blas::Diag;
using blas::Side;
using blas::Trans;
using blas::Uplo;

// Every provider routine tenax calls; counted per call.
enum class Routine : int { gemm, trsm, trmm, getrf, getrs, potrf, geqrf, orgqr, syevd, gesdd, geev, kCount };

inline const char* routine_name(Routine r) {
  static constexpr const char* names[] = {"gemm",  "trsm",  "trmm",  "getrf", "getrs", "potrf",
                                          "geqrf", "orgqr", "syevd", "gesdd", "geev"};
  const int i = static_cast<int>(r);
  return i >= 0 && i < static_cast<int>(Routine::kCount) ? names[i] : "?";
}

// Calls per routine since the last reset, summed over every thread. Each thread counts its own
// calls (no cache line shared by threads calling the provider at once: one shared atomic counter
// made a batch of small gemms spread over two threads slower than on one); a query sums the live
// threads' counts and those of exited threads. Reset when no provider call is running.
std::int64_t provider_calls(Routine r);
void reset_provider_calls();
void count_call(Routine r);

// Name and version of the provider compiled in ("openblas 0.3.21", "eigen 3.4.0", ...).
std::string provider_name();

// The provider's own thread count: set by tenax to its thread budget (core/threads.hpp); -1 from
// provider_threads() when the provider has no thread setting (reference LAPACK).
void set_provider_threads(int n);
int provider_threads();
// The thread count tenax gave the provider's last call (OpenBLAS: one thread below a size per
// routine, or inside tenax's parallel regions; the budget above it; provider_cblas.cpp), or -1
// where the provider keeps one count for every call (Eigen, MKL, reference LAPACK, or OpenBLAS
// pinned by its own environment variables).
int provider_call_threads();

// All dimensions are checked by the caller to fit the provider's integer type. T is float,
// double, std::complex<float> or std::complex<double>; column-major storage throughout.

// C = alpha op(A) op(B) + beta C.
template <class T>
void gemm(Trans ta, Trans tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* A, std::int64_t lda,
          const T* B, std::int64_t ldb, T beta, T* C, std::int64_t ldc);

// B = alpha op(A)^-1 B (side Left) or alpha B op(A)^-1 (side Right), A triangular; B is m x n.
// A subnormal diagonal entry is handled (the system is scaled by powers of two first).
template <class T>
void trsm(Side side, Uplo uplo, Trans trans, Diag diag, std::int64_t m, std::int64_t n, T alpha, const T* A,
          std::int64_t lda, T* B, std::int64_t ldb);

// B = alpha op(A) B (side Left) or alpha B op(A) (side Right), A triangular (its other triangle
// is not read; a unit diagonal is taken as 1); B is m x n.
template <class T>
void trmm(Side side, Uplo uplo, Trans trans, Diag diag, std::int64_t m, std::int64_t n, T alpha, const T* A,
          std::int64_t lda, T* B, std::int64_t ldb);

// The LAPACK routines below return LAPACK's info: 0 on success, > 0 for a numerical failure
// (zero pivot, non-positive minor, no convergence). A negative info is a tenax bug and is raised
// as an internal tenax::Error. Workspaces are queried once per shape and taken from the pooled
// allocator. Pivots are LAPACK's: 1-based, 32-bit.

// LU with partial pivoting of an m x n matrix, in place. OpenBLAS's getrf multiplies by the
// reciprocal of each pivot, which breaks at a subnormal pivot: callers use getrf_exact
// (backend/tiny_pivots.hpp), which refactors such a matrix with getrf2.
template <class T>
int getrf(std::int64_t m, std::int64_t n, T* A, std::int64_t lda, std::int32_t* ipiv);
// The same by LAPACK's recursive getrf2, which divides by a pivot below the safe minimum
// (counted as getrf). Slower than getrf on large matrices; for the matrices getrf cannot do.
template <class T>
int getrf2(std::int64_t m, std::int64_t n, T* A, std::int64_t lda, std::int32_t* ipiv);
// Solves op(A) X = B with getrf's factors of the n x n A; B (n x nrhs) is overwritten by X.
// A subnormal pivot in U is handled as in trsm.
template <class T>
int getrs(Trans trans, std::int64_t n, std::int64_t nrhs, const T* LU, std::int64_t lda, const std::int32_t* ipiv, T* B,
          std::int64_t ldb);
// Cholesky factor of the uplo triangle, in place (the other triangle is not referenced).
template <class T>
int potrf(Uplo uplo, std::int64_t n, T* A, std::int64_t lda);
// Householder QR of an m x n matrix, in place; tau has min(m, n) entries.
template <class T>
int geqrf(std::int64_t m, std::int64_t n, T* A, std::int64_t lda, T* tau);
// The first n columns of Q (m x n, m >= n >= k) from geqrf's k reflectors (orgqr / ungqr), in place.
template <class T>
int orgqr(std::int64_t m, std::int64_t n, std::int64_t k, T* A, std::int64_t lda, const T* tau);
// Eigenvalues (ascending) and, if vectors, orthonormal eigenvectors (overwriting A) of the
// Hermitian matrix given by its uplo triangle (syevd / heevd).
template <class T>
int syevd(bool vectors, Uplo uplo, std::int64_t n, T* A, std::int64_t lda, real_t<T>* w);
// SVD by divide and conquer: jobz 'N' (values only), 'S' (thin U and V^H) or 'A' (full).
// A is destroyed; s has min(m, n) entries in descending order.
template <class T>
int gesdd(char jobz, std::int64_t m, std::int64_t n, T* A, std::int64_t lda, real_t<T>* s, T* U, std::int64_t ldu,
          T* VT, std::int64_t ldvt);

// Eigenvalues w (n, complex, in LAPACK's order) and, if vectors, right eigenvectors V (n x n,
// complex, leading dimension ldv; unit 2-norm, largest component real) of a general n x n matrix A,
// which is destroyed (geev). For real A, LAPACK's conjugate pairs (real and imaginary parts in
// consecutive columns) are returned as the two complex vectors.
template <class T>
int geev(bool vectors, std::int64_t n, T* A, std::int64_t lda, std::complex<real_t<T>>* w, std::complex<real_t<T>>* V,
         std::int64_t ldv);

}  // namespace tenax::cpu
