// The CUDA backend behind the device-neutral interface (backend/backend.hpp): cuBLAS/cuSOLVER
// through the routines of backend/cuda.hpp, and the elementwise and reduction kernels registered
// in their kernel slots (kernels/map.hpp, kernels/reduce.hpp). The device registry calls
// add_linked_backends once, when it is first used (src/core/devices.cpp).
#include <complex>
#include <cstring>

#include "../../src/core/registry.hpp"
#include "tenax/backend/cuda.hpp"
#include "tenax/backend/generic_linalg.hpp"
#include "tenax/core/tensor.hpp"
#include "tenax/kernels/generate.hpp"
#include "tenax/kernels/index.hpp"
#include "tenax/kernels/lines.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/kernels/reduce.hpp"
#include "tenax/ops/random/philox.hpp"

namespace tenax::detail {
namespace {

constexpr int kCuda = kind_index(Device::cuda());

// The merged loop nest of a device launch (the same merging as the CPU loops).
template <std::size_t N>
cuda::Loop<N> device_loop(const Shape& shape, const std::array<Strides, N>& st, const std::array<char*, N>& p) {
  const cpu::LoopNest<N> nest = cpu::merge_loops<N>(shape, st);
  cuda::Loop<N> l;
  l.numel = nest.empty ? 0 : nest.numel();
  l.rank = nest.shape.size();
  for (int d = 0; d < l.rank; ++d)
    for (std::size_t k = 0; k < N; ++k) l.strides[k][d] = nest.strides[k][d];
  for (int d = 0; d < l.rank; ++d) l.shape[d] = nest.shape[d];
  for (std::size_t k = 0; k < N; ++k) l.ptr[k] = p[k];
  return l;
}

template <class Out, class F, class... In>
void cuda_map(const F& f, const MapLaunch<sizeof...(In) + 1>& l) {
  const auto loop = device_loop<sizeof...(In) + 1>(l.shape, l.strides, l.ptr);
  if (loop.numel > 0) cuda::map<Out, F, In...>(l.device, f, loop);
}

// Each output folds its inputs from init (kernels in cuda/src/reduce.cu).
template <class T, class Combine>
void cuda_reduce(Combine combine, T init, const ReduceLaunch<T, T>& r) {
  const Tensor<T>& out = r.out;
  const Tensor<T>& x = r.x;
  if (out.numel() == 0) return;
  cuda::ReduceLoop l;
  const std::int64_t es = sizeof(T);
  const Strides os = out.strides();
  l.outputs = out.numel();
  l.inner = 1;
  for (int d = 0; d < x.dim(); ++d) {
    const std::int64_t e = x.shape()[d];
    if (e == 1) continue;
    if (r.mask[d]) {
      l.red_shape[l.red_rank] = e;
      l.red_in[l.red_rank++] = x.strides()[d] * es;
      l.inner *= e;
    } else {
      l.kept_shape[l.kept_rank] = e;
      l.kept_out[l.kept_rank] = os[d] * es;
      l.kept_in[l.kept_rank++] = x.strides()[d] * es;
    }
  }
  if (x.numel() == 0) l.inner = 0;
  l.out = static_cast<char*>(out.impl()->data());
  l.in = static_cast<const char*>(x.impl()->data());
  cuda::reduce<T, Combine>(x.device().index, combine, init, l);
}

// Scans and arg-reductions: one thread per line (cuda/src/scan.cu).
template <class Out, class In, class F>
void cuda_lines(const F& f, const LineLaunch& l) {
  cuda::lines<Out, In, F>(l.device, f, l.loop);
}

// Random draws: one thread per element (cuda/src/random.cu).
template <class P, class F>
void cuda_generate(int dev, const F& f, P* p, std::int64_t n) {
  cuda::generate<P, F>(dev, f, p, n);
}

using c64 = std::complex<float>;
using c128 = std::complex<double>;

// Every map and reduction the .cu files instantiate, in its slot (the same lists).
void register_maps() {
#define TENAX_MAP1(O, F, A) MapKernel<O, F, A>::on[kCuda] = &cuda_map<O, F, A>;
#define TENAX_MAP2(O, F, A, B) MapKernel<O, F, A, B>::on[kCuda] = &cuda_map<O, F, A, B>;
#define TENAX_MAP3(O, F, A, B, C) MapKernel<O, F, A, B, C>::on[kCuda] = &cuda_map<O, F, A, B, C>;
  {
#include "map_unary.inc"
  } {
#include "map_binary.inc"
  } {
#include "map_convert.inc"
  }
#undef TENAX_MAP1
#undef TENAX_MAP2
#undef TENAX_MAP3
}

void register_reductions() {
#define TENAX_REDUCE(T, C) ReduceKernel<T, T, C>::on[kCuda] = &cuda_reduce<T, C>;
#include "reduce.inc"
#undef TENAX_REDUCE
}

void register_lines() {
#define TENAX_LINES(O, I, F) LineKernel<O, I, F>::on[kCuda] = &cuda_lines<O, I, F>;
#include "scan.inc"
#undef TENAX_LINES
}

void register_generators() {
#define TENAX_UNPAREN(...) __VA_ARGS__
#define TENAX_GENERATE(P, F) GenerateKernel<P, TENAX_UNPAREN F>::on[kCuda] = &cuda_generate<P, TENAX_UNPAREN F>;
#include "random.inc"
#undef TENAX_GENERATE
#undef TENAX_UNPAREN
}

char flag(auto e) { return static_cast<char>(e); }

template <class T>
class CudaLinalg final : public BatchedLinalg<T> {
 public:
  using R = real_t<T>;
  void gemm(int dev, blas::Trans ta, blas::Trans tb, std::int64_t m, std::int64_t n, std::int64_t k, const T* a,
            std::int64_t lda, std::int64_t sa, const T* b, std::int64_t ldb, std::int64_t sb, T* c, std::int64_t ldc,
            std::int64_t sc, std::int64_t batch) const override {
    cuda::gemm<T>(dev, flag(ta), flag(tb), m, n, k, a, lda, sa, b, ldb, sb, c, ldc, sc, batch);
  }
  void triangular(int dev, TriangularBlas r, blas::Side side, blas::Uplo uplo, blas::Trans trans, blas::Diag diag,
                  std::int64_t m, std::int64_t n, const T* a, const std::int64_t* aoff, std::int64_t lda, T* x,
                  std::int64_t batch) const override {
    const char sc = flag(side), uc = flag(uplo), tc = flag(trans), dc = flag(diag);
    const std::int64_t ldx = std::max<std::int64_t>(1, m);
    // Triangles at a uniform stride (one per matrix, or one for all): one strided solve.
    const std::int64_t stride = batch > 1 ? aoff[1] - aoff[0] : 0;
    bool uniform = true;
    for (std::int64_t b = 1; b < batch && uniform; ++b) uniform = aoff[b] == aoff[0] + b * stride;
    if (r == TriangularBlas::trsm && uniform) {
      cuda::trsm_strided<T>(dev, sc, uc, tc, dc, m, n, a + aoff[0], lda, stride, x, batch);
      return;
    }
    for (std::int64_t b = 0; b < batch; ++b) {
      if (r == TriangularBlas::trsm)
        cuda::trsm<T>(dev, sc, uc, tc, dc, m, n, a + aoff[b], lda, x + b * m * n, ldx);
      else
        cuda::trmm<T>(dev, sc, uc, tc, dc, m, n, a + aoff[b], lda, x + b * m * n, ldx);
    }
  }
  void potrf(int dev, std::int64_t n, std::int64_t batch, T* a, std::int32_t* info) const override {
    cuda::potrf<T>(dev, n, batch, a, info);
  }
  void getrf(int dev, std::int64_t m, std::int64_t n, std::int64_t batch, T* a, std::int32_t* ipiv, std::int32_t* info,
             const std::function<void(std::int64_t, T*)>&) const override {
    cuda::getrf<T>(dev, m, n, batch, a, ipiv, info);
  }
  void getrs(int dev, blas::Trans trans, std::int64_t n, std::int64_t nrhs, std::int64_t batch, const T* lu,
             const std::int32_t* ipiv, T* x) const override {
    cuda::getrs<T>(dev, flag(trans), n, nrhs, batch, lu, ipiv, x);
  }
  void geqrf(int dev, std::int64_t m, std::int64_t n, std::int64_t batch, T* a, T* tau,
             std::int32_t* info) const override {
    cuda::geqrf<T>(dev, m, n, batch, a, tau, info);
  }
  void orgqr(int dev, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, T* a, const T* tau,
             std::int32_t* info) const override {
    cuda::orgqr<T>(dev, m, n, k, batch, a, tau, info);
  }
  void syevd(int dev, bool vectors, blas::Uplo uplo, std::int64_t n, std::int64_t batch, T* a, R* w,
             std::int32_t* info) const override {
    cuda::syevd<T, R>(dev, vectors, flag(uplo), n, batch, a, w, info);
  }
  void geev(int dev, std::int64_t n, std::int64_t batch, T* a, std::complex<R>* w, std::complex<R>* v,
            std::int32_t* info) const override {
    cuda::geev<T, R>(dev, n, batch, a, w, v, info);
  }
  // gesvdj returns V (n x vr): it goes to a scratch buffer, then V^H into vh by the Conj map.
  void gesvd(int dev, std::int64_t m, std::int64_t n, std::int64_t batch, T* a, R* s, T* u, std::int64_t uc, T* vh,
             std::int64_t vr, std::int32_t* info) const override {
    const std::int64_t k = std::min(m, n);
    const bool vectors = u != nullptr;
    const bool econ = !vectors || (uc == k && vr == k);
    const Tensor<T> v = vectors ? Tensor<T>::empty({n, vr, batch}, Device::cuda(dev)) : Tensor<T>();
    cuda::gesvdj<T, R>(dev, vectors, econ, m, n, batch, a, s, u, uc, vectors ? v.mutable_data() : nullptr, vr, info);
    if (!vectors || vr * n == 0) return;
    const std::int64_t es = sizeof(T);
    cuda::Loop<2> l;
    l.rank = 3;
    l.numel = vr * n * batch;
    const std::int64_t shape[3] = {vr, n, batch}, out[3] = {es, vr * es, vr * n * es},
                       in[3] = {n * es, es, vr * n * es};
    for (int d = 0; d < 3; ++d) {
      l.shape[d] = shape[d];
      l.strides[0][d] = out[d];
      l.strides[1][d] = in[d];
    }
    l.ptr[0] = reinterpret_cast<char*>(vh);
    l.ptr[1] = reinterpret_cast<char*>(v.mutable_data());
    cuda::map<T, fn::Conj, T>(dev, fn::Conj{}, l);
  }

