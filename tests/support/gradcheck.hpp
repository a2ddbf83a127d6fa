#pragma once
// Generic AD checks for tenax ops (TESTING.md "Every differentiable op", docs/MATH.md section 8).
//
//   TENAX_CHECK_GRADS(f, x, y);                  // f: (Tensor<T>...) -> Tensor<U>
//   tenax::testing::expect_ad(opts, f, x, y);    // the same with options
//
// For inputs x_i, random directions d_i, v_i and a random output weight W (never all-ones), with
// L(x) = Re<W, f(x)> (<X,Y> = Re sum conj(X) Y), expect_ad checks:
//   (a) the joint JVP  J d = sum_i J_i d_i  against central differences along d (a fourth-order
//       stencil), h = 1e-6 max(1, max|x|), relative error of the norm;
//   (b) per input, with no finite differences: tenax::jvp gives J_i d_i (they sum to J d),
//       tenax::vjp gives J_i^* W, and Re<W, J_i d_i> == Re<J_i^* W, d_i>; tenax::grad(L) equals
//       the pullbacks (all inputs recorded at once);
//   (c) second order: H v by forward over reverse (tangents through tenax::grad; tenax::hvp for
//       one input) against central differences of the gradient, and reverse over reverse
//       (grad of sum_i Re<v_i, grad_i L>) against it; opt-in: reverse over forward (grad of
//       Re<W, J v>, also H v);
//   (d) float32 (complex64): values and gradients of the same f agree with float64 to ~1e-4.
// f is called with the inputs as given, so non-contiguous views are exercised as views (finite
// differences use contiguous perturbed copies). For the float32 check f must accept the lower
// precision (write it as a generic lambda) or opts.f32 must be false. A lambda whose capture list
// has a comma must be parenthesized inside TENAX_CHECK_GRADS (or passed to expect_ad).
// Derivatives that vanish only by cancellation (f(x) = x / x) are too degenerate for these
// relative checks: test such identities directly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <tenax/tenax.hpp>

#include "support/expect.hpp"

