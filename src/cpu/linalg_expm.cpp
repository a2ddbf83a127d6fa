// The CPU's matrix_exp and its Frechet derivative (ops/linalg/matrix_exp.hpp): one fused kernel
// each, which a prepared program captures (kernels/capture.hpp). The kernel runs, on each matrix,
// the steps of generic::matrix_exp and generic::matrix_exp_frechet (backend/generic_linalg.hpp) in
// the same order, with the same gemm, getrf and getrs calls and the same elementwise operations, so
// the two give the same bits (test_linalg_generic); it only keeps the intermediates in scratch of
// its own instead of fresh tensors, one pass over each per step.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>

#include "cpu_linalg.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/kernels/parallel.hpp"
#include "tenax/kernels/reduce.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/matrix_exp.hpp"

namespace tenax::detail {
namespace {

// The n x n matrices of one exponential: products by gemm, elementwise steps by loops that compute
// what the tensor ops of the generic form compute for each element.
template <class T>
struct ExpmSteps {
  std::int64_t n, nn;

  // z = x y
  void prod(const T* x, const T* y, T* z) const {
    const std::int64_t ld = std::max<std::int64_t>(1, n);
    cpu::gemm<T>(cpu::Trans::N, cpu::Trans::N, n, n, n, T(1), x, ld, y, ld, T(0), z, ld);
  }
  // z = x y, dz = dx y + x dy (t: scratch)
  void prod(const T* x, const T* dx, const T* y, const T* dy, T* z, T* dz, T* t) const {
    prod(x, y, z);
    prod(dx, y, dz);
    prod(x, dy, t);
    for (std::int64_t e = 0; e < nn; ++e) dz[e] = dz[e] + t[e];
  }
  // c = (a6 b6 + a4 b4) + a2 b2
  void comb(const T* a6, const T* a4, const T* a2, T b6, T b4, T b2, T* c) const {
    for (std::int64_t e = 0; e < nn; ++e) c[e] = (a6[e] * b6 + a4[e] * b4) + a2[e] * b2;
  }
  // I b: b on the diagonal, b times zero elsewhere.
  T eye(std::int64_t e, T b) const { return (e % (n + 1) == 0 ? T(1) : T(0)) * b; }
  // c += I b
  void add_eye(T* c, T b) const {
    for (std::int64_t e = 0; e < nn; ++e) c[e] = c[e] + eye(e, b);
  }
};

// The sum of the moduli of x[0..n), added as the generic form's sum of abs adds a column: in order
// below 2 kSumLanes entries, else in interleaved lanes (kernels/reduce.hpp, SumLanes).
template <class T>
real_t<T> column_norm(const T* x, std::int64_t n) {
  using R = real_t<T>;
  const fn::Abs mod;
  if (n < 2 * kSumLanes) {
    R c = 0;
    for (std::int64_t i = 0; i < n; ++i) c += mod(x[i]);
    return c;
  }
  SumLanes<R> s;
  const std::int64_t m = n - n % kSumLanes;
  s.add(x, m, mod);
  return R(0) + s.finish(x + m, n - m, mod);
}

// The Pade degree of the batch at x (nb contiguous n x n matrices) and each matrix's 1-norm (the
// largest column sum of moduli, NaN when one is) in norm.
template <class T>
const PadeDegree& batch_degree(const T* x, std::int64_t n, std::int64_t nb, double* norm) {
  using R = real_t<T>;
  double eta = 0;
  for (std::int64_t b = 0; b < nb; ++b) {
    R v = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      const R c = column_norm(x + b * n * n + j * n, n);
      v = std::max(v, c);
      if (std::isnan(c)) v = c;
    }
    norm[b] = static_cast<double>(v);
    if (std::isfinite(norm[b])) eta = std::max(eta, norm[b]);
  }
  return expm_degree<R>(eta);
}

// X / 2^s: the generic form multiplies by the scale only when some matrix of the batch is scaled.
template <class T>
void scale_into(const T* a, std::int64_t nn, int s, bool any_scaled, T* x) {
  if (!any_scaled) {
    std::copy_n(a, nn, x);
    return;
  }
  const T scale = static_cast<T>(std::ldexp(1.0, -s));
  for (std::int64_t e = 0; e < nn; ++e) x[e] = a[e] * scale;
}

// R = q(X)^-1 p(X) with q = V - U in Q (factored in place, pivots in piv) and p = V + U in R; a
// matrix whose q holds inf or NaN, or is singular, gets a NaN R (Solve's convention). Returns
// whether the factors are usable.
template <class T>
bool pade_solve(std::int64_t n, const T* U, const T* V, T* Q, std::int32_t* piv, T* R) {
  const std::int64_t nn = n * n, ld = std::max<std::int64_t>(1, n);
  for (std::int64_t e = 0; e < nn; ++e) {
    Q[e] = V[e] - U[e];
    R[e] = V[e] + U[e];
  }
  int info = kNonFiniteInfo;
  if (all_finite(Q, nn))
    info = cpu::getrf_exact<T>(n, n, Q, ld, piv, [&](T* q) {
      for (std::int64_t e = 0; e < nn; ++e) q[e] = V[e] - U[e];
    });
  if (info == 0) {
    cpu::getrs<T>(cpu::Trans::N, n, n, Q, ld, piv, R, ld);
    return true;
  }
  std::fill_n(R, nn, T(std::numeric_limits<real_t<T>>::quiet_NaN()));
  return false;
}

// exp(X) of one matrix at degree p, s squarings, into out. w: 9 n x n matrices of scratch.
template <class T>
void expm_one(const ExpmSteps<T>& st, const PadeDegree& p, int s, const T* X, T* out, T* w, std::int32_t* piv) {
  const std::int64_t nn = st.nn;
  T *X2 = w, *X4 = w + nn, *X6 = w + 2 * nn, *u = w + 3 * nn, *v = w + 4 * nn, *t = w + 5 * nn;
  T *U = w + 6 * nn, *V = w + 7 * nn, *Q = w + 8 * nn;
  auto b = [&](int j) { return static_cast<T>(p.b[static_cast<std::size_t>(j)]); };
  st.prod(X, X, X2);
  if (p.m == 13) {
    st.prod(X2, X2, X4);
    st.prod(X4, X2, X6);
    st.comb(X6, X4, X2, b(13), b(11), b(9), u);  // u_hi
    st.comb(X6, X4, X2, b(12), b(10), b(8), v);  // v_hi
    st.prod(X6, u, t);                           // X6 u_hi
    st.comb(X6, X4, X2, b(7), b(5), b(3), u);    // u_lo
    st.add_eye(u, b(1));
    for (std::int64_t e = 0; e < nn; ++e) t[e] = t[e] + u[e];
    st.prod(X, t, U);
    st.prod(X6, v, t);                         // X6 v_hi
    st.comb(X6, X4, X2, b(6), b(4), b(2), v);  // v_lo
    st.add_eye(v, b(0));
    for (std::int64_t e = 0; e < nn; ++e) V[e] = t[e] + v[e];
  } else {
    for (std::int64_t e = 0; e < nn; ++e) u[e] = st.eye(e, b(1)), V[e] = st.eye(e, b(0));
    T *xk = X2, *spare[2] = {X4, X6};
    for (int k = 2, i = 0; k <= p.m; k += 2, i ^= 1) {
      for (std::int64_t e = 0; e < nn; ++e) {
        u[e] = u[e] + xk[e] * b(k + 1);
        V[e] = V[e] + xk[e] * b(k);
      }
      if (k + 2 <= p.m) {
        st.prod(xk, X2, spare[i]);
        xk = spare[i];
      }
    }
    st.prod(X, u, U);
  }
  T* R = out;
  if (!pade_solve(st.n, U, V, Q, piv, R)) return;
  for (int k = 0; k < s; ++k) {
    st.prod(R, R, t);
    std::copy_n(t, nn, R);
  }
}

// L(X, dX) of one matrix at degree p, s squarings, into out, and when exp_out is not null the
// exponential it computes along the way into exp_out (expm_one's steps: the same bits). w: 21 n x n
// matrices of scratch.
template <class T>
void frechet_one(const ExpmSteps<T>& st, const PadeDegree& p, int s, const T* X, const T* dX, T* out, T* exp_out, T* w,
                 std::int32_t* piv) {
  const std::int64_t nn = st.nn;
  T* m[21];
  for (int i = 0; i < 21; ++i) m[i] = w + i * nn;
  T *X2 = m[0], *dX2 = m[1], *X4 = m[2], *dX4 = m[3], *X6 = m[4], *dX6 = m[5], *t = m[6];
  T *U = m[7], *dU = m[8], *V = m[9], *dV = m[10], *R = m[11], *Q = m[12], *L = out;
  auto b = [&](int j) { return static_cast<T>(p.b[static_cast<std::size_t>(j)]); };
  st.prod(X, dX, X, dX, X2, dX2, t);
  if (p.m == 13) {
    T *uh = m[13], *duh = m[14], *vh = m[15], *dvh = m[16], *W = m[17], *dW = m[18], *lo = m[19], *dlo = m[20];
    st.prod(X2, dX2, X2, dX2, X4, dX4, t);
    st.prod(X4, dX4, X2, dX2, X6, dX6, t);
    st.comb(X6, X4, X2, b(13), b(11), b(9), uh);
    st.comb(dX6, dX4, dX2, b(13), b(11), b(9), duh);
    st.comb(X6, X4, X2, b(12), b(10), b(8), vh);
    st.comb(dX6, dX4, dX2, b(12), b(10), b(8), dvh);
    st.prod(X6, dX6, uh, duh, W, dW, t);  // W6
    st.comb(X6, X4, X2, b(7), b(5), b(3), lo);
    st.add_eye(lo, b(1));
    st.comb(dX6, dX4, dX2, b(7), b(5), b(3), dlo);
    for (std::int64_t e = 0; e < nn; ++e) W[e] = W[e] + lo[e], dW[e] = dW[e] + dlo[e];
    st.prod(X, dX, W, dW, U, dU, t);
    st.prod(X6, dX6, vh, dvh, V, dV, t);  // V6
    st.comb(X6, X4, X2, b(6), b(4), b(2), lo);
    st.add_eye(lo, b(0));
    st.comb(dX6, dX4, dX2, b(6), b(4), b(2), dlo);
    for (std::int64_t e = 0; e < nn; ++e) V[e] = V[e] + lo[e], dV[e] = dV[e] + dlo[e];
  } else {
    T *u = m[13], *du = m[14], *pk[2][2] = {{X4, dX4}, {X6, dX6}};
    for (std::int64_t e = 0; e < nn; ++e) u[e] = st.eye(e, b(1)), V[e] = st.eye(e, b(0));
    const T *xk = X2, *dxk = dX2;
    for (int k = 2, i = 0; k <= p.m; k += 2, i ^= 1) {
      for (std::int64_t e = 0; e < nn; ++e) {
        u[e] = u[e] + xk[e] * b(k + 1);
        V[e] = V[e] + xk[e] * b(k);
      }
      // du and dv start as the first term (generic: accumulate into an undefined tensor).
      if (k == 2)
        for (std::int64_t e = 0; e < nn; ++e) du[e] = dxk[e] * b(k + 1), dV[e] = dxk[e] * b(k);
      else
        for (std::int64_t e = 0; e < nn; ++e) du[e] = du[e] + dxk[e] * b(k + 1), dV[e] = dV[e] + dxk[e] * b(k);
      if (k + 2 <= p.m) {
        st.prod(xk, dxk, X2, dX2, pk[i][0], pk[i][1], t);
        xk = pk[i][0], dxk = pk[i][1];
      }
    }
    st.prod(X, dX, u, du, U, dU, t);
  }
  const bool solved = pade_solve(st.n, U, V, Q, piv, R);
  // rhs = (dV + dU) - (dV - dU) R, then L = q^-1 rhs with q's factors (NaN factors when q failed).
  T* dq = m[13];
  for (std::int64_t e = 0; e < nn; ++e) L[e] = dV[e] + dU[e], dq[e] = dV[e] - dU[e];
  st.prod(dq, R, t);
  for (std::int64_t e = 0; e < nn; ++e) L[e] = L[e] - t[e];
  if (!solved) {
    std::fill_n(L, nn, T(std::numeric_limits<real_t<T>>::quiet_NaN()));
    if (exp_out) std::copy_n(R, nn, exp_out);  // NaN, as expm_one leaves it
    return;
  }
  const std::int64_t ld = std::max<std::int64_t>(1, st.n);
  cpu::getrs<T>(cpu::Trans::N, st.n, st.n, Q, ld, piv, L, ld);
  T *l2 = m[14], *r2 = m[15];
  for (int k = 0; k < s; ++k) {
    st.prod(R, L, l2);
    st.prod(L, R, t);
    for (std::int64_t e = 0; e < nn; ++e) l2[e] = l2[e] + t[e];
    st.prod(R, R, r2);
    std::copy_n(l2, nn, L);
    std::swap(R, r2);
  }
  if (exp_out) std::copy_n(R, nn, exp_out);
}

// The scratch of one kernel: `per` n x n matrices and n pivots for each part of the batch that may
// run at once (a few parts per worker when the batch is spread over the pool, each running its
// matrices in order), and the batch's norms.
template <class T>
struct ExpmScratch {
  std::int64_t parts;
  Scratch<T> work;
  Scratch<std::int32_t> piv;
  Scratch<double> norm;
  std::int64_t per_matrix, ldp;
  ExpmScratch(std::int64_t n, std::int64_t nb, int per)
      : parts(parts_of(n, nb)),
        work({n * n * per * parts}),
        piv({std::max<std::int64_t>(1, n) * parts}),
        norm({nb}),
        per_matrix(n * n * per),
        ldp(std::max<std::int64_t>(1, n)) {}
  static std::int64_t parts_of(std::int64_t n, std::int64_t nb) {
    const bool par =
        nb >= 2 && n * n <= cpu::kParallelMaxMatrixElements && nb * n * n * n >= cpu::kParallelMinBatchWork;
    return par ? std::min<std::int64_t>(nb, std::int64_t{4} * cpu::parallel_threads()) : 1;
  }
  // f(b, work, pivots) for each matrix b, the parts spread over the pool.
  template <class F>
  void each(std::int64_t nb, F&& f) const {
    auto part = [&](std::int64_t c) {
      for (std::int64_t b = nb * c / parts; b < nb * (c + 1) / parts; ++b)
        f(b, work.get() + c * per_matrix, piv.get() + c * ldp);
    };
    if (parts > 1)
      cpu::parallel_for(parts, part);
    else
      part(0);
  }
};

}  // namespace

