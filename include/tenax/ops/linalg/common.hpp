#pragma once
// Shared pieces of the linalg ops: shape checks, batch loops over contiguous column-major copies,
// finiteness checks, info handling, and the "higher order" switch for rules that reuse saved
// factors.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tenax/ad/mode.hpp"
#include "tenax/backend/cpu_provider.hpp"
#include "tenax/backend/tiny_pivots.hpp"
#include "tenax/core/small_vec.hpp"
#include "tenax/core/tensor.hpp"
#include "tenax/kernels/checks.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/kernels/parallel.hpp"
#include "tenax/ops/fwd.hpp"

namespace tenax::linalg {

// Raised by the default (non-_ex) variants when a factorization fails numerically.
class LinAlgError : public Error {
 public:
  using Error::Error;
};

}  // namespace tenax::linalg

namespace tenax::detail {

// The shape of a batch of vectors (n x batch) or of matrices (m x n x batch).
inline Shape with_batch(std::int64_t n, const Shape& batch) {
  Shape s{n};
  for (auto d : batch) s.push_back(d);
  return s;
}
inline Shape with_batch(std::int64_t m, std::int64_t n, const Shape& batch) {
  Shape s{m, n};
  for (auto d : batch) s.push_back(d);
  return s;
}

inline Shape mat_batch_shape(const Shape& s) {
  Shape b;
  for (int d = 2; d < s.size(); ++d) b.push_back(s[d]);
  return b;
}

inline std::int64_t mat_batch_count(const Shape& s) { return numel_of(mat_batch_shape(s)); }

// Checks that a (the argument named arg in op's messages) is a matrix or a batch of matrices.
template <class T>
void check_matrix(std::string_view op, const Tensor<T>& a, std::string_view arg = "A") {
  TENAX_CHECK(a.defined(), op, "undefined input ", arg, " (default-constructed)");
  TENAX_CHECK(a.dim() >= 2, op, "expected ", arg, " to be a matrix or a batch of matrices (rank >= 2), got shape ",
              a.shape(), " (", dtype_traits<T>::name, " on ", a.device().str(), ")");
  check_kernel_device(op, a.device());
  TENAX_CHECK(a.shape()[0] <= INT_MAX && a.shape()[1] <= INT_MAX, op, "matrix dimensions of shape ", a.shape(),
              " exceed the provider's 32-bit index");
}

template <class T>
void check_square(std::string_view op, const Tensor<T>& a, std::string_view arg = "A") {
  check_matrix(op, a, arg);
  TENAX_CHECK(a.shape()[0] == a.shape()[1], op, "expected ", arg, " to hold square matrices, got shape ", a.shape(),
              " (", dtype_traits<T>::name, " on ", a.device().str(), ")");
}

// A fresh contiguous column-major copy whose matrices the provider may overwrite.
template <class T>
Tensor<T> work_copy(const Tensor<T>& a) {
  Tensor<T> w = Tensor<T>::empty(a.shape(), a.device());
  copy_into(w, a);
  return w;
}

// Calls f(pointer to matrix b, b) for each of nb contiguous m x n matrices from p, in order.
template <class T, class F>
void for_each_matrix(T* p, std::int64_t m, std::int64_t n, std::int64_t nb, F&& f) {
  for (std::int64_t b = 0; b < nb; ++b) f(p + b * m * n, b);
}
template <class T, class F>
void for_each_matrix(const Tensor<T>& t, F&& f) {
  for_each_matrix(t.mutable_data(), t.shape()[0], t.shape()[1], mat_batch_count(t.shape()), f);
}

// for_each_matrix with a batch of small matrices spread over the worker pool (each matrix on one
// thread; f must only write to matrix b's outputs; an exception from f is rethrown for the lowest
// such b). Used where the provider's routines scale when called concurrently: measured
// (bench_threads, 1024 4x4 matrices, 2 threads) geqrf+orgqr 1.8x, syevd 1.8x, gemm 1.5x faster;
// OpenBLAS 0.3.21's own getrf and potrf take a global buffer lock per call and ran 2x slower, so
// LU, solve and Cholesky batches stay on the calling thread.
template <class T, class F>
void for_each_matrix_parallel(T* p, std::int64_t m, std::int64_t n, std::int64_t nb, F&& f) {
  const std::int64_t mm = m * n;
  if (nb >= 2 && mm <= cpu::kParallelMaxMatrixElements && nb * mm * std::min(m, n) >= cpu::kParallelMinBatchWork) {
    cpu::parallel_for(nb, [&](std::int64_t b) { f(p + b * mm, b); });
    return;
  }
  for_each_matrix(p, m, n, nb, f);
}
template <class T, class F>
void for_each_matrix_parallel(const Tensor<T>& t, F&& f) {
  for_each_matrix_parallel(t.mutable_data(), t.shape()[0], t.shape()[1], mat_batch_count(t.shape()), f);
}

// The pieces of a CPU factorization's captured kernel (kernels/capture.hpp): a contiguous
// scratch tensor the kernel keeps across runs, and the copy of an input into a contiguous buffer
// of its shape (what work_copy does, as a kernel on the two first elements).
template <class T>
struct Scratch {
  ImplPtr body;
  explicit Scratch(const Shape& shape) : body(Tensor<T>::empty(shape).impl()) {}
  T* get() const { return static_cast<T*>(body->data()); }
};
template <class T>
auto copy_to_contiguous(const Tensor<T>& src) {
  Strides dst = col_major_strides(src.shape());
  for (auto& x : dst) x *= static_cast<std::int64_t>(sizeof(T));
  const cpu::LoopNest<2> nest = cpu::merge_loops<2>(src.shape(), {dst, byte_strides(*src.impl())});
  return [nest](char* d, char* s) { run_map_cpu<T, fn::Convert<T>, T>(fn::Convert<T>{}, nest, {d, s}); };
}

// Refills matrix b of a kernel's in-place factorization with its input, for cpu::getrf_exact:
// copies the whole input once, on first use (a subnormal pivot is rare). Not thread-safe: for
// batches run on the calling thread.
template <class T, class Copy>
class Reload {
 public:
  Reload(const Copy& copy, char* src, std::int64_t matrices, std::int64_t matrix_size)
      : copy_(copy), src_(src), count_(matrices * matrix_size), size_(matrix_size) {}
  void operator()(T* dst, std::int64_t b) {
    if (buf_.empty()) {
      buf_.resize(static_cast<std::size_t>(count_));
      copy_(reinterpret_cast<char*>(buf_.data()), src_);
    }
    std::copy_n(buf_.data() + b * size_, size_, dst);
  }

