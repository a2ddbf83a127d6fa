// cuSOLVER (dense) and cuBLAS trsm/trmm for the CUDA backend's linear algebra: one handle per thread and
// device on the device's stream; workspaces from the device pool, returned in stream order.
#include <cublas_v2.h>
#include <cusolverDn.h>

#include <array>
#include <complex>
#include <string>
#include <type_traits>

#include "runtime.hpp"
#include "tenax/backend/cuda.hpp"
#include "tenax/core/error.hpp"

namespace tenax::detail::cuda {

cublasHandle_t blas_handle(int dev);  // blas.cpp

namespace {

void check_solver(cusolverStatus_t s, std::string_view what) {
  if (s != CUSOLVER_STATUS_SUCCESS) fail("cuda", what, ": cuSOLVER status ", static_cast<int>(s));
}

struct Handles {
  std::array<cusolverDnHandle_t, 64> h{};
  std::array<gesvdjInfo_t, 64> svd{};  // gesvdj's parameters (default tolerance and sweeps)
  ~Handles() {
    for (gesvdjInfo_t x : svd)
      if (x) (void)cusolverDnDestroyGesvdjInfo(x);
    for (cusolverDnHandle_t x : h)
      if (x) (void)cusolverDnDestroy(x);
  }
};

Handles& handles() {
  thread_local Handles hs;
  return hs;
}

cusolverDnHandle_t solver_handle(int dev) {
  stream_of(dev);  // validates the ordinal before it indexes the handles
  cusolverDnHandle_t& h = handles().h[static_cast<std::size_t>(dev)];
  if (!h) {
    cudaStream_t s = stream_of(dev);
    DeviceGuard g(dev);
    check_solver(cusolverDnCreate(&h), "cusolverDnCreate on cuda:" + std::to_string(dev));
    check_solver(cusolverDnSetStream(h, s), "cusolverDnSetStream");
  }
  return h;
}

// A workspace of `count` elements of T from the device pool, handed back in stream order.
template <class T>
class Workspace {
 public:
  Workspace(int dev, int count)
      : alloc_(allocator(dev)), bytes_(sizeof(T) * static_cast<std::size_t>(count > 0 ? count : 1)) {
    p_ = static_cast<T*>(alloc_.allocate(bytes_));
  }
  ~Workspace() { alloc_.deallocate(p_, bytes_); }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  T* get() const { return p_; }

