#pragma once
// Which cuBLAS/cuSOLVER entry point the CUDA backend runs over a batch of equal-sized matrices:
// one batched call (true) or one call per matrix sharing one workspace (false). Plain C++, no CUDA
// headers, so the rules are tested on every machine (tests/cuda/test_cuda_batching.cpp).
//
// Where a batched entry point is allowed is the API's own limit: cublas<t>getrfBatched takes square
// matrices only; cusolverDn<t>syevjBatched and <t>gesvdjBatched take n <= 32 and gesvdjBatched
// computes full U and V only (so thin vectors only of square matrices). Where it is allowed, the
// cut-offs are PyTorch's, which its developers measured (aten/src/ATen/native/cuda/linalg/
// BatchLinearAlgebra.cpp and BatchLinearAlgebraLib.cpp: lu_factor, lu_solve, triangular_solve,
// cholesky, eigh, svd). tenax has not measured them on a GPU yet (bench/RESULTS.md says when it has).
#include <complex>
#include <cstdint>
#include <type_traits>

namespace tenax::detail::cuda::batching {

// getrf: cuBLAS's batched LU beats one cuSOLVER call per matrix while n^2 stays under a threshold
// that grows with the batch (super-linearly in double precision).
template <class T>
constexpr bool getrf_batched(std::int64_t m, std::int64_t n, std::int64_t batch) {
  if (m != n || batch < 2) return false;
  using R = std::conditional_t<std::is_same_v<T, std::complex<float>> || std::is_same_v<T, float>, float, double>;
  constexpr bool is_complex = std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;
  std::int64_t isqrt = 1;
  while ((isqrt + 1) * (isqrt + 1) <= batch) ++isqrt;
  std::int64_t threshold = 0;
  if (batch == 2)
    threshold = (std::is_same_v<R, float> ? 8400 : 2200) * batch;
  else if (std::is_same_v<R, float>)
    threshold = 18600 * batch;
  else
    threshold = (is_complex ? 5200 : 16600) * batch * isqrt;
  return n * n <= threshold;
}

// getrs with nrhs right-hand sides: cuBLAS's batched solve for tiny systems, for small ones with
// few right-hand sides in batches of more than two; cuSOLVER's getrs per matrix otherwise.
constexpr bool getrs_batched(std::int64_t n, std::int64_t nrhs, std::int64_t batch, bool transposed) {
  if (n == nrhs) return n <= 16;
  if (n <= 8) return true;
  if (n <= 64) return !(batch <= 2 && (nrhs <= 64 || transposed || n <= 32)) && nrhs <= 8;
  if (n <= 128) return batch > 2 && nrhs <= 2;
  return false;
}

// Triangular solves with an n x n triangle: cuBLAS's trsmBatched except for a few large ones.
constexpr bool trsm_batched(std::int64_t n, std::int64_t batch) { return batch > 1 && !(batch <= 8 && n >= 64); }

// Cholesky: cuSOLVER's potrfBatched for any batch of two or more.
constexpr bool potrf_batched(std::int64_t batch) { return batch > 1; }

// eigh/eigvalsh: Jacobi's syevjBatched for batches of matrices up to 32 x 32, syevd otherwise.
constexpr bool syevj_batched(std::int64_t n, std::int64_t batch) { return batch > 1 && n <= 32; }

// svd/svdvals: gesvdjBatched for batches of matrices up to 32 x 32 when the vectors asked for are
// full ones (or none); gesvdj per matrix otherwise. (PyTorch keeps rectangular svdvals per
// matrix; the API allows them, and tenax batches them.)
constexpr bool gesvdj_batched(std::int64_t m, std::int64_t n, std::int64_t batch, bool vectors, bool thin) {
  return batch > 1 && m <= 32 && n <= 32 && (!vectors || !thin || m == n);
}

}  // namespace tenax::detail::cuda::batching