namespace tenax::testing {

struct GradOptions {
  double fd_rtol = 1e-6;      // (a), (c): against central differences
  double exact_rtol = 1e-12;  // (b) and the agreement of equal quantities computed two ways
  double f32_rtol = 1e-4;     // (d)
  bool second_order = true;   // (c)
  // (c) also reverse over forward (grad of Re<W, J v>, which is H v).
  bool reverse_over_forward = true;
  bool f32 = true;  // (d)
  std::uint64_t seed = 7;
};

// float64 -> float32, complex128 -> complex64.
template <class T>
struct lower {
  using type = T;
};
template <>
struct lower<double> {
  using type = float;
};
template <>
struct lower<std::complex<double>> {
  using type = std::complex<float>;
};
template <class T>
using lower_t = typename lower<T>::type;

// The scalar type of a tensor expression, and a literal of that type (for generic lambdas).
template <class X>
using scalar_of = typename std::remove_cvref_t<X>::value_type;
template <class X>
scalar_of<X> lit(const X&, double v) {
  return scalar_of<X>(v);
}

// Vec, values, dot, norm and expect_close: support/expect.hpp.
inline double max_abs(const Vec& a) {
  double m = 0;
  for (auto v : a) m = std::max(m, std::abs(v));
  return m;
}
inline Vec axpy(const Vec& x, double h, const Vec& d) {
  Vec r = x;
  for (std::size_t i = 0; i < r.size(); ++i) r[i] += h * d[i];
  return r;
}
inline Vec add(Vec a, const Vec& b) {
  for (std::size_t i = 0; i < a.size(); ++i) a[i] += b[i];
  return a;
}
inline void append(Vec& a, const Vec& b) { a.insert(a.end(), b.begin(), b.end()); }

// A contiguous tensor of type T holding v.
template <class T>
Tensor<T> from_values(const Shape& s, const Vec& v) {
  Tensor<T> t = Tensor<T>::empty(s);
  for (std::size_t i = 0; i < v.size(); ++i) {
    if constexpr (is_complex_v<T>)
      t.mutable_data()[i] = T(v[i]);
    else
      t.mutable_data()[i] = static_cast<T>(v[i].real());
  }
  return t;
}

// x with forward-mode tangent dx (same data, layout and place on the tape), as tenax::jvp seeds
// its input.
template <class T>
Tensor<T> seeded(const Tensor<T>& x, const Tensor<T>& dx) {
  detail::ImplPtr p = detail::shallow_copy(*x.impl());
  p->requires_grad = x.impl()->requires_grad;
  p->grad_fn = x.impl()->grad_fn;
  p->output_nr = x.impl()->output_nr;
  p->tangent = dx.impl();
  return Tensor<T>(std::move(p));
}

template <class Y>
Y tangent_or_zeros(const Y& y) {
  return y.tangent().defined() ? y.tangent() : Y::zeros(y.shape());
}

// Re <W, y> as a recorded real scalar: its gradient with respect to y is W.
template <class U>
auto re_inner(const Tensor<U>& w, const Tensor<U>& y) {
  return sum(real(mul(conj(w), y)));
}

// f with argument I replaced by xi.
template <std::size_t I, class F, class Tup>
auto call_replacing(F& f, const Tup& xs, const std::tuple_element_t<I, Tup>& xi) {
  return [&]<std::size_t... J>(std::index_sequence<J...>) {
    auto pick = [&]<std::size_t K>(std::integral_constant<std::size_t, K>) -> const auto& {
      if constexpr (K == I)
        return xi;
      else
        return std::get<K>(xs);
    };
    return f(pick(std::integral_constant<std::size_t, J>{})...);
  }
  (std::make_index_sequence<std::tuple_size_v<Tup>>{});
}

template <class G>
auto as_tuple(G g) {
  if constexpr (detail::is_tensor<G>::value)
    return std::tuple<G>(std::move(g));
  else
    return g;
}

// Seeded normal tensors shaped like the xs (seeds seed, seed + 1, ...).
template <class... T>
std::tuple<Tensor<T>...> random_like(const std::tuple<Tensor<T>...>& xs, std::uint64_t seed) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return std::tuple<Tensor<T>...>{Tensor<T>::randn(std::get<I>(xs).shape(), seed + I)...};
  }
  (std::index_sequence_for<T...>{});
}

