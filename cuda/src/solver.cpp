// cuSOLVER (dense) and cuBLAS trsm/trmm for the CUDA backend's linear algebra: one handle per thread and
// device on the device's stream; workspaces from the device pool, returned in stream order.
#include <cublas_v2.h>
#include <cusolverDn.h>

#include <algorithm>
#include <array>
#include <complex>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "runtime.hpp"
#include "tenax/backend/cuda.hpp"
#include "tenax/backend/cuda_batching.hpp"
#include "tenax/backend/eigenvectors.hpp"
#include "tenax/core/dtype.hpp"
#include "tenax/core/error.hpp"

namespace tenax::detail::cuda {

cublasHandle_t blas_handle(int dev);                       // blas.cpp
void check_blas(cublasStatus_t s, std::string_view what);  // blas.cpp

namespace {

void check_solver(cusolverStatus_t s, std::string_view what) {
  if (s != CUSOLVER_STATUS_SUCCESS) fail("cuda", what, ": cuSOLVER status ", static_cast<int>(s));
}

struct Handles {
  std::array<cusolverDnHandle_t, 64> h{};
  std::array<gesvdjInfo_t, 64> svd{};   // gesvdj's parameters (default tolerance and sweeps)
  std::array<syevjInfo_t, 64> syevj{};  // syevjBatched's parameters (default tolerance and sweeps)
  ~Handles() {
    for (syevjInfo_t x : syevj)
      if (x) (void)cusolverDnDestroySyevjInfo(x);
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
  Workspace(int dev, std::int64_t count)
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

// Batched entry points take int counts, and some versions' kernels at most 65535 matrices per
// grid dimension (as for gemm in blas.cpp): a batch goes in chunks of at most kChunk (or `chunk`) matrices,
// f(first matrix of the chunk, its size).
constexpr int kChunk = 65535;
template <class F>
void in_chunks(std::int64_t batch, F&& f, int chunk = kChunk) {
  for (std::int64_t done = 0; done < batch;) {
    const int nb = static_cast<int>(std::min<std::int64_t>(batch - done, chunk));
    f(done, nb);
    done += nb;
  }
}

// The device array of matrix pointers a batched entry point takes, for one chunk: for each
// (base, byte stride) set, `count` (<= kChunk) pointers base + i * stride, one set after the
// other (fill_pointers, shape.cu).
class PointerArray {
 public:
  PointerArray(int dev, int count, std::initializer_list<std::pair<const void*, std::int64_t>> sets)
      : w_(dev, count * static_cast<int>(sets.size())), count_(count) {
    PointerSets p;
    for (const auto& [base, stride] : sets) {
      p.base[p.sets] = static_cast<const char*>(base);
      p.stride[p.sets++] = stride;
    }
    fill_pointers(dev, p, count, w_.get());
  }
  // Set s as the entry points' T* array.
  template <class T>
  T** get(int s) const {
    return reinterpret_cast<T**>(w_.get() + static_cast<std::ptrdiff_t>(s) * count_);
  }

 private:
  Workspace<void*> w_;
  int count_;
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
// 'C' of a real type is 'T' (cuBLAS documents CUBLAS_OP_C for real types; cuSOLVER's getrs does not).
template <class T>
cublasOperation_t op_of(char t) {
  if (t == 'N') return CUBLAS_OP_N;
  return t == 'T' || !tenax::is_complex_v<T> ? CUBLAS_OP_T : CUBLAS_OP_C;
}

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
    s = f(h, sm, fill_of(uplo), op_of<T>(trans), dm, mi, ni, cu(&one), cu(a), ldai, cu(b), ldbi);
  } else {
    auto f = TENAX_PICK(T, cublasStrmm, cublasDtrmm, cublasCtrmm, cublasZtrmm);
    s = f(h, sm, fill_of(uplo), op_of<T>(trans), dm, mi, ni, cu(&one), cu(a), ldai, cu(b), ldbi, cu(b), ldbi);
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
void trsm_strided(int dev, char side, char uplo, char trans, char diag, std::int64_t m64, std::int64_t n64, const T* a,
                  std::int64_t lda64, std::int64_t stride_a, T* b, std::int64_t batch) {
  const std::int64_t ldb = std::max<std::int64_t>(1, m64), sb = ldb * n64;
  if (!batching::trsm_batched(side == 'L' ? m64 : n64, batch)) {
    for (std::int64_t i = 0; i < batch; ++i)
      trsm(dev, side, uplo, trans, diag, m64, n64, a + i * stride_a, lda64, b + i * sb, ldb);
    return;
  }
  cublasHandle_t h = blas_handle(dev);
  DeviceGuard g(dev);
  const T one(1);
  const int m = as_int(m64, "solve_triangular"), n = as_int(n64, "solve_triangular");
  const int lda = as_int(lda64, "solve_triangular"), ldbi = as_int(ldb, "solve_triangular");
  auto run = TENAX_PICK(T, cublasStrsmBatched, cublasDtrsmBatched, cublasCtrsmBatched, cublasZtrsmBatched);
  in_chunks(batch, [&](std::int64_t done, int nb) {
    const PointerArray p(
        dev, nb,
        {{a + done * stride_a, stride_a * std::int64_t{sizeof(T)}}, {b + done * sb, sb * std::int64_t{sizeof(T)}}});
    check_blas(run(h, side == 'L' ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT, fill_of(uplo), op_of<T>(trans),
                   diag == 'U' ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT, m, n, cu(&one), p.get<cu_t<T>>(0), lda,
                   p.get<cu_t<T>>(1), ldbi, nb),
               "solve_triangular (cublas trsmBatched)");
  });
}

// One batched call (batching::*, in chunks) or one call per matrix with one workspace. Matrices
// are packed one after another with leading dimension max(1, rows).

template <class T>
void potrf(int dev, std::int64_t n64, std::int64_t batch, T* a, std::int32_t* info) {
  cusolverDnHandle_t h = solver_handle(dev);
  DeviceGuard g(dev);
  const int n = as_int(n64, "cholesky"), lda = std::max(1, n);
  const std::int64_t sa = std::int64_t{lda} * n;
  if (batching::potrf_batched(batch)) {
    auto run = TENAX_PICK(T, cusolverDnSpotrfBatched, cusolverDnDpotrfBatched, cusolverDnCpotrfBatched,
                          cusolverDnZpotrfBatched);
    in_chunks(batch, [&](std::int64_t done, int nb) {
      const PointerArray p(dev, nb, {{a + done * sa, sa * std::int64_t{sizeof(T)}}});
      check_solver(run(h, CUBLAS_FILL_MODE_LOWER, n, p.get<cu_t<T>>(0), lda, info + done, nb),
                   "cholesky (potrfBatched)");
    });
    return;
  }
  int lwork = 0;
  auto size = TENAX_PICK(T, cusolverDnSpotrf_bufferSize, cusolverDnDpotrf_bufferSize, cusolverDnCpotrf_bufferSize,
                         cusolverDnZpotrf_bufferSize);
  auto run = TENAX_PICK(T, cusolverDnSpotrf, cusolverDnDpotrf, cusolverDnCpotrf, cusolverDnZpotrf);
  check_solver(size(h, CUBLAS_FILL_MODE_LOWER, n, cu(a), lda, &lwork), "cholesky (potrf buffer size)");
  Workspace<T> w(dev, lwork);
  for (std::int64_t b = 0; b < batch; ++b)
    check_solver(run(h, CUBLAS_FILL_MODE_LOWER, n, cu(a + b * sa), lda, cu(w.get()), lwork, info + b),
                 "cholesky (potrf)");
}

template <class T>
void getrf(int dev, std::int64_t m64, std::int64_t n64, std::int64_t batch, T* a, std::int32_t* ipiv,
           std::int32_t* info) {
  DeviceGuard g(dev);
  const int m = as_int(m64, "lu"), n = as_int(n64, "lu"), lda = std::max(1, m);
  const std::int64_t sa = std::int64_t{lda} * n, sp = std::min(m, n);
  if (batching::getrf_batched<T>(m, n, batch)) {
    cublasHandle_t h = blas_handle(dev);
    auto run = TENAX_PICK(T, cublasSgetrfBatched, cublasDgetrfBatched, cublasCgetrfBatched, cublasZgetrfBatched);
    in_chunks(batch, [&](std::int64_t done, int nb) {
      const PointerArray p(dev, nb, {{a + done * sa, sa * std::int64_t{sizeof(T)}}});
      check_blas(run(h, n, p.get<cu_t<T>>(0), lda, ipiv + done * sp, info + done, nb), "lu (cublas getrfBatched)");
    });
    return;
  }
  cusolverDnHandle_t h = solver_handle(dev);
  int lwork = 0;
  auto size = TENAX_PICK(T, cusolverDnSgetrf_bufferSize, cusolverDnDgetrf_bufferSize, cusolverDnCgetrf_bufferSize,
                         cusolverDnZgetrf_bufferSize);
  auto run = TENAX_PICK(T, cusolverDnSgetrf, cusolverDnDgetrf, cusolverDnCgetrf, cusolverDnZgetrf);
  check_solver(size(h, m, n, cu(a), lda, &lwork), "lu (getrf buffer size)");
  Workspace<T> w(dev, lwork);
  for (std::int64_t b = 0; b < batch; ++b)
    check_solver(run(h, m, n, cu(a + b * sa), lda, cu(w.get()), ipiv + b * sp, info + b), "lu (getrf)");
}

template <class T>
void getrs(int dev, char trans, std::int64_t n64, std::int64_t nrhs64, std::int64_t batch, const T* lu,
           const std::int32_t* ipiv, T* x) {
  DeviceGuard g(dev);
  const int n = as_int(n64, "lu_solve"), nrhs = as_int(nrhs64, "lu_solve"), ld = std::max(1, n);
  const std::int64_t sa = std::int64_t{ld} * n, sx = std::int64_t{ld} * nrhs;
  if (batching::getrs_batched(n, nrhs, batch, trans != 'N')) {
    cublasHandle_t h = blas_handle(dev);
    auto run = TENAX_PICK(T, cublasSgetrsBatched, cublasDgetrsBatched, cublasCgetrsBatched, cublasZgetrsBatched);
    in_chunks(batch, [&](std::int64_t done, int nb) {
      const PointerArray p(
          dev, nb, {{lu + done * sa, sa * std::int64_t{sizeof(T)}}, {x + done * sx, sx * std::int64_t{sizeof(T)}}});
      int bad_argument = 0;  // on the host: only argument checks, never a numerical failure
      check_blas(run(h, op_of<T>(trans), n, nrhs, p.get<cu_t<T>>(0), ld, ipiv + done * n, p.get<cu_t<T>>(1), ld,
                     &bad_argument, nb),
                 "lu_solve (cublas getrsBatched)");
      TENAX_CHECK(bad_argument == 0, "lu_solve", "cublas getrsBatched rejected argument ", -bad_argument);
    });
    return;
  }
  cusolverDnHandle_t h = solver_handle(dev);
  auto run = TENAX_PICK(T, cusolverDnSgetrs, cusolverDnDgetrs, cusolverDnCgetrs, cusolverDnZgetrs);
  Workspace<int> info(dev, 1);  // getrs reports only argument errors, which the checks above exclude
  for (std::int64_t b = 0; b < batch; ++b)
    check_solver(run(h, op_of<T>(trans), n, nrhs, cu(lu + b * sa), ld, ipiv + b * n, cu(x + b * sx), ld, info.get()),
                 "lu_solve (getrs)");
}

template <class T>
void geqrf(int dev, std::int64_t m64, std::int64_t n64, std::int64_t batch, T* a, T* tau, std::int32_t* info) {
  cusolverDnHandle_t h = solver_handle(dev);
  DeviceGuard g(dev);
  const int m = as_int(m64, "qr"), n = as_int(n64, "qr"), lda = std::max(1, m);
  const std::int64_t sa = std::int64_t{lda} * n, st = std::max(1, std::min(m, n));
  int lwork = 0;
  auto size = TENAX_PICK(T, cusolverDnSgeqrf_bufferSize, cusolverDnDgeqrf_bufferSize, cusolverDnCgeqrf_bufferSize,
                         cusolverDnZgeqrf_bufferSize);
  auto run = TENAX_PICK(T, cusolverDnSgeqrf, cusolverDnDgeqrf, cusolverDnCgeqrf, cusolverDnZgeqrf);
  check_solver(size(h, m, n, cu(a), lda, &lwork), "qr (geqrf buffer size)");
  Workspace<T> w(dev, lwork);
  for (std::int64_t b = 0; b < batch; ++b)
    check_solver(run(h, m, n, cu(a + b * sa), lda, cu(tau + b * st), cu(w.get()), lwork, info + b), "qr (geqrf)");
}

template <class T>
void orgqr(int dev, std::int64_t m64, std::int64_t n64, std::int64_t k64, std::int64_t batch, T* a, const T* tau,
           std::int32_t* info) {
  cusolverDnHandle_t h = solver_handle(dev);
  DeviceGuard g(dev);
  const int m = as_int(m64, "qr"), n = as_int(n64, "qr"), k = as_int(k64, "qr"), lda = std::max(1, m);
  const std::int64_t sa = std::int64_t{lda} * n, st = std::max(1, k);
  int lwork = 0;
  auto size = TENAX_PICK(T, cusolverDnSorgqr_bufferSize, cusolverDnDorgqr_bufferSize, cusolverDnCungqr_bufferSize,
                         cusolverDnZungqr_bufferSize);
  auto run = TENAX_PICK(T, cusolverDnSorgqr, cusolverDnDorgqr, cusolverDnCungqr, cusolverDnZungqr);
  check_solver(size(h, m, n, k, cu(a), lda, cu(tau), &lwork), "qr (orgqr buffer size)");
  Workspace<T> w(dev, lwork);
  for (std::int64_t b = 0; b < batch; ++b)
    check_solver(run(h, m, n, k, cu(a + b * sa), lda, cu(tau + b * st), cu(w.get()), lwork, info + b), "qr (orgqr)");
}

template <class T, class R>
void syevd(int dev, bool vectors, char uplo, std::int64_t n64, std::int64_t batch, T* a, R* w, std::int32_t* info) {
  cusolverDnHandle_t h = solver_handle(dev);
  DeviceGuard g(dev);
  const int n = as_int(n64, "eigh"), lda = std::max(1, n);
  const std::int64_t sa = std::int64_t{lda} * n;
  const cusolverEigMode_t jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  int lwork = 0;
  if (batching::syevj_batched(n, batch)) {
    // Default parameters: tolerance at machine precision, 100 sweeps, eigenvalues sorted ascending.
    syevjInfo_t& params = handles().syevj[static_cast<std::size_t>(dev)];
    if (!params) check_solver(cusolverDnCreateSyevjInfo(&params), "eigh (syevj parameters)");
    auto size = TENAX_PICK(T, cusolverDnSsyevjBatched_bufferSize, cusolverDnDsyevjBatched_bufferSize,
                           cusolverDnCheevjBatched_bufferSize, cusolverDnZheevjBatched_bufferSize);
    auto run = TENAX_PICK(T, cusolverDnSsyevjBatched, cusolverDnDsyevjBatched, cusolverDnCheevjBatched,
                          cusolverDnZheevjBatched);
    in_chunks(batch, [&](std::int64_t done, int nb) {
      T* ab = a + done * sa;
      R* wb = w + done * n;
      check_solver(size(h, jobz, fill_of(uplo), n, cu(ab), lda, wb, &lwork, params, nb),
                   "eigh (syevjBatched buffer size)");
      Workspace<T> ws(dev, lwork);
      check_solver(run(h, jobz, fill_of(uplo), n, cu(ab), lda, wb, cu(ws.get()), lwork, info + done, params, nb),
                   "eigh (syevjBatched)");
    });
    return;
  }
  auto size = TENAX_PICK(T, cusolverDnSsyevd_bufferSize, cusolverDnDsyevd_bufferSize, cusolverDnCheevd_bufferSize,
                         cusolverDnZheevd_bufferSize);
  auto run = TENAX_PICK(T, cusolverDnSsyevd, cusolverDnDsyevd, cusolverDnCheevd, cusolverDnZheevd);
  check_solver(size(h, jobz, fill_of(uplo), n, cu(a), lda, w, &lwork), "eigh (syevd buffer size)");
  Workspace<T> ws(dev, lwork);
  for (std::int64_t b = 0; b < batch; ++b)
    check_solver(run(h, jobz, fill_of(uplo), n, cu(a + b * sa), lda, w + b * n, cu(ws.get()), lwork, info + b),
                 "eigh (syevd)");
}

// cuSOLVER's data type for T.
template <class T>
constexpr cudaDataType data_type() {
  if constexpr (std::is_same_v<T, float>)
    return CUDA_R_32F;
  else if constexpr (std::is_same_v<T, double>)
    return CUDA_R_64F;
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    return CUDA_C_32F;
  else
    return CUDA_C_64F;
}

template <class T, class R>
void geev(int dev, std::int64_t n, std::int64_t batch, T* a, std::complex<R>* w, std::complex<R>* v,
          std::int32_t* info) {
  using C = std::complex<R>;
  constexpr bool cplx = tenax::is_complex_v<T>;
  cusolverDnHandle_t h = solver_handle(dev);
  DeviceGuard g(dev);
  const std::int64_t ld = std::max<std::int64_t>(1, n), nn = n * n;
  const bool vectors = v != nullptr;
  const cusolverEigMode_t jobvr = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  constexpr cudaDataType ta = data_type<T>(), tw = data_type<C>();
  // Real A: cuSOLVER writes LAPACK's packed real vectors (to scratch); complex A: the vectors.
  Workspace<T> packed(dev, vectors && !cplx ? nn : 1);
  auto vr_of = [&](std::int64_t b) -> void* {
    if (!vectors) return nullptr;
    if constexpr (cplx)
      return v + b * nn;
    else
      return packed.get();
  };
  struct Params {  // destroyed on every path out, a failed call's included
    cusolverDnParams_t p = nullptr;
    ~Params() {
      if (p) (void)cusolverDnDestroyParams(p);
    }
  } owned;
  check_solver(cusolverDnCreateParams(&owned.p), "eig (cusolverDnCreateParams)");
  cusolverDnParams_t params = owned.p;
  std::size_t dbytes = 0, hbytes = 0;
  check_solver(cusolverDnXgeev_bufferSize(h, params, CUSOLVER_EIG_MODE_NOVECTOR, jobvr, n, ta, a, ld, tw, w, ta,
                                          nullptr, 1, ta, vr_of(0), ld, ta, &dbytes, &hbytes),
               "eig (Xgeev buffer size)");
  Workspace<char> dwork(dev, static_cast<std::int64_t>(dbytes));
  std::vector<char> hwork(std::max<std::size_t>(1, hbytes));
  // The eigenvectors go through the host for the backend's phase convention (and, for real A,
  // the unpacking of conjugate pairs): backend/eigenvectors.hpp. geev itself runs partly on the
  // host, so this adds a copy, not a synchronisation the solver did not already make.
  std::vector<C> hw(static_cast<std::size_t>(n)), hv(static_cast<std::size_t>(nn));
  std::vector<T> hpacked(vectors && !cplx ? static_cast<std::size_t>(nn) : 0);
  std::vector<R> wr(static_cast<std::size_t>(n)), wi(static_cast<std::size_t>(n));
  const Device host = Device::cpu(), here = Device::cuda(dev);
  for (std::int64_t b = 0; b < batch; ++b) {
    check_solver(cusolverDnXgeev(h, params, CUSOLVER_EIG_MODE_NOVECTOR, jobvr, n, ta, a + b * nn, ld, tw, w + b * n, ta,
                                 nullptr, 1, ta, vr_of(b), ld, ta, dwork.get(), dbytes, hwork.data(), hbytes, info + b),
                 "eig (Xgeev)");
    if (!vectors || n == 0) continue;
    if constexpr (cplx) {
      copy_bytes(hv.data(), host, v + b * nn, here, sizeof(C) * static_cast<std::size_t>(nn));
    } else {
      copy_bytes(hw.data(), host, w + b * n, here, sizeof(C) * static_cast<std::size_t>(n));
      copy_bytes(hpacked.data(), host, packed.get(), here, sizeof(T) * static_cast<std::size_t>(nn));
      for (std::int64_t i = 0; i < n; ++i) wr[i] = hw[i].real(), wi[i] = hw[i].imag();
      unpack_real_eigenvectors<R>(n, wr.data(), wi.data(), hpacked.data(), hw.data(), hv.data(), n);
    }
    canonical_eigenvector_phases<R>(n, hv.data(), n);
    copy_bytes(v + b * nn, here, hv.data(), host, sizeof(C) * static_cast<std::size_t>(nn));
  }
}

template <class T, class R>
void gesvdj(int dev, bool vectors, bool econ, std::int64_t m64, std::int64_t n64, std::int64_t batch, T* a, R* s, T* u,
            std::int64_t uc64, T* v, std::int64_t vc64, std::int32_t* info) {
  cusolverDnHandle_t h = solver_handle(dev);
  DeviceGuard g(dev);
  const int m = as_int(m64, "svd"), n = as_int(n64, "svd");
  const int lda = std::max(1, m), ldu = std::max(1, m), ldv = std::max(1, n);
  const std::int64_t sa = std::int64_t{lda} * n, ss = std::min(m, n);
  const cusolverEigMode_t jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  const bool batched = batching::gesvdj_batched(m, n, batch, vectors, econ);
  // Without vectors gesvdj still wants U and V (it fails on null pointers; PyTorch's
  // apply_svd_cusolver_gesvdj notes the same): scratch ones, full per matrix of a chunk when
  // batched, thin and shared when one matrix at a time.
  const std::int64_t uk = vectors ? uc64 : (batched || !econ ? m : ss),
                     vk = vectors ? vc64 : (batched || !econ ? n : ss);
  const std::int64_t su = std::int64_t{ldu} * uk, sv = std::int64_t{ldv} * vk;
  // (batched without vectors: chunks of kScratchChunk matrices, so that the scratch stays small,
  // 128 MiB for complex double 32 x 32)
  constexpr int kScratchChunk = 4096;
  const int chunk = vectors ? kChunk : kScratchChunk;
  const std::int64_t scratch = vectors ? 0 : (batched ? std::min<std::int64_t>(batch, chunk) : 1);
  Workspace<T> su_w(dev, scratch * su), sv_w(dev, scratch * sv);
  T* const ub = vectors ? u : su_w.get();
  T* const vb = vectors ? v : sv_w.get();
  auto at = [&](T* p, std::int64_t stride, std::int64_t b) { return cu(p + (vectors || batched ? b * stride : 0)); };
  // One parameter object per thread and device, kept for the thread's life (the solver may still
  // use it after the call returns). Defaults: tolerance at machine precision, 100 sweeps, values
  // sorted descending.
  gesvdjInfo_t& params = handles().svd[static_cast<std::size_t>(dev)];
  if (!params) check_solver(cusolverDnCreateGesvdjInfo(&params), "svd (gesvdj parameters)");
  int lwork = 0;
  if (batched) {
    // Full U (m x m) and V (n x n), which are the thin ones for a square matrix.
    auto size = TENAX_PICK(T, cusolverDnSgesvdjBatched_bufferSize, cusolverDnDgesvdjBatched_bufferSize,
                           cusolverDnCgesvdjBatched_bufferSize, cusolverDnZgesvdjBatched_bufferSize);
    auto run = TENAX_PICK(T, cusolverDnSgesvdjBatched, cusolverDnDgesvdjBatched, cusolverDnCgesvdjBatched,
                          cusolverDnZgesvdjBatched);
    in_chunks(
        batch,
        [&](std::int64_t done, int nb) {
          // (the scratch U and V hold one chunk: they restart at each chunk)
          const std::int64_t vec = vectors ? done : 0;
          T* ab = a + done * sa;
          R* sb = s + done * ss;
          check_solver(
              size(h, jobz, m, n, cu(ab), lda, sb, at(ub, su, vec), ldu, at(vb, sv, vec), ldv, &lwork, params, nb),
              "svd (gesvdjBatched buffer size)");
          Workspace<T> w(dev, lwork);
          check_solver(run(h, jobz, m, n, cu(ab), lda, sb, at(ub, su, vec), ldu, at(vb, sv, vec), ldv, cu(w.get()),
                           lwork, info + done, params, nb),
                       "svd (gesvdjBatched)");
        },
        chunk);
    return;
  }
  auto size = TENAX_PICK(T, cusolverDnSgesvdj_bufferSize, cusolverDnDgesvdj_bufferSize, cusolverDnCgesvdj_bufferSize,
                         cusolverDnZgesvdj_bufferSize);
  auto run = TENAX_PICK(T, cusolverDnSgesvdj, cusolverDnDgesvdj, cusolverDnCgesvdj, cusolverDnZgesvdj);
  check_solver(size(h, jobz, econ ? 1 : 0, m, n, cu(a), lda, s, at(ub, su, 0), ldu, at(vb, sv, 0), ldv, &lwork, params),
               "svd (gesvdj buffer size)");
  Workspace<T> w(dev, lwork);
  for (std::int64_t b = 0; b < batch; ++b)
    check_solver(run(h, jobz, econ ? 1 : 0, m, n, cu(a + b * sa), lda, s + b * ss, at(ub, su, b), ldu, at(vb, sv, b),
                     ldv, cu(w.get()), lwork, info + b, params),
                 "svd (gesvdj)");
}

#define TENAX_SOLVER(T, R)                                                                                            \
  template void trsm<T>(int, char, char, char, char, std::int64_t, std::int64_t, const T*, std::int64_t, T*,          \
                        std::int64_t);                                                                                \
  template void trmm<T>(int, char, char, char, char, std::int64_t, std::int64_t, const T*, std::int64_t, T*,          \
                        std::int64_t);                                                                                \
  template void trsm_strided<T>(int, char, char, char, char, std::int64_t, std::int64_t, const T*, std::int64_t,      \
                                std::int64_t, T*, std::int64_t);                                                      \
  template void potrf<T>(int, std::int64_t, std::int64_t, T*, std::int32_t*);                                         \
  template void getrf<T>(int, std::int64_t, std::int64_t, std::int64_t, T*, std::int32_t*, std::int32_t*);            \
  template void getrs<T>(int, char, std::int64_t, std::int64_t, std::int64_t, const T*, const std::int32_t*, T*);     \
  template void geqrf<T>(int, std::int64_t, std::int64_t, std::int64_t, T*, T*, std::int32_t*);                       \
  template void orgqr<T>(int, std::int64_t, std::int64_t, std::int64_t, std::int64_t, T*, const T*, std::int32_t*);   \
  template void syevd<T, R>(int, bool, char, std::int64_t, std::int64_t, T*, R*, std::int32_t*);                      \
  template void gesvdj<T, R>(int, bool, bool, std::int64_t, std::int64_t, std::int64_t, T*, R*, T*, std::int64_t, T*, \
                             std::int64_t, std::int32_t*);                                                            \
  template void geev<T, R>(int, std::int64_t, std::int64_t, T*, std::complex<R>*, std::complex<R>*, std::int32_t*);
TENAX_SOLVER(float, float)
TENAX_SOLVER(double, double)
TENAX_SOLVER(std::complex<float>, float)
TENAX_SOLVER(std::complex<double>, double)
#undef TENAX_SOLVER

}  // namespace tenax::detail::cuda
