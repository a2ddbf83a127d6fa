#pragma once
// The CPU's BatchedLinalg (backend/backend.hpp): the provider's routines once per matrix, and the
// linalg ops' factorizations as fused kernels (src/cpu/linalg_*.cpp, instanced for the four
// floating dtypes).
#include <algorithm>
#include <complex>
#include <functional>
#include <tuple>

#include "tenax/backend/backend.hpp"
#include "tenax/backend/cpu_provider.hpp"
#include "tenax/backend/eigenvectors.hpp"
#include "tenax/backend/tiny_pivots.hpp"
#include "tenax/ops/linalg/common.hpp"

namespace tenax::detail {

// An input of a captured kernel read as contiguous: its own data when it is, else a copy into
// scratch the kernel keeps (read(p) gives the elements from the input's first-element pointer p).
template <class T>
class ContiguousRead {
 public:
  explicit ContiguousRead(const Tensor<T>& x)
      : direct_(x.is_contiguous()), copy_(copy_to_contiguous(x)), buf_(direct_ ? Shape{0} : x.shape()) {}
  const T* read(char* p) const {
    if (direct_) return reinterpret_cast<const T*>(p);
    copy_(reinterpret_cast<char*>(buf_.get()), p);
    return buf_.get();
  }

 private:
  bool direct_;
  decltype(copy_to_contiguous(std::declval<const Tensor<T>&>())) copy_;
  Scratch<T> buf_;
};

template <class T>
class CpuLinalg final : public BatchedLinalg<T> {
 public:
  using R = real_t<T>;
  void gemm(int, blas::Trans ta, blas::Trans tb, std::int64_t m, std::int64_t n, std::int64_t k, const T* a,
            std::int64_t lda, std::int64_t sa, const T* b, std::int64_t ldb, std::int64_t sb, T* c, std::int64_t ldc,
            std::int64_t sc, std::int64_t batch) const override {
    for (std::int64_t i = 0; i < batch; ++i)
      cpu::gemm<T>(ta, tb, m, n, k, T(1), a + i * sa, lda, b + i * sb, ldb, T(0), c + i * sc, ldc);
  }
  void triangular(int, TriangularBlas r, blas::Side side, blas::Uplo uplo, blas::Trans trans, blas::Diag diag,
                  std::int64_t m, std::int64_t n, const T* a, const std::int64_t* aoff, std::int64_t lda, T* x,
                  std::int64_t batch) const override {
    for (std::int64_t b = 0; b < batch; ++b) {
      T* xb = x + b * m * n;
      if (r == TriangularBlas::trsm)
        cpu::trsm<T>(side, uplo, trans, diag, m, n, T(1), a + aoff[b], lda, xb, ld(m));
      else
        cpu::trmm<T>(side, uplo, trans, diag, m, n, T(1), a + aoff[b], lda, xb, ld(m));
    }
  }
  void potrf(int, std::int64_t n, std::int64_t batch, T* a, std::int32_t* info) const override {
    for (std::int64_t b = 0; b < batch; ++b) info[b] = cpu::potrf<T>(blas::Uplo::Lower, n, a + b * n * n, ld(n));
  }
  void getrf(int, std::int64_t m, std::int64_t n, std::int64_t batch, T* a, std::int32_t* ipiv, std::int32_t* info,
             const std::function<void(std::int64_t, T*)>& refill) const override {
    const std::int64_t k = std::min(m, n);
    for (std::int64_t b = 0; b < batch; ++b)
      info[b] = cpu::getrf_exact<T>(m, n, a + b * m * n, ld(m), ipiv + b * k, [&](T* dst) { refill(b, dst); });
  }
  void getrs(int, blas::Trans trans, std::int64_t n, std::int64_t nrhs, std::int64_t batch, const T* lu,
             const std::int32_t* ipiv, T* x) const override {
    for (std::int64_t b = 0; b < batch; ++b)
      cpu::getrs<T>(trans, n, nrhs, lu + b * n * n, ld(n), ipiv + b * n, x + b * n * nrhs, ld(n));
  }
  void geqrf(int, std::int64_t m, std::int64_t n, std::int64_t batch, T* a, T* tau, std::int32_t* info) const override {
    const std::int64_t kt = std::max<std::int64_t>(1, std::min(m, n));
    for (std::int64_t b = 0; b < batch; ++b) info[b] = cpu::geqrf<T>(m, n, a + b * m * n, ld(m), tau + b * kt);
  }
  void orgqr(int, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, T* a, const T* tau,
             std::int32_t* info) const override {
    const std::int64_t kt = std::max<std::int64_t>(1, k);
    for (std::int64_t b = 0; b < batch; ++b) info[b] = cpu::orgqr<T>(m, n, k, a + b * m * n, ld(m), tau + b * kt);
  }
  void syevd(int, bool vectors, blas::Uplo uplo, std::int64_t n, std::int64_t batch, T* a, R* w,
             std::int32_t* info) const override {
    for (std::int64_t b = 0; b < batch; ++b) info[b] = cpu::syevd<T>(vectors, uplo, n, a + b * n * n, ld(n), w + b * n);
  }
  void gesvd(int, std::int64_t m, std::int64_t n, std::int64_t batch, T* a, R* s, T* u, std::int64_t uc, T* vh,
             std::int64_t vr, std::int32_t* info) const override {
    const std::int64_t k = std::min(m, n);
    const bool vectors = u != nullptr;
    const char jobz = !vectors ? 'N' : uc == k && vr == k ? 'S' : 'A';
    for (std::int64_t b = 0; b < batch; ++b)
      info[b] = cpu::gesdd<T>(jobz, m, n, a + b * m * n, ld(m), s + b * k, vectors ? u + b * m * uc : nullptr, ld(m),
                              vectors ? vh + b * vr * n : nullptr, ld(vr));
  }
  using C = std::complex<R>;
  void geev(int, std::int64_t n, std::int64_t batch, T* a, C* w, C* v, std::int32_t* info) const override {
    for (std::int64_t b = 0; b < batch; ++b) {
      C* vb = v != nullptr ? v + b * n * n : nullptr;
      info[b] = cpu::geev<T>(vb != nullptr, n, a + b * n * n, ld(n), w + b * n, vb, ld(n));
      if (vb != nullptr) canonical_eigenvector_phases(n, vb, ld(n));
    }
  }