template <class F, class... T>
void expect_ad(const GradOptions& o, F&& f, const Tensor<T>&... x_in) {
  static_assert(sizeof...(T) >= 1, "expect_ad needs at least one input");
  constexpr std::size_t N = sizeof...(T);
  using Seq = std::index_sequence_for<T...>;
  const std::tuple<Tensor<T>...> x{x_in...};
  const std::vector<Vec> x_before{values(x_in)...};
  const auto y = f(x_in...);
  using Y = std::remove_cvref_t<decltype(y)>;
  using U = typename Y::value_type;
  static_assert(Floating<U>, "expect_ad needs a floating-point output");
  EXPECT_FALSE(y.tracks_grad()) << "f recorded a tape for inputs that do not require grad";

  // Random directions and weights (normal entries; complex ones for complex types).
  const auto d = random_like(x, o.seed + 1);
  const auto v = random_like(x, o.seed + 101);
  const Y w = Y::randn(y.shape(), o.seed + 201);
  double xmax = 0;
  ((xmax = std::max(xmax, max_abs(values(x_in)))), ...);
  const double h = 1e-6 * std::max(1.0, xmax);
  auto loss = [&](const auto&... a) { return re_inner(w, f(a...)); };
  auto shift = [&](const auto& xi, const auto& di, double s) {
    using Ti = scalar_of<decltype(xi)>;
    return from_values<Ti>(xi.shape(), axpy(values(xi), s, values(di)));
  };
  // Central differences of g along (dir) at x, fourth order:
  // (8 (g(x + h dir) - g(x - h dir)) - (g(x + 2h dir) - g(x - 2h dir))) / 12h.
  // Also returns its error bound: 100x the rounding bound from the samples' size, plus the
  // distance to the second-order estimate (g(x + h dir) - g(x - h dir)) / 2h, which bounds the
  // truncation error (Richardson). Both are tiny next to the rtol term unless the derivative is ~0.
  auto central = [&](auto g, const auto& dir) {
    auto at = [&](double s) {
      return [&]<std::size_t... I>(std::index_sequence<I...>) {
        return g(shift(std::get<I>(x), std::get<I>(dir), s)...);
      }
      (Seq{});
    };
    const Vec p1 = at(h), m1 = at(-h), p2 = at(2 * h), m2 = at(-2 * h);
    Vec d4(p1.size()), d2(p1.size());
    for (std::size_t i = 0; i < p1.size(); ++i) {
      d4[i] = (8.0 * (p1[i] - m1[i]) - (p2[i] - m2[i])) / (12 * h);
      d2[i] = (p1[i] - m1[i]) / (2 * h) - d4[i];
    }
    const double noise = 100 * 0x1p-52 * (8 * (norm(p1) + norm(m1)) + norm(p2) + norm(m2)) / (12 * h);
    return std::pair{d4, noise + norm(d2)};
  };
  const Vec yv = values(y), wv = values(w);

  // (a) joint JVP vs central differences.
  Vec jdv;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    const Y t = tangent_or_zeros(f(seeded(std::get<I>(x), std::get<I>(d))...));
    EXPECT_EQ(t.shape(), y.shape()) << "JVP shape";
    jdv = values(t);
  }
  (Seq{});
  {
    const auto [fd, noise] = central([&](const auto&... a) { return values(f(a...)); }, d);
    expect_close(jdv, fd, o.fd_rtol, noise, "(a) JVP vs central differences");
  }

  // (b) per input: tenax::jvp and tenax::vjp, adjoint identity; their sum is the joint JVP.
  std::tuple<Tensor<T>...> pullbacks;
  Vec jsum(yv.size());
  auto per_input = [&]<std::size_t I>(std::integral_constant<std::size_t, I>) {
    using Ti = std::tuple_element_t<I, std::tuple<T...>>;
    SCOPED_TRACE("input " + std::to_string(I));
    auto fi = [&](const Tensor<Ti>& xi) { return call_replacing<I>(f, x, xi); };
    const auto [yi, ji] = tenax::jvp(fi, std::get<I>(x), std::get<I>(d));
    EXPECT_EQ(ji.shape(), y.shape());
    expect_close(values(yi), yv, 0, "jvp value");
    const auto [yb, pullback] = tenax::vjp(fi, std::get<I>(x));
    expect_close(values(yb), yv, 0, "vjp value");
    const Tensor<Ti> gi = pullback(w);
    EXPECT_EQ(gi.shape(), std::get<I>(x).shape()) << "VJP shape";
    std::get<I>(pullbacks) = gi;
    const Vec jv = values(ji), gv = values(gi), dv = values(std::get<I>(d));
    const double lhs = dot(wv, jv), rhs = dot(gv, dv);
    const double scale = norm(wv) * norm(jv) + norm(gv) * norm(dv);
    EXPECT_LE(std::abs(lhs - rhs), o.exact_rtol * scale + 1e-300)
        << "(b) Re<W, J dx> = " << lhs << " but Re<J*W, dx> = " << rhs << " (scale " << scale << ")";
    jsum = add(jsum, jv);
  };
  [&]<std::size_t... I>(std::index_sequence<I...>) { (per_input(std::integral_constant<std::size_t, I>{}), ...); }
  (Seq{});
  expect_close(jsum, jdv, o.exact_rtol, "(b) sum of per-input JVPs vs joint JVP");

  const auto g = as_tuple(std::apply([&](const auto&... a) { return tenax::grad(loss, a...); }, x));
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (expect_close(values(std::get<I>(g)), values(std::get<I>(pullbacks)), o.exact_rtol,
                  "(b) grad of Re<W, f> vs vjp, input " + std::to_string(I)),
     ...);
  }
  (Seq{});

  // (c) second order.
  if (o.second_order) {
    Vec hv_all, gnorm;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      // Forward over reverse: tangents v_i on all inputs flow through the gradient computation.
      const auto gt = as_tuple(tenax::grad(loss, seeded(std::get<I>(x), std::get<I>(v))...));
      const std::vector<Vec> hv{values(tangent_or_zeros(std::get<I>(gt)))...};
      const std::vector<Vec> gvals{values(std::get<I>(gt))...};
      for (std::size_t k = 0; k < N; ++k) {
        append(hv_all, hv[k]);
        append(gnorm, gvals[k]);
      }
      // Central differences of the gradient.
      const auto [fd, noise] = central(
          [&](const auto&... a) {
            const auto ga = as_tuple(tenax::grad(loss, a...));
            Vec r;
            (append(r, values(std::get<I>(ga))), ...);
            return r;
          },
          v);
      expect_close(hv_all, fd, o.fd_rtol, noise,
                   "(c) HVP (forward over reverse) vs central differences of the gradient");
      // Reverse over reverse: the gradient of sum_i Re<v_i, grad_i L>.
      const auto rr = as_tuple(tenax::grad(
          [&](const auto&... a) {
            const auto ga = as_tuple(tenax::grad(loss, a...));
            return (... + re_inner(std::get<I>(v), std::get<I>(ga)));
          },
          std::get<I>(x)...));
      Vec rv;
      (append(rv, values(std::get<I>(rr))), ...);
      expect_close(rv, hv_all, 1e3 * o.exact_rtol, 1e3 * o.exact_rtol * norm(gnorm) + 1e-300,
                   "(c) reverse over reverse vs forward over reverse");
      if (o.reverse_over_forward) {
        const auto rf = as_tuple(tenax::grad(
            [&](const auto&... a) { return re_inner(w, tangent_or_zeros(f(seeded(a, std::get<I>(v))...))); },
            std::get<I>(x)...));
        Vec fv;
        (append(fv, values(std::get<I>(rf))), ...);
        expect_close(fv, hv_all, 1e3 * o.exact_rtol, 1e3 * o.exact_rtol * norm(gnorm) + 1e-300,
                     "(c) reverse over forward vs forward over reverse");
      }
      if constexpr (N == 1) {
        const auto hp = tenax::hvp(loss, std::get<0>(x), std::get<0>(v));
        expect_close(values(hp), hv_all, o.exact_rtol, "(c) tenax::hvp vs forward over reverse");
      }
    }
    (Seq{});
  }

  // (d) float32 against float64: values and gradients.
  if (o.f32) {
    if constexpr (std::is_invocable_v<F&, const Tensor<lower_t<T>>&...>) {
      using W32 = Tensor<lower_t<U>>;
      const std::tuple<Tensor<lower_t<T>>...> x32{cast<lower_t<T>>(x_in)...};
      const auto y32 = std::apply(f, x32);
      static_assert(std::is_same_v<std::remove_cvref_t<decltype(y32)>, W32>, "f32 input must give an f32 output");
      expect_close(values(y32), yv, o.f32_rtol, "(d) float32 value vs float64");
      const W32 w32 = cast<lower_t<U>>(w);
      auto loss32 = [&](const auto&... a) { return re_inner(w32, f(a...)); };
      const auto g32 = as_tuple(std::apply([&](const auto&... a) { return tenax::grad(loss32, a...); }, x32));
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        (expect_close(values(std::get<I>(g32)), values(std::get<I>(g)), o.f32_rtol,
                      "(d) float32 gradient vs float64, input " + std::to_string(I)),
         ...);
      }
      (Seq{});
    } else {
      ADD_FAILURE() << "(d) f cannot be called with float32 inputs: write it generically or set f32 = false";
    }
  }
  // Nothing above may write into the inputs.
  std::size_t k = 0;
  ((expect_close(values(x_in), x_before[k], 0, "input " + std::to_string(k) + " unchanged"), ++k), ...);
}

