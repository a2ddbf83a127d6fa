#pragma once
// The backend interface: what a device kind provides, found through the device registry
// (src/core/devices.cpp). Every routine takes a whole batch of matrices per call, packed one after
// another (each with leading dimension max(1, rows) unless a routine says otherwise), and the
// device's ordinal; flags are the enums of backend/flags.hpp; the SVD returns V^H. Failure codes
// (`info`, LAPACK's meaning) are written to the device, one int32 per matrix, and never read here,
// so no routine waits for the device.
//
// Implementations: the CPU in src/cpu/backend.cpp (the provider's routines per matrix), CUDA in
// cuda/src/backend.cpp (cuBLAS/cuSOLVER, batched entry points where they pay). Elementwise maps and
// reductions are templates over their functors, so they are not virtual functions here: each
// device kind fills its entry of a kernel slot per functor and dtype (kernels/map.hpp,
// kernels/reduce.hpp). A device kind is one more implementation of this interface and its slots;
// op code does not name devices.
#include <complex>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "tenax/backend/axis_geometry.hpp"
#include "tenax/backend/flags.hpp"
#include "tenax/core/device.hpp"
#include "tenax/core/dtype.hpp"
#include "tenax/core/tensor.hpp"

namespace tenax::detail {

// trsm (solve_triangular) or trmm (triangular_matmul).
enum class TriangularBlas { trsm, trmm };

// The dense linear algebra of one scalar type on one device kind.
template <class T>
class BatchedLinalg {
 public:
  using R = real_t<T>;
  virtual ~BatchedLinalg() = default;