 private:
  const Copy& copy_;
  char* src_;
  std::int64_t count_, size_;
  std::vector<T> buf_;
};

// Whether all n entries at p are finite: x * 0 is 0 for finite x and NaN for inf or NaN, summed in
// eight independent lanes (no early exit and no reassociation needed, so the loop vectorizes: about
// 3x the speed of an isfinite test per entry; the solve rules scan whole solutions with it).
template <class T>
bool all_finite(const T* p, std::int64_t n) {
  using R = real_t<T>;
  const R* r = reinterpret_cast<const R*>(p);  // a complex entry is two reals
  const std::int64_t m = is_complex_v<T> ? 2 * n : n;
  R lane[8] = {};
  std::int64_t i = 0;
  for (; i + 8 <= m; i += 8)
    for (int j = 0; j < 8; ++j) lane[j] += r[i + j] * R(0);
  R t = 0;
  for (; i < m; ++i) t += r[i] * R(0);
  for (int j = 0; j < 8; ++j) t += lane[j];
  return t == R(0);
}

// Batch element index b as a multi-index over the batch shape, for messages.
inline std::string batch_index(const Shape& shape, std::int64_t b) {
  const Shape bs = mat_batch_shape(shape);
  if (bs.size() == 0) return "";
  std::ostringstream o;
  o << " in batch element [";
  for (int d = 0; d < bs.size(); ++d) {
    o << (d ? ", " : "") << b % bs[d];
    b /= bs[d];
  }
  o << "]";
  return o.str();
}

// Info code tenax uses for a non-finite input (checked before LAPACK runs).
inline constexpr std::int32_t kNonFiniteInfo = -1;
// What a LinAlgError says of a matrix with inf or NaN entries (info kNonFiniteInfo).
inline constexpr const char* kNonFiniteMessage = "the input contains inf or NaN";

// A matrix whose getrf did not run (inf or NaN input): its factors are NaN (so every solve and
// derivative through them is NaN, not partly finite) and its k pivots make no interchange
// (1, 2, ..., k), so every later use of them stays in range.
template <class T>
void mark_nonfinite_lu(T* lu, std::int64_t mn, std::int32_t* pv, std::int64_t k) {
  std::fill(lu, lu + mn, T(std::numeric_limits<real_t<T>>::quiet_NaN()));
  for (std::int64_t i = 0; i < k; ++i) pv[i] = static_cast<std::int32_t>(i + 1);
}

// The pivots 1, 2, ..., k (no interchange) as a tensor on dev.
inline Tensor<std::int32_t> identity_pivots(std::int64_t k, Device dev) {
  std::vector<std::int32_t> one_based(static_cast<std::size_t>(k));
  for (std::int64_t i = 0; i < k; ++i) one_based[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i + 1);
  return Tensor<std::int32_t>::from_row_major(Shape{k}, one_based, dev);
}

// The Error for pivot i of matrix b being v, outside 1..m (pivots: the shape and device of the
// pivot tensor, k x batch).
[[noreturn]] inline void bad_pivot(std::string_view op, std::int64_t i, std::int64_t b, std::int64_t v, std::int64_t m,
                                   const Shape& pivots, const Device& dev) {
  fail(op, "pivot ", i, " of matrix ", b, " is ", v, ", outside 1..", m,
       " (int32 pivots, broadcast to the batch: shape ", pivots, " on ", dev.str(),
       "; LAPACK's 1-based row interchanges, as lu_factor returns them)");
}

// Raises an Error naming op when a pivot in pv (contiguous, of shape k x batch, on the CPU) is
// outside 1..m: LAPACK-style pivots from the user are row indices the kernels would read and write.
inline void check_pivots(std::string_view op, const std::int32_t* pv, std::int64_t m, const Shape& shape) {
  const std::int64_t k = shape[0], nb = numel_of(shape) / std::max<std::int64_t>(k, 1);
  for (std::int64_t b = 0; b < nb; ++b)
    for (std::int64_t i = 0; i < k; ++i)
      if (const std::int32_t v = pv[b * k + i]; v < 1 || v > m) bad_pivot(op, i, b, v, m, shape, Device::cpu());
}

// The permutation of m rows that k checked pivots (1-based interchanges, applied in order) make:
// perm[i] such that (P^T A)[i, :] = A[perm[i], :] for getrf's A = P L U.
inline void permutation_of_pivots(const std::int32_t* pv, std::int64_t k, std::int64_t m, std::int64_t* perm) {
  for (std::int64_t i = 0; i < m; ++i) perm[i] = i;
  for (std::int64_t i = 0; i < k; ++i) std::swap(perm[i], perm[pv[i] - 1]);
}

// True when a rule's result must itself be differentiable (a backward pass being recorded, or
// tangents flowing through it): rules then use differentiable public ops instead of reusing
// saved, non-differentiable factors.
template <class... X>
bool higher_order(const X&... x) {
  const ModeState& m = mode();
  return m.grad_enabled || (m.fw_enabled && (... || (x.defined() && static_cast<bool>(x.impl()->tangent))));
}

// Whether a rule's result will be differentiated again: recorded (recording on and an input
// tracked) or the inputs carry tangents. Narrower than higher_order, which holds in every JVP rule
// while recording is on; for rules whose choice costs more than a reuse of saved factors.
template <class... X>
bool differentiated_again(const X&... x) {
  return (is_grad_enabled() && (... || (x.defined() && x.tracks_grad()))) ||
         (... || (x.defined() && static_cast<bool>(x.impl()->tangent)));
}

// Batch-shaped int32 tensor for info codes (rank 0 for a single matrix).
inline Tensor<std::int32_t> info_tensor(const Shape& input_shape) {
  return Tensor<std::int32_t>::zeros(mat_batch_shape(input_shape));
}

// ---- pieces of the device-neutral forwards (tensor ops only, so they run on any device) ----------

// info with kNonFiniteInfo for each matrix of x (m x n x batch) holding an inf or NaN.
template <class T>
Tensor<std::int32_t> with_nonfinite(const Tensor<std::int32_t>& info, const Tensor<T>& x) {
  const Device dev = x.device();
  const double mm = static_cast<double>(x.shape()[0] * x.shape()[1]);
  const Tensor<double> finite = sum(cast<double>(isfinite(x)), {0, 1}, false);
  return where(lt(finite, Tensor<double>::scalar(mm, dev)), Tensor<std::int32_t>::scalar(kNonFiniteInfo, dev), info);
}

// x (leading dimensions, then the batch of info) with `value` in every batch element whose info != 0.
template <class T>
Tensor<T> fill_where_failed(const Tensor<T>& x, const Tensor<std::int32_t>& info, T value) {
  const Device dev = x.device();
  Shape s;
  for (int d = 0; d < x.dim() - info.dim(); ++d) s.push_back(1);
  for (auto e : info.shape()) s.push_back(e);
  const Tensor<bool> failed = reshape(ne(info, Tensor<std::int32_t>::scalar(0, dev)), s);
  return where(failed, Tensor<T>::scalar(value, dev), x);
}
template <class T>
Tensor<T> nan_where_failed(const Tensor<T>& x, const Tensor<std::int32_t>& info) {
  return fill_where_failed(x, info, T(std::numeric_limits<real_t<T>>::quiet_NaN()));
}

// Raises op's LinAlgError for matrix b (of an input of this shape) holding inf or NaN.
[[noreturn]] inline void raise_nonfinite(std::string_view op, const Shape& shape, std::int64_t b, const char* dtype,
                                         Device dev) {
  std::ostringstream o;
  o << '[' << op << "] " << kNonFiniteMessage << batch_index(shape, b) << " (input shape " << shape << ", " << dtype
    << " on " << dev.str() << ")";
  throw linalg::LinAlgError(o.str());
}

// Raises op's LinAlgError "the input contains inf or NaN" for the first matrix of x (m x n x batch)
// holding one: at once where the host reads the codes, else when the device's results are next
// read (kernels/checks.hpp), so nothing waits for the device here. Returns the codes (batch-shaped:
// kNonFiniteInfo for such a matrix, else 0; undefined for an empty x).
template <class T>
Tensor<std::int32_t> check_finite_input(const char* op, const Tensor<T>& x) {
  if (x.numel() == 0) return {};
  const Tensor<std::int32_t> info = contiguous(
      broadcast_to(with_nonfinite(Tensor<std::int32_t>::scalar(0, x.device()), x), mat_batch_shape(x.shape())));
  auto check = [op = std::string(op), shape = x.shape(), dev = x.device()](const std::int32_t* codes, std::int64_t n) {
    for (std::int64_t b = 0; b < n; ++b)
      if (codes[b] != 0) {
        raise_nonfinite(op, shape, b, dtype_traits<T>::name, dev);
      }
  };
  check_codes(info.impl(), std::move(check));
  return info;
}

// Identity matrices n x n broadcast over a batch shape.
template <class T>
Tensor<T> batch_eye(std::int64_t n, const Shape& batch, Device dev) {
  return expand(Tensor<T>::eye(n, n, dev), with_batch(n, n, batch));
}

}  // namespace tenax::detail