  // The factorizations: one fused kernel each (src/cpu/linalg_*.cpp).
  using I32 = Tensor<std::int32_t>;
  std::tuple<Tensor<T>, I32> cholesky(const Tensor<T>& A) const override;
  std::tuple<Tensor<T>, Tensor<T>> qr(const Tensor<T>& A, bool complete, bool compute_q,
                                      bool positive_diag) const override;
  std::tuple<Tensor<R>, Tensor<T>, I32, Tensor<T>> eigh(const Tensor<T>& A, bool upper, bool vectors,
                                                        bool canonical) const override;
  std::tuple<Tensor<T>, Tensor<R>, Tensor<T>, I32, Tensor<T>> svd(const Tensor<T>& A, bool full_matrices,
                                                                  bool compute_uv, bool canonical) const override;
  std::tuple<Tensor<C>, Tensor<C>, I32> eig(const Tensor<T>& A, bool vectors) const override;
  std::tuple<Tensor<T>, I32, I32> lu_factor(const Tensor<T>& A) const override;
  std::tuple<Tensor<T>, Tensor<T>, Tensor<T>, I32, I32> lu(const Tensor<T>& A) const override;
  std::tuple<Tensor<T>, Tensor<T>, I32, I32> solve(const Tensor<T>& A, const Tensor<T>& B) const override;
  std::tuple<Tensor<T>, Tensor<R>, Tensor<T>, I32> slogdet(const Tensor<T>& A) const override;
  std::tuple<Tensor<T>, Tensor<T>, I32> det(const Tensor<T>& A) const override;
  std::tuple<Tensor<T>, Tensor<R>, Tensor<T>> pinv(const char* op, const Tensor<T>& A, const Tensor<T>& B, double atol,
                                                   double rtol) const override;
  Tensor<T> matrix_exp(const Tensor<T>& A) const override;
  std::tuple<Tensor<T>, Tensor<T>> matrix_exp_frechet(const Tensor<T>& A, const Tensor<T>& E,
                                                      bool with_exp) const override;
  std::tuple<Tensor<T>, Tensor<bool>> inverse_pairs(const Tensor<T>& x, bool sums, bool mask,
                                                    double rtol) const override;
  Tensor<T> triangle_fold(const Tensor<T>& X, bool fold, bool upper) const override;
  void matmul_into(const Tensor<T>& out, const Tensor<T>& a, const Tensor<T>& b, const Shape& batch) const override;
  Tensor<T> triangular_op(TriangularBlas r, const Tensor<T>& A, const Tensor<T>& B, bool left, bool upper, bool unit,
                          blas::Trans trans) const override;

 private:
  static std::int64_t ld(std::int64_t rows) { return std::max<std::int64_t>(1, rows); }
};

#define TENAX_CPU_LINALG_FOR_FLOATING(M) M(float) M(double) M(std::complex<float>) M(std::complex<double>)

}  // namespace tenax::detail