  // C_b = op(A_b) op(B_b), matrix b of each operand at its pointer + b * stride (0: one matrix
  // for all), leading dimensions as given.
  virtual void gemm(int dev, blas::Trans ta, blas::Trans tb, std::int64_t m, std::int64_t n, std::int64_t k, const T* a,
                    std::int64_t lda, std::int64_t stride_a, const T* b, std::int64_t ldb, std::int64_t stride_b, T* c,
                    std::int64_t ldc, std::int64_t stride_c, std::int64_t batch) const = 0;
  // X_b = op(A_b)^-1 X_b (trsm) or op(A_b) X_b (trmm) for side Left, X_b op(A_b)^-1 or X_b op(A_b)
  // for Right, in place of the m x n matrices x; A_b at a + aoff[b] with leading dimension lda.
  virtual void triangular(int dev, TriangularBlas r, blas::Side side, blas::Uplo uplo, blas::Trans trans,
                          blas::Diag diag, std::int64_t m, std::int64_t n, const T* a, const std::int64_t* aoff,
                          std::int64_t lda, T* x, std::int64_t batch) const = 0;
  // Cholesky factor in the lower triangle of each n x n matrix (the upper triangle is unspecified).
  virtual void potrf(int dev, std::int64_t n, std::int64_t batch, T* a, std::int32_t* info) const = 0;
  // LU with partial pivoting (ipiv: min(m, n) per matrix, 1-based). refill(b, dst), when the
  // backend needs to factor matrix b again from its original entries (the CPU's refactorization of
  // a subnormal pivot, backend/tiny_pivots.hpp), writes them to dst.
  virtual void getrf(int dev, std::int64_t m, std::int64_t n, std::int64_t batch, T* a, std::int32_t* ipiv,
                     std::int32_t* info, const std::function<void(std::int64_t, T*)>& refill) const = 0;
  // op(A_b) X_b = B_b in place of x (n x nrhs per matrix) with getrf's factors of n x n matrices.
  virtual void getrs(int dev, blas::Trans trans, std::int64_t n, std::int64_t nrhs, std::int64_t batch, const T* lu,
                     const std::int32_t* ipiv, T* x) const = 0;
  // Householder QR in place; tau: max(1, min(m, n)) per matrix.
  virtual void geqrf(int dev, std::int64_t m, std::int64_t n, std::int64_t batch, T* a, T* tau,
                     std::int32_t* info) const = 0;
  // The m x n matrices a overwritten by Q's first n columns from k reflectors; tau: max(1, k) per matrix.
  virtual void orgqr(int dev, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, T* a, const T* tau,
                     std::int32_t* info) const = 0;
  // Eigenvalues (ascending, w: n per matrix) and, if vectors, eigenvectors in place of a.
  virtual void syevd(int dev, bool vectors, blas::Uplo uplo, std::int64_t n, std::int64_t batch, T* a, R* w,
                     std::int32_t* info) const = 0;
  // SVD of each m x n matrix of a (destroyed): s (min(m, n) per matrix, descending) and, when u is
  // not null, U (m x uc) and V^H (vr x n, leading dimension max(1, vr)); uc = vr = min(m, n)
  // (thin) or m and n (full).
  virtual void gesvd(int dev, std::int64_t m, std::int64_t n, std::int64_t batch, T* a, R* s, T* u, std::int64_t uc,
                     T* vh, std::int64_t vr, std::int32_t* info) const = 0;
  // Eigenvalues w (n per matrix, complex, in the solver's order) and, when v is not null, right
  // eigenvectors (n x n per matrix, complex) of the general n x n matrices a (destroyed): geev.
  // Each eigenvector has unit 2-norm and its first largest-modulus entry real and positive
  // (backend/eigenvectors.hpp), so every device returns the same vectors.
  using C = std::complex<R>;
  virtual void geev(int dev, std::int64_t n, std::int64_t batch, T* a, C* w, C* v, std::int32_t* info) const = 0;
  // The factorizations of the linalg ops, with their output conventions (each op's header says
  // them): a batch A (m x n x batch, any strides) in, fresh tensors out, failures in `info` or a
  // LinAlgError as the op documents. The CPU fuses the copy of A, the provider calls on the worker
  // pool and the read-out into one kernel that a prepared program captures (src/cpu/linalg_*.cpp);
  // a device composes the routines above with tensor ops (backend/generic_linalg.hpp).
  using I32 = Tensor<std::int32_t>;
  // L (lower, zero above) and info (ops/linalg/cholesky.hpp).
  virtual std::tuple<Tensor<T>, I32> cholesky(const Tensor<T>& A) const = 0;
  // Q (undefined unless compute_q) and R (ops/linalg/qr.hpp).
  virtual std::tuple<Tensor<T>, Tensor<T>> qr(const Tensor<T>& A, bool complete, bool compute_q,
                                              bool positive_diag) const = 0;
  // w, V (undefined unless vectors), info, the canonical gauge E (ops/linalg/eigh.hpp).
  virtual std::tuple<Tensor<R>, Tensor<T>, I32, Tensor<T>> eigh(const Tensor<T>& A, bool upper, bool vectors,
                                                                bool canonical) const = 0;
  // U, S, Vh (U and Vh undefined unless compute_uv), info, the canonical gauge E (ops/linalg/svd.hpp).
  virtual std::tuple<Tensor<T>, Tensor<R>, Tensor<T>, I32, Tensor<T>> svd(const Tensor<T>& A, bool full_matrices,
                                                                          bool compute_uv, bool canonical) const = 0;
  // w, V (undefined unless vectors), info (ops/linalg/eig.hpp).
  virtual std::tuple<Tensor<C>, Tensor<C>, I32> eig(const Tensor<T>& A, bool vectors) const = 0;
  // Packed LU, pivots, info (ops/linalg/lu.hpp, LuFactor).
  virtual std::tuple<Tensor<T>, I32, I32> lu_factor(const Tensor<T>& A) const = 0;
  // P, L, U, pivots, info (ops/linalg/lu.hpp, Lu).
  virtual std::tuple<Tensor<T>, Tensor<T>, Tensor<T>, I32, I32> lu(const Tensor<T>& A) const = 0;
  // X = A^-1 B (B broadcast over A's batch), LU, pivots, info (ops/linalg/solve.hpp).
  virtual std::tuple<Tensor<T>, Tensor<T>, I32, I32> solve(const Tensor<T>& A, const Tensor<T>& B) const = 0;
  // sign, log|det|, LU, pivots (ops/linalg/slogdet.hpp).
  virtual std::tuple<Tensor<T>, Tensor<R>, Tensor<T>, I32> slogdet(const Tensor<T>& A) const = 0;
  // det, LU, pivots (ops/linalg/det.hpp).
  virtual std::tuple<Tensor<T>, Tensor<T>, I32> det(const Tensor<T>& A) const = 0;
  // exp(A) per matrix (ops/linalg/matrix_exp.hpp: scaling and squaring with one Pade degree for
  // the batch, from its largest 1-norm, and squarings per matrix).
  virtual Tensor<T> matrix_exp(const Tensor<T>& A) const = 0;
  // L(A, E), the Frechet derivative of exp at A in the direction E (E broadcast over A's batch), by
  // differentiating matrix_exp's algorithm (ops/linalg/matrix_exp.hpp, ExpmFrechet), and with
  // with_exp exp(A), which that algorithm computes along the way, bit for bit as matrix_exp does
  // (undefined without with_exp).
  virtual std::tuple<Tensor<T>, Tensor<T>> matrix_exp_frechet(const Tensor<T>& A, const Tensor<T>& E,
                                                              bool with_exp) const = 0;
  // P = A^+ from the thin SVD with PyTorch's tolerance (the singular values above max(atol, rtol
  // times their largest) inverted, the others dropped), the singular values, and X = P B when B is
  // defined (B's batch broadcast to A's) (ops/linalg/pinv.hpp, lstsq.hpp). A failed SVD raises
  // LinAlgError naming `op` (on a device when its results are next read).
  virtual std::tuple<Tensor<T>, Tensor<R>, Tensor<T>> pinv(const char* op, const Tensor<T>& A, const Tensor<T>& B,
                                                           double atol, double rtol) const = 0;
  // The 1/gap terms of the eigh, SVD and eig rules (ops/linalg/spectral.hpp, InversePairs): for x
  // (n x batch), F_ij = 1 / d_ij with d_ij = x_j - x_i (x_j + x_i when sums) off the diagonal and 0 on
  // it; with mask, the pairs with |d_ij| <= rtol max_k |x_k| (per matrix) are 0 in F and true in the
  // second output (all false without mask).
  virtual std::tuple<Tensor<T>, Tensor<bool>> inverse_pairs(const Tensor<T>& x, bool sums, bool mask,
                                                            double rtol) const = 0;
  // The Hermitian fold (fold) or fill of the upper or lower strict triangle of each square matrix
  // of X, Re diag(X) on the diagonal (ops/linalg/triangle_fold.hpp, TriangleFold).
  virtual Tensor<T> triangle_fold(const Tensor<T>& X, bool fold, bool upper) const = 0;
  // out = a b for each matrix of the batch shape `batch` (a and b broadcast over it, any strides;
  // out contiguous, m x n x batch, k > 0) (ops/linalg/matmul.hpp).
  virtual void matmul_into(const Tensor<T>& out, const Tensor<T>& a, const Tensor<T>& b, const Shape& batch) const = 0;
  // op(A)^-1 B or op(A) B (left), B op(A)^-1 or B op(A) (right) with the triangle of A given by
  // upper and unit, batches broadcast (ops/linalg/triangular.hpp).
  virtual Tensor<T> triangular_op(TriangularBlas r, const Tensor<T>& A, const Tensor<T>& B, bool left, bool upper,
                                  bool unit, blas::Trans trans) const = 0;
};

// Routines that depend on the element size only (bit copies), and on index types.
class DeviceKernels {
 public:
  virtual ~DeviceKernels() = default;
  // Zeroes, in each of `batch` contiguous m x n matrices at p, the entries outside the lower
  // (j - i <= k) or upper (j - i >= k) triangle.
  virtual void zero_triangle(int dev, bool lower, std::int64_t k, std::int64_t m, std::int64_t n, std::int64_t batch,
                             void* p, std::size_t bytes) const = 0;
  // out[i, j, b] = x[perm[i, b], j, b] for contiguous m x n x batch matrices (perm: m x batch, 0-based).
  virtual void permute_rows(int dev, std::int64_t m, std::int64_t n, std::int64_t batch, const void* x,
                            const std::int64_t* perm, void* out, std::size_t bytes) const = 0;
  // LAPACK's row interchanges piv (k x batch, 1-based) checked, one matrix at a time: perm (m x
  // batch, 0-based; when not null) receives the permutation they apply and safe (when not null) a
  // copy of piv; a pivot outside 1..m is skipped (safe gets i + 1 there, no interchange), and the
  // first one is reported in bad (2 x batch: 1 + its index and its value; 0, 0 when all are valid).
  virtual void check_pivots(int dev, std::int64_t k, std::int64_t m, std::int64_t batch, const std::int32_t* piv,
                            std::int64_t* perm, std::int32_t* safe, std::int32_t* bad) const = 0;
  // inv[perm[i, b], b] = i for permutations perm (m x batch, 0-based; entries outside 0..m-1 skipped).
  virtual void inverse_permutation(int dev, std::int64_t m, std::int64_t batch, const std::int64_t* perm,
                                   std::int64_t* inv) const = 0;
  // The bit copies of the indexing ops along an axis (backend/axis_geometry.hpp): gather writes
  // out[p] = x[p; axis = idx[p]] (zero bytes where the index is out of range); put writes
  // out[p; axis = idx[p]] = src[p] into out (which already holds x), a target named several times
  // getting the value of the last such position (the largest coordinate along axis). Out-of-range
  // indices are skipped and the first (column-major over g.shape) is reported in bad[0..1]:
  // 1 + its position and its value; 0, 0 when all are in range.
  virtual void gather_axis(int dev, const AxisGeometry& g, const std::int64_t* idx, const void* x, void* out,
                           std::size_t bytes, std::int64_t* bad) const = 0;
  virtual void put_axis(int dev, const AxisGeometry& g, const std::int64_t* idx, const void* src, void* out,
                        std::size_t bytes, std::int64_t* bad) const = 0;
};

// One device kind's backend: its kernels and its linear algebra per scalar type.
struct Backend {
  const char* name = "";
  const DeviceKernels* kernels = nullptr;
  const BatchedLinalg<float>* f32 = nullptr;
  const BatchedLinalg<double>* f64 = nullptr;
  const BatchedLinalg<std::complex<float>>* c64 = nullptr;
  const BatchedLinalg<std::complex<double>>* c128 = nullptr;
};

// The backend of d's kind; raises "[op] no kernel for device ..." when none is built in.
const Backend& backend_for(std::string_view op, Device d);
// Whether a backend for d's kind is built in (the CPU's always is).
bool device_backend_built(Device d);
inline bool has_backend(Device d) { return d.is_cpu() || device_backend_built(d); }
[[noreturn]] void fail_no_linalg(std::string_view op, Device d, const char* dtype);

template <class T>
const BatchedLinalg<T>& linalg_backend(std::string_view op, Device d) {
  const Backend& b = backend_for(op, d);
  const BatchedLinalg<T>* l = nullptr;
  if constexpr (std::is_same_v<T, float>)
    l = b.f32;
  else if constexpr (std::is_same_v<T, double>)
    l = b.f64;
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    l = b.c64;
  else
    l = b.c128;
  if (l == nullptr) [[unlikely]]
    fail_no_linalg(op, d, dtype_traits<T>::name);
  return *l;
}

}  // namespace tenax::detail