// A copied into the output, then each matrix's exponential in place (expm_one).
template <class T>
Tensor<T> CpuLinalg<T>::matrix_exp(const Tensor<T>& A) const {
  const std::int64_t n = A.shape()[0], nb = detail::mat_batch_count(A.shape());
  Tensor<T> E = Tensor<T>::empty(A.shape());
  if (E.numel() == 0) return E;
  // X, the scaled copy of the input, lies after the 9 matrices of expm_one's scratch.
  auto run = [copy = detail::copy_to_contiguous(A), sc = ExpmScratch<T>(n, nb, 10), n, nb](char* const* p) {
    T* e = reinterpret_cast<T*>(p[0]);
    copy(p[0], p[1]);
    const PadeDegree& deg = batch_degree(e, n, nb, sc.norm.get());
    int s_max = 0;
    for (std::int64_t b = 0; b < nb; ++b) s_max = std::max(s_max, expm_squarings<real_t<T>>(sc.norm.get()[b], deg));
    const ExpmSteps<T> st{n, n * n};
    sc.each(nb, [&](std::int64_t b, T* w, std::int32_t* piv) {
      const int s = expm_squarings<real_t<T>>(sc.norm.get()[b], deg);
      T* X = w + 9 * n * n;
      scale_into(e + b * n * n, n * n, s, s_max > 0, X);
      expm_one(st, deg, s, X, e + b * n * n, w, piv);
    });
  };
  detail::record_kernel_n(run, {E.impl().get()}, {A.impl().get()});
  return E;
}