  // The factorizations: the routines above plus tensor ops (backend/generic_linalg.hpp).
  using I32 = Tensor<std::int32_t>;
  std::tuple<Tensor<T>, I32> cholesky(const Tensor<T>& A) const override { return generic::cholesky(A); }
  std::tuple<Tensor<T>, Tensor<T>> qr(const Tensor<T>& A, bool complete, bool compute_q,
                                      bool positive_diag) const override {
    return generic::qr(A, complete, compute_q, positive_diag);
  }
  std::tuple<Tensor<R>, Tensor<T>, I32, Tensor<T>> eigh(const Tensor<T>& A, bool upper, bool vectors,
                                                        bool canonical) const override {
    return generic::eigh(A, upper, vectors, canonical);
  }
  std::tuple<Tensor<T>, Tensor<R>, Tensor<T>, I32, Tensor<T>> svd(const Tensor<T>& A, bool full_matrices,
                                                                  bool compute_uv, bool canonical) const override {
    return generic::svd(A, full_matrices, compute_uv, canonical);
  }
  std::tuple<Tensor<std::complex<R>>, Tensor<std::complex<R>>, I32> eig(const Tensor<T>& A,
                                                                        bool vectors) const override {
    return generic::eig(A, vectors);
  }
  std::tuple<Tensor<T>, I32, I32> lu_factor(const Tensor<T>& A) const override { return generic::lu_factor(A); }
  std::tuple<Tensor<T>, Tensor<T>, Tensor<T>, I32, I32> lu(const Tensor<T>& A) const override { return generic::lu(A); }
  std::tuple<Tensor<T>, Tensor<T>, I32, I32> solve(const Tensor<T>& A, const Tensor<T>& B) const override {
    return generic::solve(A, B);
  }
  std::tuple<Tensor<T>, Tensor<R>, Tensor<T>, I32> slogdet(const Tensor<T>& A) const override {
    return generic::slogdet(A);
  }
  std::tuple<Tensor<T>, Tensor<T>, I32> det(const Tensor<T>& A) const override { return generic::det(A); }
  std::tuple<Tensor<T>, Tensor<R>, Tensor<T>> pinv(const char* op, const Tensor<T>& A, const Tensor<T>& B, double atol,
                                                   double rtol) const override {
    return generic::pinv(op, A, B, atol, rtol);
  }
  Tensor<T> matrix_exp(const Tensor<T>& A) const override { return generic::matrix_exp(A); }
  std::tuple<Tensor<T>, Tensor<T>> matrix_exp_frechet(const Tensor<T>& A, const Tensor<T>& E,
                                                      bool with_exp) const override {
    auto r = generic::matrix_exp_and_frechet(A, E);
    if (!with_exp) std::get<1>(r) = Tensor<T>();
    return r;
  }
  std::tuple<Tensor<T>, Tensor<bool>> inverse_pairs(const Tensor<T>& x, bool sums, bool mask,
                                                    double rtol) const override {
    return generic::inverse_pairs(x, sums, mask, rtol);
  }
  Tensor<T> triangle_fold(const Tensor<T>& X, bool fold, bool upper) const override {
    return generic::triangle_fold(X, fold, upper);
  }
  void matmul_into(const Tensor<T>& out, const Tensor<T>& a, const Tensor<T>& b, const Shape& batch) const override {
    generic::matmul_into(out, a, b, batch);
  }
  Tensor<T> triangular_op(TriangularBlas r, const Tensor<T>& A, const Tensor<T>& B, bool left, bool upper, bool unit,
                          blas::Trans trans) const override {
    return generic::triangular_op(r, A, B, left, upper, unit, trans);
  }
};

// The element types of the device kernels by size (bit copies; no dtype is 2 bytes wide).
template <class F>
void by_size(std::size_t bytes, F&& f) {
  switch (bytes) {
    case 1:
      return f(bool{});
    case 4:
      return f(std::int32_t{});
    case 8:
      return f(std::int64_t{});
    case 16:
      return f(c128{});
    default:
      fail("cuda", "no element type of ", bytes, " bytes");
  }
}

class CudaKernels final : public DeviceKernels {
 public:
  void zero_triangle(int dev, bool lower, std::int64_t k, std::int64_t m, std::int64_t n, std::int64_t batch, void* p,
                     std::size_t bytes) const override {
    by_size(bytes, [&]<class U>(U) { cuda::zero_triangle<U>(dev, lower, k, m, n, batch, static_cast<U*>(p)); });
  }
  void permute_rows(int dev, std::int64_t m, std::int64_t n, std::int64_t batch, const void* x,
                    const std::int64_t* perm, void* out, std::size_t bytes) const override {
    by_size(bytes, [&]<class U>(U) {
      cuda::permute_rows<U>(dev, m, n, batch, static_cast<const U*>(x), perm, static_cast<U*>(out));
    });
  }
  void check_pivots(int dev, std::int64_t k, std::int64_t m, std::int64_t batch, const std::int32_t* piv,
                    std::int64_t* perm, std::int32_t* safe, std::int32_t* bad) const override {
    cuda::check_pivots(dev, k, m, batch, piv, perm, safe, bad);
  }
  void inverse_permutation(int dev, std::int64_t m, std::int64_t batch, const std::int64_t* perm,
                           std::int64_t* inv) const override {
    cuda::inverse_permutation(dev, m, batch, perm, inv);
  }
  void gather_axis(int dev, const AxisGeometry& g, const std::int64_t* idx, const void* x, void* out, std::size_t bytes,
                   std::int64_t* bad) const override {
    by_size(bytes, [&]<class U>(U) {
      cuda::gather_axis<U>(dev, g, idx, static_cast<const U*>(x), static_cast<U*>(out), bad);
    });
  }
  void put_axis(int dev, const AxisGeometry& g, const std::int64_t* idx, const void* src, void* out, std::size_t bytes,
                std::int64_t* bad) const override {
    by_size(bytes,
            [&]<class U>(U) { cuda::put_axis<U>(dev, g, idx, static_cast<const U*>(src), static_cast<U*>(out), bad); });
  }
};

const Backend& cuda_backend() {
  static const CudaKernels kernels;
  static const CudaLinalg<float> f32;
  static const CudaLinalg<double> f64;
  static const CudaLinalg<c64> c64_;
  static const CudaLinalg<c128> c128_;
  static const Backend b{"cuda", &kernels, &f32, &f64, &c64_, &c128_};
  return b;
}

}  // namespace

template <class T>
void cuda_fill(int dev, T* p, std::int64_t n, const T& value) {
  cuda::fill<T>(dev, value, p, n);
}

template <class T>
void cuda_scatter_add(int dev, const AxisGeometry& g, const std::int64_t* idx, const T* src, T* out,
                      std::int64_t* bad) {
  cuda::scatter_add<T>(dev, g, idx, src, out, bad);
}

// The merge sort's scratch (2 n positions per line) from the device's pool, freed in stream order.
template <class T>
void cuda_sort(int dev, const LineGeometry& g, const T* x, T* values, std::int64_t* indices, bool descending) {
  if (g.lines == 0 || g.n == 0) return;
  const Tensor<std::int64_t> scratch = Tensor<std::int64_t>::empty({2 * g.n * g.lines}, Device::cuda(dev));
  cuda::sort<T>(dev, g, x, values, indices, scratch.mutable_data(), descending);
}

void add_linked_backends(DeviceTable& table) {
  table[kCuda] = {&cuda::copy_bytes, &cuda::allocator, &cuda_backend()};
  FillKernel<bool>::on[kCuda] = &cuda_fill<bool>;
  FillKernel<std::int32_t>::on[kCuda] = &cuda_fill<std::int32_t>;
  FillKernel<std::int64_t>::on[kCuda] = &cuda_fill<std::int64_t>;
  FillKernel<float>::on[kCuda] = &cuda_fill<float>;
  FillKernel<double>::on[kCuda] = &cuda_fill<double>;
  FillKernel<c64>::on[kCuda] = &cuda_fill<c64>;
  FillKernel<c128>::on[kCuda] = &cuda_fill<c128>;
  ScatterAddKernel<std::int32_t>::on[kCuda] = &cuda_scatter_add<std::int32_t>;
  ScatterAddKernel<std::int64_t>::on[kCuda] = &cuda_scatter_add<std::int64_t>;
  ScatterAddKernel<float>::on[kCuda] = &cuda_scatter_add<float>;
  ScatterAddKernel<double>::on[kCuda] = &cuda_scatter_add<double>;
  ScatterAddKernel<c64>::on[kCuda] = &cuda_scatter_add<c64>;
  ScatterAddKernel<c128>::on[kCuda] = &cuda_scatter_add<c128>;
  SortKernel<bool>::on[kCuda] = &cuda_sort<bool>;
  SortKernel<std::int32_t>::on[kCuda] = &cuda_sort<std::int32_t>;
  SortKernel<std::int64_t>::on[kCuda] = &cuda_sort<std::int64_t>;
  SortKernel<float>::on[kCuda] = &cuda_sort<float>;
  SortKernel<double>::on[kCuda] = &cuda_sort<double>;
  register_maps();
  register_reductions();
  register_lines();
  register_generators();
}

}  // namespace tenax::detail