 private:
  Allocator& alloc_;
  std::size_t bytes_;
  T* p_ = nullptr;
};

template <class T>
using cu_t = std::conditional_t<std::is_same_v<T, std::complex<float>>, cuComplex,
                                std::conditional_t<std::is_same_v<T, std::complex<double>>, cuDoubleComplex, T>>;
template <class T>
cu_t<T>* cu(T* p) {
  return reinterpret_cast<cu_t<T>*>(p);
}
template <class T>
const cu_t<T>* cu(const T* p) {
  return reinterpret_cast<const cu_t<T>*>(p);
}

int as_int(std::int64_t v, std::string_view op) {
  TENAX_CHECK(v <= 2147483647, op, "dimension ", v, " exceeds cuSOLVER's 32-bit index");
  return static_cast<int>(v);
}

cublasFillMode_t fill_of(char uplo) { return uplo == 'U' ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER; }
cublasOperation_t op_of(char t) { return t == 'N' ? CUBLAS_OP_N : (t == 'T' ? CUBLAS_OP_T : CUBLAS_OP_C); }

// Picks the S/D/C/Z entry point of a cuSOLVER or cuBLAS family.
#define TENAX_PICK(T, S, D, C, Z)                              \
  [] {                                                         \
    if constexpr (std::is_same_v<T, float>)                    \
      return &S;                                               \
    else if constexpr (std::is_same_v<T, double>)              \
      return &D;                                               \
    else if constexpr (std::is_same_v<T, std::complex<float>>) \
      return &C;                                               \
    else                                                       \
      return &Z;                                               \
  }()

}  // namespace

// cuBLAS trsm (Solve) or trmm in place of B: the same flags and operands. trmm writes C; B passed
// as C (same leading dimension) is its in-place form.
template <bool Solve, class T>
void triangular(int dev, char side, char uplo, char trans, char diag, std::int64_t m, std::int64_t n, const T* a,
                std::int64_t lda, T* b, std::int64_t ldb) {
  const char* op = Solve ? "solve_triangular" : "triangular_matmul";
  cublasHandle_t h = blas_handle(dev);
  DeviceGuard g(dev);
  const T one(1);
  const cublasSideMode_t sm = side == 'L' ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT;
  const cublasDiagType_t dm = diag == 'U' ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
  const int mi = as_int(m, op), ni = as_int(n, op), ldai = as_int(lda, op), ldbi = as_int(ldb, op);
  cublasStatus_t s;
  if constexpr (Solve) {
    auto f = TENAX_PICK(T, cublasStrsm, cublasDtrsm, cublasCtrsm, cublasZtrsm);
    s = f(h, sm, fill_of(uplo), op_of(trans), dm, mi, ni, cu(&one), cu(a), ldai, cu(b), ldbi);
  } else {
    auto f = TENAX_PICK(T, cublasStrmm, cublasDtrmm, cublasCtrmm, cublasZtrmm);
    s = f(h, sm, fill_of(uplo), op_of(trans), dm, mi, ni, cu(&one), cu(a), ldai, cu(b), ldbi, cu(b), ldbi);
  }
  if (s != CUBLAS_STATUS_SUCCESS)
    fail("cuda", op, Solve ? " (cublas trsm)" : " (cublas trmm)", ": status ", static_cast<int>(s));
}

template <class T>
void trsm(int dev, char side, char uplo, char trans, char diag, std::int64_t m, std::int64_t n, const T* a,
          std::int64_t lda, T* b, std::int64_t ldb) {
  triangular<true>(dev, side, uplo, trans, diag, m, n, a, lda, b, ldb);
}

template <class T>
void trmm(int dev, char side, char uplo, char trans, char diag, std::int64_t m, std::int64_t n, const T* a,
          std::int64_t lda, T* b, std::int64_t ldb) {
  triangular<false>(dev, side, uplo, trans, diag, m, n, a, lda, b, ldb);
}

template <class T>
void potrf(int dev, std::int64_t n64, T* a, std::int64_t lda64, std::int32_t* info) {
  cusolverDnHandle_t h = solver_handle(dev);
  DeviceGuard g(dev);
  const int n = as_int(n64, "cholesky"), lda = as_int(lda64, "cholesky");
  int lwork = 0;
  auto size = TENAX_PICK(T, cusolverDnSpotrf_bufferSize, cusolverDnDpotrf_bufferSize, cusolverDnCpotrf_bufferSize,
                         cusolverDnZpotrf_bufferSize);
  auto run = TENAX_PICK(T, cusolverDnSpotrf, cusolverDnDpotrf, cusolverDnCpotrf, cusolverDnZpotrf);
  check_solver(size(h, CUBLAS_FILL_MODE_LOWER, n, cu(a), lda, &lwork), "cholesky (potrf buffer size)");
  Workspace<T> w(dev, lwork);
  check_solver(run(h, CUBLAS_FILL_MODE_LOWER, n, cu(a), lda, cu(w.get()), lwork, info), "cholesky (potrf)");
}

template <class T>
void getrf(int dev, std::int64_t m64, std::int64_t n64, T* a, std::int64_t lda64, std::int32_t* ipiv,
           std::int32_t* info) {
  cusolverDnHandle_t h = solver_handle(dev);
  DeviceGuard g(dev);
  const int m = as_int(m64, "lu"), n = as_int(n64, "lu"), lda = as_int(lda64, "lu");
  int lwork = 0;
  auto size = TENAX_PICK(T, cusolverDnSgetrf_bufferSize, cusolverDnDgetrf_bufferSize, cusolverDnCgetrf_bufferSize,
                         cusolverDnZgetrf_bufferSize);
  auto run = TENAX_PICK(T, cusolverDnSgetrf, cusolverDnDgetrf, cusolverDnCgetrf, cusolverDnZgetrf);
  check_solver(size(h, m, n, cu(a), lda, &lwork), "lu (getrf buffer size)");
  Workspace<T> w(dev, lwork);
  check_solver(run(h, m, n, cu(a), lda, cu(w.get()), ipiv, info), "lu (getrf)");
}

template <class T>
void getrs(int dev, char trans, std::int64_t n64, std::int64_t nrhs64, const T* lu, std::int64_t lda64,
           const std::int32_t* ipiv, T* b, std::int64_t ldb64, std::int32_t* info) {
  cusolverDnHandle_t h = solver_handle(dev);
  DeviceGuard g(dev);
  auto run = TENAX_PICK(T, cusolverDnSgetrs, cusolverDnDgetrs, cusolverDnCgetrs, cusolverDnZgetrs);
  check_solver(run(h, op_of(trans), as_int(n64, "lu_solve"), as_int(nrhs64, "lu_solve"), cu(lu),
                   as_int(lda64, "lu_solve"), ipiv, cu(b), as_int(ldb64, "lu_solve"), info),
               "lu_solve (getrs)");
}

template <class T>
void geqrf(int dev, std::int64_t m64, std::int64_t n64, T* a, std::int64_t lda64, T* tau, std::int32_t* info) {
  cusolverDnHandle_t h = solver_handle(dev);
  DeviceGuard g(dev);
  const int m = as_int(m64, "qr"), n = as_int(n64, "qr"), lda = as_int(lda64, "qr");
  int lwork = 0;
  auto size = TENAX_PICK(T, cusolverDnSgeqrf_bufferSize, cusolverDnDgeqrf_bufferSize, cusolverDnCgeqrf_bufferSize,
                         cusolverDnZgeqrf_bufferSize);
  auto run = TENAX_PICK(T, cusolverDnSgeqrf, cusolverDnDgeqrf, cusolverDnCgeqrf, cusolverDnZgeqrf);
  check_solver(size(h, m, n, cu(a), lda, &lwork), "qr (geqrf buffer size)");
  Workspace<T> w(dev, lwork);
  check_solver(run(h, m, n, cu(a), lda, cu(tau), cu(w.get()), lwork, info), "qr (geqrf)");
}

template <class T>
void orgqr(int dev, std::int64_t m64, std::int64_t n64, std::int64_t k64, T* a, std::int64_t lda64, const T* tau,
           std::int32_t* info) {
  cusolverDnHandle_t h = solver_handle(dev);
  DeviceGuard g(dev);
  const int m = as_int(m64, "qr"), n = as_int(n64, "qr"), k = as_int(k64, "qr"), lda = as_int(lda64, "qr");
  int lwork = 0;
  auto size = TENAX_PICK(T, cusolverDnSorgqr_bufferSize, cusolverDnDorgqr_bufferSize, cusolverDnCungqr_bufferSize,
                         cusolverDnZungqr_bufferSize);
  auto run = TENAX_PICK(T, cusolverDnSorgqr, cusolverDnDorgqr, cusolverDnCungqr, cusolverDnZungqr);
  check_solver(size(h, m, n, k, cu(a), lda, cu(tau), &lwork), "qr (orgqr buffer size)");
  Workspace<T> w(dev, lwork);
  check_solver(run(h, m, n, k, cu(a), lda, cu(tau), cu(w.get()), lwork, info), "qr (orgqr)");
}

template <class T, class R>
void syevd(int dev, bool vectors, char uplo, std::int64_t n64, T* a, std::int64_t lda64, R* w, std::int32_t* info) {
  cusolverDnHandle_t h = solver_handle(dev);
  DeviceGuard g(dev);
  const int n = as_int(n64, "eigh"), lda = as_int(lda64, "eigh");
  const cusolverEigMode_t jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  int lwork = 0;
  auto size = TENAX_PICK(T, cusolverDnSsyevd_bufferSize, cusolverDnDsyevd_bufferSize, cusolverDnCheevd_bufferSize,
                         cusolverDnZheevd_bufferSize);
  auto run = TENAX_PICK(T, cusolverDnSsyevd, cusolverDnDsyevd, cusolverDnCheevd, cusolverDnZheevd);
  check_solver(size(h, jobz, fill_of(uplo), n, cu(a), lda, w, &lwork), "eigh (syevd buffer size)");
  Workspace<T> ws(dev, lwork);
  check_solver(run(h, jobz, fill_of(uplo), n, cu(a), lda, w, cu(ws.get()), lwork, info), "eigh (syevd)");
}

template <class T, class R>
void gesvdj(int dev, bool vectors, bool econ, std::int64_t m64, std::int64_t n64, T* a, std::int64_t lda64, R* s, T* u,
            std::int64_t ldu64, T* v, std::int64_t ldv64, std::int32_t* info) {
  cusolverDnHandle_t h = solver_handle(dev);
  DeviceGuard g(dev);
  const int m = as_int(m64, "svd"), n = as_int(n64, "svd"), lda = as_int(lda64, "svd");
  const int ldu = as_int(ldu64, "svd"), ldv = as_int(ldv64, "svd");
  const cusolverEigMode_t jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  // One parameter object per thread and device, kept for the thread's life (the solver may still
  // use it after the call returns).
  gesvdjInfo_t& params = handles().svd[static_cast<std::size_t>(dev)];
  if (!params) check_solver(cusolverDnCreateGesvdjInfo(&params), "svd (gesvdj parameters)");
  int lwork = 0;
  auto size = TENAX_PICK(T, cusolverDnSgesvdj_bufferSize, cusolverDnDgesvdj_bufferSize, cusolverDnCgesvdj_bufferSize,
                         cusolverDnZgesvdj_bufferSize);
  auto run = TENAX_PICK(T, cusolverDnSgesvdj, cusolverDnDgesvdj, cusolverDnCgesvdj, cusolverDnZgesvdj);
  check_solver(size(h, jobz, econ ? 1 : 0, m, n, cu(a), lda, s, cu(u), ldu, cu(v), ldv, &lwork, params),
               "svd (gesvdj buffer size)");
  Workspace<T> w(dev, lwork);
  check_solver(
      run(h, jobz, econ ? 1 : 0, m, n, cu(a), lda, s, cu(u), ldu, cu(v), ldv, cu(w.get()), lwork, info, params),
      "svd (gesvdj)");
}

#define TENAX_SOLVER(T, R)                                                                                            \
  template void trsm<T>(int, char, char, char, char, std::int64_t, std::int64_t, const T*, std::int64_t, T*,          \
                        std::int64_t);                                                                                \
  template void trmm<T>(int, char, char, char, char, std::int64_t, std::int64_t, const T*, std::int64_t, T*,          \
                        std::int64_t);                                                                                \
  template void potrf<T>(int, std::int64_t, T*, std::int64_t, std::int32_t*);                                         \
  template void getrf<T>(int, std::int64_t, std::int64_t, T*, std::int64_t, std::int32_t*, std::int32_t*);            \
  template void gesvdj<T, R>(int, bool, bool, std::int64_t, std::int64_t, T*, std::int64_t, R*, T*, std::int64_t, T*, \
                             std::int64_t, std::int32_t*);                                                            \
  template void getrs<T>(int, char, std::int64_t, std::int64_t, const T*, std::int64_t, const std::int32_t*, T*,      \
                         std::int64_t, std::int32_t*);                                                                \
  template void geqrf<T>(int, std::int64_t, std::int64_t, T*, std::int64_t, T*, std::int32_t*);                       \
  template void orgqr<T>(int, std::int64_t, std::int64_t, std::int64_t, T*, std::int64_t, const T*, std::int32_t*);   \
  template void syevd<T, R>(int, bool, char, std::int64_t, T*, std::int64_t, R*, std::int32_t*);
TENAX_SOLVER(float, float)
TENAX_SOLVER(double, double)
TENAX_SOLVER(std::complex<float>, float)
TENAX_SOLVER(std::complex<double>, double)
#undef TENAX_SOLVER

}  // namespace tenax::detail::cuda