// A copied into the output and E (broadcast) into scratch, then each matrix's L(A, E) in place
// (frechet_one), with exp(A) into a second output when with_exp.
template <class T>
std::tuple<Tensor<T>, Tensor<T>> CpuLinalg<T>::matrix_exp_frechet(const Tensor<T>& A, const Tensor<T>& E,
                                                                  bool with_exp) const {
  const std::int64_t n = A.shape()[0], nb = detail::mat_batch_count(A.shape());
  Tensor<T> L = Tensor<T>::empty(A.shape());
  Tensor<T> X = with_exp ? Tensor<T>::empty(A.shape()) : Tensor<T>();
  if (L.numel() == 0) return {L, X};
  // X and dX, the scaled copies, lie after the 21 matrices of frechet_one's scratch. ex: exp(A)'s
  // output or null; a, e: the operands.
  auto each = [copy_a = detail::copy_to_contiguous(A), copy_e = detail::copy_to_contiguous(expand(E, A.shape())),
               ecopy = Scratch<T>(A.shape()), sc = ExpmScratch<T>(n, nb, 23), n,
               nb](char* out, char* ex, char* a, char* e) {
    T* l = reinterpret_cast<T*>(out);
    T* x = reinterpret_cast<T*>(ex);
    copy_a(out, a);
    copy_e(reinterpret_cast<char*>(ecopy.get()), e);
    const PadeDegree& deg = batch_degree(l, n, nb, sc.norm.get());
    int s_max = 0;
    for (std::int64_t b = 0; b < nb; ++b) s_max = std::max(s_max, expm_squarings<real_t<T>>(sc.norm.get()[b], deg));
    const ExpmSteps<T> st{n, n * n};
    sc.each(nb, [&](std::int64_t b, T* w, std::int32_t* piv) {
      const int s = expm_squarings<real_t<T>>(sc.norm.get()[b], deg);
      T *Xs = w + 21 * n * n, *dXs = w + 22 * n * n;
      scale_into(l + b * n * n, n * n, s, s_max > 0, Xs);
      scale_into(ecopy.get() + b * n * n, n * n, s, s_max > 0, dXs);
      frechet_one(st, deg, s, Xs, dXs, l + b * n * n, x ? x + b * n * n : nullptr, w, piv);
    });
  };
  if (with_exp)
    detail::record_kernel_n([each = std::move(each)](char* const* p) { each(p[0], p[1], p[2], p[3]); },
                            {L.impl().get(), X.impl().get()}, {A.impl().get(), E.impl().get()});
  else
    detail::record_kernel_n([each = std::move(each)](char* const* p) { each(p[0], nullptr, p[1], p[2]); },
                            {L.impl().get()}, {A.impl().get(), E.impl().get()});
  return {L, X};
}

#define TENAX_CPU_EXPM(T)                                                                                              \
  template Tensor<T> CpuLinalg<T>::matrix_exp(const Tensor<T>&) const;                                                 \
  template std::tuple<Tensor<T>, Tensor<T>> CpuLinalg<T>::matrix_exp_frechet(const Tensor<T>&, const Tensor<T>&, bool) \
      const;
TENAX_CPU_LINALG_FOR_FLOATING(TENAX_CPU_EXPM)

}  // namespace tenax::detail