template <class F, class... T>
void expect_ad(F&& f, const Tensor<T>&... x) {
  expect_ad(GradOptions{}, std::forward<F>(f), x...);
}

// f gives the same values, JVP and VJP on the inputs as given (views) and on contiguous copies.
template <class F, class... T>
void expect_layout_invariant(F&& f, const Tensor<T>&... x) {
  const auto y = f(x...);
  const auto yc = f(clone(x).detach()...);
  expect_close(values(y), values(yc), 1e-14, "value: view vs contiguous");
  const auto w = std::remove_cvref_t<decltype(y)>::randn(y.shape(), 1);
  auto loss = [&](const auto&... a) { return re_inner(w, f(a...)); };
  const auto d = random_like(std::tuple<Tensor<T>...>{x...}, 100);
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    const auto ga = as_tuple(tenax::grad(loss, x...));
    const auto gb = as_tuple(tenax::grad(loss, clone(x).detach()...));
    (expect_close(values(std::get<I>(ga)), values(std::get<I>(gb)), 1e-14,
                  "gradient: view vs contiguous, input " + std::to_string(I)),
     ...);
    const auto ja = tangent_or_zeros(f(seeded(x, std::get<I>(d))...));
    const auto jb = tangent_or_zeros(f(seeded(clone(x).detach(), std::get<I>(d))...));
    expect_close(values(ja), values(jb), 1e-14, "JVP: view vs contiguous");
  }
  (std::index_sequence_for<T...>{});
}

