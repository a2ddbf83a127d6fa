#pragma once
// The CUDA backend as the host code sees it: plain C++ declarations, no CUDA headers. The
// definitions live in cuda/ (built with the CUDA backend); the templates are explicitly
// instantiated there for every functor and dtype the ops use.
//
// Every launch goes to one stream per device (cuda::stream_of), so work is ordered without
// host synchronisation; the allocator frees into that same stream order. Reading a device buffer
// on the host (copies to the CPU, item()) synchronises that stream.
#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>

#include "tenax/backend/axis_geometry.hpp"
#include "tenax/core/allocator.hpp"
#include "tenax/core/device.hpp"
#include "tenax/core/shape.hpp"

namespace tenax::cuda {

// Number of visible CUDA devices; 0 when none is visible or the driver is missing. Always 0 when
// the backend is not built.
int device_count();
// Waits for all work queued on device `index`.
void synchronize(int index = 0);

}  // namespace tenax::cuda

namespace tenax::detail {
struct LineLoop;  // kernels/line_loop.hpp
}  // namespace tenax::detail

namespace tenax::detail::cuda {

// A merged strided loop over N operands (operand 0 is the output): extents and byte strides per
// dimension, dimension 0 fastest.
template <std::size_t N>
struct Loop {
  int rank = 0;
  std::int64_t numel = 0;
  std::int64_t shape[kMaxRank] = {};
  std::int64_t strides[N][kMaxRank] = {};
  char* ptr[N] = {};
};

// out = f(in...) elementwise on device `dev` (explicitly instantiated in cuda/src/map_*.cu).
template <class Out, class F, class... In>
void map(int dev, F f, const Loop<sizeof...(In) + 1>& loop);

// A reduction: for each of `outputs` outputs (kept dimensions, output and input byte strides),
// fold the `inner` reduced elements (reduced dimensions, input byte strides) from init with combine.
struct ReduceLoop {
  int kept_rank = 0, red_rank = 0;
  std::int64_t outputs = 0, inner = 0;
  std::int64_t kept_shape[kMaxRank] = {}, kept_out[kMaxRank] = {}, kept_in[kMaxRank] = {};
  std::int64_t red_shape[kMaxRank] = {}, red_in[kMaxRank] = {};
  char* out = nullptr;
  const char* in = nullptr;
};
template <class T, class Combine>
void reduce(int dev, Combine combine, T init, const ReduceLoop& loop);

// f along every line of l (kernels/lines.hpp: scans and arg-reductions), one thread per line
// (explicitly instantiated in cuda/src/scan.cu for the functors and dtypes of scan.inc).
template <class Out, class In, class F>
void lines(int dev, F f, const LineLoop& l);

// p[i * F::parts ...] = the draw f(i) for i in [0, n) (kernels/generate.hpp: the random ops),
// one thread per element (explicitly instantiated in cuda/src/random.cu for random.inc's draws).
template <class P, class F>
void generate(int dev, F f, P* p, std::int64_t n);

// p[0..n) = value (the factories full/zeros/ones on a device).
template <class T>
void fill(int dev, T value, T* p, std::int64_t n);

// Zeroes, in each of `batch` contiguous m x n matrices at p, the entries outside the lower
// (j - i <= k) or upper (j - i >= k) triangle.
template <class T>
void zero_triangle(int dev, bool lower, std::int64_t k, std::int64_t m, std::int64_t n, std::int64_t batch, T* p);

// C = op(A) op(B) for `batch` matrices at fixed element strides (cuBLAS gemmStridedBatched);
// trans: 'N' or 'T'. Column-major, like BLAS.
template <class T>
void gemm(int dev, char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k, const T* a,
          std::int64_t lda, std::int64_t stride_a, const T* b, std::int64_t ldb, std::int64_t stride_b, T* c,
          std::int64_t ldc, std::int64_t stride_c, std::int64_t batch);

// cuBLAS trsm: B = op(A)^-1 B (side 'L') or B op(A)^-1 ('R'); uplo 'L'/'U', trans 'N'/'T'/'C',
// diag 'N'/'U'.
template <class T>
void trsm(int dev, char side, char uplo, char trans, char diag, std::int64_t m, std::int64_t n, const T* a,
          std::int64_t lda, T* b, std::int64_t ldb);
// trsm over `batch` right-hand sides packed in b (m x n each, leading dimension max(1, m)) with
// A_i at a + i * stride_a (0: one A for all): one cuBLAS trsmBatched call where
// backend/cuda_batching.hpp chooses it, else one trsm per matrix.
template <class T>
void trsm_strided(int dev, char side, char uplo, char trans, char diag, std::int64_t m, std::int64_t n, const T* a,
                  std::int64_t lda, std::int64_t stride_a, T* b, std::int64_t batch);
// cuBLAS trmm, in place: B = op(A) B (side 'L') or B op(A) ('R'); flags as trsm.
template <class T>
void trmm(int dev, char side, char uplo, char trans, char diag, std::int64_t m, std::int64_t n, const T* a,
          std::int64_t lda, T* b, std::int64_t ldb);

// cuSOLVER (and cuBLAS's batched LU) over `batch` matrices packed one after another, each with
// leading dimension max(1, rows), queued on the device's stream: one batched call where the rules
// of backend/cuda_batching.hpp choose it, else one call per matrix sharing one workspace. `info`
// holds one device int32 per matrix, written by the solver (LAPACK's meaning), never read here.
// Workspaces come from the device pool.
template <class T>
void potrf(int dev, std::int64_t n, std::int64_t batch, T* a, std::int32_t* info);  // lower triangle
// ipiv: min(m, n) per matrix.
template <class T>
void getrf(int dev, std::int64_t m, std::int64_t n, std::int64_t batch, T* a, std::int32_t* ipiv, std::int32_t* info);
// op(A_b) X_b = B_b in place of x (n x nrhs per matrix) with getrf's factors of n x n matrices.
template <class T>
void getrs(int dev, char trans, std::int64_t n, std::int64_t nrhs, std::int64_t batch, const T* lu,
           const std::int32_t* ipiv, T* x);
// tau: max(1, min(m, n)) per matrix.
template <class T>
void geqrf(int dev, std::int64_t m, std::int64_t n, std::int64_t batch, T* a, T* tau, std::int32_t* info);
// The m x n matrices a overwritten by Q's first n columns from k reflectors; tau: max(1, k) per matrix.
template <class T>
void orgqr(int dev, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, T* a, const T* tau,
           std::int32_t* info);
// Eigenvalues (ascending, n per matrix) and, if vectors, eigenvectors in place of a: syevd, or
// Jacobi's syevjBatched for batches of small matrices.
template <class T, class R>
void syevd(int dev, bool vectors, char uplo, std::int64_t n, std::int64_t batch, T* a, R* w, std::int32_t* info);
// Thin (econ) or full SVD by Jacobi (gesvdj or gesvdjBatched), any m x n: s (min(m, n) per matrix,
// descending), U (m x uc) and V (n x vc; V itself, not V^H) when vectors.
template <class T, class R>
void gesvdj(int dev, bool vectors, bool econ, std::int64_t m, std::int64_t n, std::int64_t batch, T* a, R* s, T* u,
            std::int64_t uc, T* v, std::int64_t vc, std::int32_t* info);
// Eigenvalues (w, n per matrix) and, when v is not null, right eigenvectors (n x n per matrix) of
// general matrices by cusolverDnXgeev, one matrix at a time; the eigenvectors in the backend's
// convention (unit columns, first largest-modulus entry real positive; real A's pairs unpacked).
template <class T, class R>
void geev(int dev, std::int64_t n, std::int64_t batch, T* a, std::complex<R>* w, std::complex<R>* v,
          std::int32_t* info);
// LAPACK's row interchanges piv (k x batch, 1-based) checked on the device, one thread per matrix:
// perm (m x batch, 0-based; when not null) receives the permutation they apply and safe (when not
// null) a copy of piv; a pivot outside 1..m is skipped (safe gets i + 1 there, no interchange), so
// nothing outside a matrix is touched, and the first one is reported in bad (2 x batch: 1 + its
// index and its value; 0, 0 when all are valid) for a deferred check.
void check_pivots(int dev, std::int64_t k, std::int64_t m, std::int64_t batch, const std::int32_t* piv,
                  std::int64_t* perm, std::int32_t* safe, std::int32_t* bad);
// inv[perm[i, b], b] = i for permutations perm (m x batch, 0-based; entries outside 0..m-1 skipped).
void inverse_permutation(int dev, std::int64_t m, std::int64_t batch, const std::int64_t* perm, std::int64_t* inv);
// out[i, j, b] = x[perm[i, b], j, b] for contiguous m x n x batch matrices (perm: m x batch, 0-based).
template <class T>
void permute_rows(int dev, std::int64_t m, std::int64_t n, std::int64_t batch, const T* x, const std::int64_t* perm,
                  T* out);

// The indexing kernels (cuda/src/index.cu; DeviceKernels::gather_axis and put_axis, kernels/index.hpp):
// out-of-range indices skipped, the first reported in bad (two int64 on the device).
template <class T>
void gather_axis(int dev, const AxisGeometry& g, const std::int64_t* idx, const T* x, T* out, std::int64_t* bad);
template <class T>
void put_axis(int dev, const AxisGeometry& g, const std::int64_t* idx, const T* src, T* out, std::int64_t* bad);
template <class T>
void scatter_add(int dev, const AxisGeometry& g, const std::int64_t* idx, const T* src, T* out, std::int64_t* bad);
// Stable sort of each line (kernels/index.hpp); scratch: 2 n int64 per line.
template <class T>
void sort(int dev, const LineGeometry& g, const T* x, T* values, std::int64_t* indices, std::int64_t* scratch,
          bool descending);

// The device registry entries (src/core/devices.cpp): the pooled allocator of device `index` and
// copies between a CUDA device and the host or another CUDA device.
Allocator& allocator(int index);
void copy_bytes(void* dst, Device dst_dev, const void* src, Device src_dev, std::size_t bytes);

}  // namespace tenax::detail::cuda
