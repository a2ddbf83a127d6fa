#pragma once
// slogdet (sign and log|det|) and det of square matrices, from one LU factorization that the
// derivative rules reuse.
#include <algorithm>
#include <cmath>
#include <limits>

#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/core/scalar_parts.hpp"
#include "tenax/ops/linalg/batched.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/lu_solve.hpp"

namespace tenax {
namespace detail {

// m * 2^e with m rescaled to a modulus in [0.5, 1) (both parts of a complex by the same power of
// two, so exactly): a running product that neither overflows nor underflows before its end.
template <class T>
void renormalize(T& m, int& e) {
  using R = real_t<T>;
  if constexpr (is_complex_v<T>) {
    const R big = max_component(m);
    if (big == R(0) || !std::isfinite(big)) return;
    int k = 0;
    (void)std::frexp(big, &k);
    m = ldexp_each(m, -k);
    e += k;
  } else {
    int k = 0;
    m = std::frexp(m, &k);
    e += k;
  }
}

// The CPU determinants of nb contiguous n x n matrices overwritten by their LU factors (pivots:
// n x nb): emit(b, sign, log|det|, det) per matrix, sign = (pivot parity) * prod(u_ii / |u_ii|),
// log|det| = sum(log |u_ii|) and det = (pivot parity) * prod(u_ii), the product kept as a
// mantissa and a power of two (n roundings: exact for small integers, no overflow or underflow
// before the result itself does); 0, -inf and 0 at an exactly zero pivot; NaN for a matrix with
// inf or NaN, whose factors are NaN and whose pivots are the identity's.
// reload(a, b) writes matrix b of the input into a (cpu::getrf_exact).
template <class T, class Reloader, class Emit>
void lu_determinants(T* lu_all, std::int32_t* piv, std::int64_t n, std::int64_t nb, Reloader&& reload, Emit&& emit) {
  using R = real_t<T>;
  for_each_matrix(lu_all, n, n, nb, [&](T* lu, std::int64_t b) {
    T s(1), m(1);
    int e = 0;
    R l(0);
    if (!all_finite(lu, n * n)) {
      s = T(std::numeric_limits<R>::quiet_NaN());
      l = std::numeric_limits<R>::quiet_NaN();
      m = s;
      mark_nonfinite_lu(lu, n * n, piv + b * n, n);
    } else {
      std::int32_t* p = piv + b * n;
      cpu::getrf_exact<T>(n, n, lu, std::max<std::int64_t>(1, n), p, [&](T* a) { reload(a, b); });
      for (std::int64_t i = 0; i < n; ++i) {
        const T u = lu[i + i * n];
        const R a = std::abs(u);
        if (p[i] != i + 1) s = -s, m = -m;
        if (a == R(0)) {
          s = m = T(0);
          l = -std::numeric_limits<R>::infinity();
          break;
        }
        s *= u / a;
        l += std::log(a);
        m *= u;
        renormalize(m, e);
      }
    }
    emit(b, s, l, ldexp_each(m, e));
  });
}

}  // namespace detail

namespace ops {

// Outputs: sign (T, |sign| = 1, or 0 when singular), log|det| (real), LU, pivots.
struct Slogdet {
  static constexpr const char* name = "slogdet";
  static constexpr bool one_kernel = true;  // on the CPU, forward is one captured kernel (kernels/capture.hpp)
  static constexpr bool saves_outputs = true;

  // sign (|sign| = 1, 0 at an exactly zero pivot), log|det| (-inf there), LU and pivots per
  // matrix; NaN sign and log|det| for a matrix with inf or NaN. The device's backend computes them
  // (on the CPU one captured kernel, src/cpu/linalg_lu.cpp).
  template <class T>
  std::tuple<Tensor<T>, Tensor<real_t<T>>, Tensor<T>, Tensor<std::int32_t>> forward(const Tensor<T>& A) const {
    return detail::linalg_backend<T>(name, A.device()).slogdet(A);
  }

  // t = tr(A^-1 dA) (one getrs with n right-hand sides on the saved LU):
  //   dlog = Re t;  dsign = i sign Im t (0 for real);
  //   gA = (glog - i Im(conj(gsign) sign)) A^-H   (A^-H by getrs 'C' on the saved LU).
  // Not differentiable at singular A (log|det| = -inf there). The solves are SavedLuSolve
  // (differentiable in A to any order on the same factors).
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    using R = real_t<T>;
    const Tensor<T> AinvdA = detail::apply(SavedLuSolve{cpu::Trans::N}, c.x0(), c.y2(), c.template y<3>(), c.dx0());
    const Tensor<T> t = sum(diagonal(AinvdA), {0});
    Tensor<T> dsign;
    if constexpr (is_complex_v<T>)
      dsign = mul(c.y0(), complex(mul(imag(t), R(0)), imag(t)));
    else
      dsign = mul(t, T(0));
    return std::tuple{dsign, real(t), Tensor<T>(), Tensor<std::int32_t>()};
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    using R = real_t<T>;
    const Tensor<T>& A = c.x0();
    const std::int64_t n = A.shape()[0];
    const Shape batch = detail::mat_batch_shape(A.shape());
    // coefficient per matrix: glog - i Im(conj(gsign) sign)
    Tensor<T> coef;
    if (c.gy1().defined()) coef = cast<T>(c.gy1());
    if constexpr (is_complex_v<T>) {
      if (c.gy0().defined()) {
        auto im = imag(mul(conj(c.gy0()), c.y0()));
        auto t = complex(mul(im, R(0)), neg(im));
        coef = detail::accumulate(coef, t);
      }
    }
    if (!coef.defined()) return Tensor<T>::zeros(A.shape(), A.device());
    const Tensor<T> AinvH = detail::apply(SavedLuSolve{cpu::Trans::C}, A, c.y2(), c.template y<3>(),
                                          detail::batch_eye<T>(n, batch, A.device()));
    return mul(AinvH, reshape(coef, detail::with_batch(1, 1, batch)));
  }
};

}  // namespace ops