namespace tenax::detail {

// Element offsets of each matrix of `t` when its batch dimensions (from dimension `first`: 2 for
// matrices, 1 for vectors such as pivots) are broadcast to `batch` (inline for a few matrices: an
// eager matmul or triangular op allocates nothing for them).
using BatchOffsets = SmallVec<std::int64_t, 4>;
template <class T>
BatchOffsets batch_offsets(const Tensor<T>& t, const Shape& batch, int first = 2) {
  const std::int64_t nb = numel_of(batch);
  BatchOffsets off(static_cast<std::size_t>(nb));
  Strides st;
  for (int d = 0; d < batch.size(); ++d)
    st.push_back(d + first < t.dim() && t.shape()[d + first] == batch[d] ? t.strides()[d + first] : 0);
  std::int64_t idx[kMaxRank] = {};
  for (std::int64_t i = 0; i < nb; ++i) {
    std::int64_t o = 0;
    for (int d = 0; d < batch.size(); ++d) o += idx[d] * st[d];
    off[static_cast<std::size_t>(i)] = o;
    for (int d = 0; d < batch.size(); ++d) {
      if (++idx[d] < batch[d]) break;
      idx[d] = 0;
    }
  }
  return off;
}

// Whether LAPACK can read x's matrices in place: unit stride in dimension 0, a leading dimension
// of at least the row count.
template <class T>
bool has_unit_row_stride(const Tensor<T>& x) {
  return (x.strides()[0] == 1 || x.shape()[0] <= 1) && x.strides()[1] >= std::max<std::int64_t>(1, x.shape()[0]);
}

// x with a unit stride in dimension 0 (what LAPACK needs), copying only when necessary.
template <class T>
Tensor<T> unit_row_stride(const Tensor<T>& x) {
  return has_unit_row_stride(x) ? x : work_copy(x);
}

// A vector batch v (n x batch) as a row batch (1 x n x batch), to scale matrix columns.
template <class T>
Tensor<T> as_row(const Tensor<T>& v) {
  return reshape(v, with_batch(1, v.shape()));
}

}  // namespace tenax::detail