// ---- inputs ------------------------------------------------------------------------------------
// Entries of magnitude in [lo, hi) with random signs (real) or phases (complex): away from the
// kinks of abs, sign and relu at 0.
template <class T>
Tensor<T> rand_away(const Shape& s, std::uint64_t seed, double lo = 0.3, double hi = 1.5) {
  const auto mag = Tensor<double>::rand(s, seed, lo, hi).to_vector();
  const auto ph = Tensor<double>::rand(s, seed + 1000, 0, 1).to_vector();
  Vec v(mag.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = is_complex_v<T> ? std::polar(mag[i], 6.283185307179586 * ph[i]) : (ph[i] < 0.5 ? -mag[i] : mag[i]);
  return from_values<T>(s, v);
}
// The same values as x in a non-contiguous layout (element 0 of a stack of two copies).
template <class T>
Tensor<T> noncontiguous(const Tensor<T>& x) {
  return stack(std::vector<Tensor<T>>{x, x}, 0).slice(0, 0, 1).squeeze(0);
}

// The statement throws tenax::Error whose message begins with "[op]".
#define EXPECT_TENAX_ERROR(stmt, op)                                                           \
  do {                                                                                         \
    try {                                                                                      \
      stmt;                                                                                    \
      ADD_FAILURE() << "expected tenax::Error " << (op) << " from: " #stmt;                    \
    } catch (const ::tenax::Error& e_) {                                                       \
      const std::string m_ = e_.what(), p_ = std::string("[") + (op) + "]";                    \
      EXPECT_EQ(m_.rfind(p_, 0), 0u) << "message \"" << m_ << "\" does not begin with " << p_; \
    }                                                                                          \
  } while (0)

// eigvalsh and svdvals compute the vectors their rules need only when a derivative may be taken
// (docs/MATH.md sections 5, 6; one LAPACK call either way, which test_linalg_counts pins), so their value
// under AD comes from another LAPACK path (jobz 'V'/'S' instead of 'N') and differs from the value
// without AD by rounding. The harness compares those values bit for bit, so these probes take their
// value from a call without AD and all derivatives from the call with AD: plain + (y - detach(y))
// is exactly `plain` and has exactly y's derivatives (first and second order). The size of the
// value difference is asserted separately (test_linalg_grad_spectral's ValueUnderAD tests).
template <class Op>
auto value_from_plain_call(Op op) {
  return [op](const auto& A) {
    const auto plain = op(A.detach());
    const auto y = op(A);
    return tenax::add(plain, tenax::sub(y, y.detach()));
  };
}

}  // namespace tenax::testing

#define TENAX_CHECK_GRADS(f, ...)                  \
  do {                                             \
    SCOPED_TRACE(#f);                              \
    ::tenax::testing::expect_ad((f), __VA_ARGS__); \
  } while (0)