namespace linalg {

namespace detail_slogdet {

// The info codes of slogdet_ex from its outputs: -1 where the sign is NaN (non-finite input),
// k where U(k, k) is the first exactly zero pivot (sign 0), else 0. An op without derivatives, so
// that a trace records it (a compiled slogdet_ex reports the info of each run's input).
struct SlogdetInfo {
  static constexpr const char* name = "slogdet_info";
  static constexpr bool one_kernel = true;  // its host form is one captured kernel (kernels/capture.hpp)
  template <class T>
  Tensor<std::int32_t> forward(const Tensor<T>& sign, const Tensor<T>& LU) const {
    return tenax::detail::dispatch<&SlogdetInfo::host<T>, &SlogdetInfo::generic<T>>(sign.device(), sign, LU);
  }
  template <class T>
  static Tensor<std::int32_t> host(const Tensor<T>& sign, const Tensor<T>& LU) {
    const Tensor<T> s = contiguous(sign), lu = contiguous(LU);
    Tensor<std::int32_t> info = Tensor<std::int32_t>::empty(tenax::detail::mat_batch_shape(LU.shape()), LU.device());
    auto run = [n = LU.shape()[0], nb = info.numel()](char* const* p) {
      std::int32_t* out = reinterpret_cast<std::int32_t*>(p[0]);
      const T* sg = reinterpret_cast<const T*>(p[1]);
      const T* all = reinterpret_cast<const T*>(p[2]);
      for (std::int64_t b = 0; b < nb; ++b) {
        std::int32_t code = 0;
        if (sg[b] != sg[b]) {
          code = tenax::detail::kNonFiniteInfo;
        } else if (sg[b] == T(0)) {
          const T* m = all + b * n * n;
          for (std::int64_t i = 0; i < n && code == 0; ++i)
            if (m[i + i * n] == T(0)) code = static_cast<std::int32_t>(i + 1);
        }
        out[b] = code;
      }
    };
    tenax::detail::record_kernel(run, info, s, lu);
    return info;
  }
  // The same codes by tensor ops on the device (nothing read back).
  template <class T>
  static Tensor<std::int32_t> generic(const Tensor<T>& sign, const Tensor<T>& LU) {
    NoGradGuard no_grad;
    tenax::detail::ForwardOffGuard no_fw;
    const Device dev = sign.device();
    const Tensor<std::int32_t> zero_pivot = ops::ZeroPivotInfo::generic(LU),
                               none = Tensor<std::int32_t>::zeros({}, dev);
    return contiguous(where(isfinite(sign), where(eq(sign, Tensor<T>::zeros({}, dev)), zero_pivot, none),
                            Tensor<std::int32_t>::scalar(tenax::detail::kNonFiniteInfo, dev)));
  }
};

}  // namespace detail_slogdet

// (sign, log|det A|): sign has |sign| = 1 (0 for singular A, with log|det| = -inf); NaN for
// non-finite input.
template <Floating T>
std::pair<Tensor<T>, Tensor<real_t<T>>> slogdet(const Tensor<T>& A) {
  detail::check_square("slogdet", A);
  auto [s, l, LU, piv] = detail::apply(ops::Slogdet{}, A);
  return {s, l};
}

// As slogdet, with an info tensor per matrix: 0, k > 0 when U(k, k) of the LU factorization is
// exactly zero (A singular: sign 0, log|det| = -inf), -1 when the input is not finite (NaN results).
template <Floating T>
std::tuple<Tensor<T>, Tensor<real_t<T>>, Tensor<std::int32_t>> slogdet_ex(const Tensor<T>& A) {
  detail::check_square("slogdet", A);
  auto [s, l, LU, piv] = detail::apply(ops::Slogdet{}, A);
  (void)piv;
  return {s, l, detail::apply_nondiff(detail_slogdet::SlogdetInfo{}, s, LU)};
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_SLOGDET(T)                                                  \
  TENAX_INSTANCE std::pair<Tensor<T>, Tensor<real_t<T>>> slogdet(const Tensor<T>&); \
  TENAX_INSTANCE std::tuple<Tensor<T>, Tensor<real_t<T>>, Tensor<std::int32_t>> slogdet_ex(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_SLOGDET)

}  // namespace linalg
}  // namespace tenax
