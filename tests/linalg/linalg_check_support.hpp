#pragma once
// Shared by the linalg residual, failure, call-count and degeneracy tests (test_linalg_residuals,
// test_linalg_failures, test_linalg_counts, test_linalg_degenerate):
//   - test matrices U diag(s) V^H built in float64 / complex128 from the Q factors of random matrices
//     and rounded to the tested type, for LAPACK's matrix types (TESTING.md);
//   - dense matrices in wider precision (double for f32/c64, long double for f64/c128) for the
//     residual ratios, so that the check itself adds no rounding worth counting;
//   - a watchdog for calls that must not hang.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <future>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <tenax/linalg.hpp>
#include <tenax/tenax.hpp>

#include "support/gradcheck.hpp"

namespace tenax::lcheck {

// Re <W, Y> as a recorded real scalar loss.
using ::tenax::testing::re_inner;

using AllTypes = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;

// ---- precision ------------------------------------------------------------------------------------
// The scalar type the test matrices are generated in.
template <class T>
using gen_t = std::conditional_t<is_complex_v<T>, std::complex<double>, double>;

// A wider scalar for residuals: f32 -> double, f64 -> long double (and their complex versions).
template <class T>
struct wide {
  using type = std::conditional_t<std::is_same_v<real_t<T>, float>, double, long double>;
};
template <class T>
requires is_complex_v<T>
struct wide<T> {
  using type = std::complex<typename wide<real_t<T>>::type>;
};
template <class T>
using wide_t = typename wide<T>::type;

// Machine epsilon of T's real type (numeric_limits: 2^-23 and 2^-52). LAPACK's own tests use
// dlamch('E'), half of this; the ratios below use the numeric_limits value throughout.
template <class T>
double eps() {
  return static_cast<double>(std::numeric_limits<real_t<T>>::epsilon());
}

template <class W>
inline constexpr bool is_cplx = false;
template <class R>
inline constexpr bool is_cplx<std::complex<R>> = true;

template <class W>
auto absval(const W& w) {
  return std::abs(w);
}
template <class W>
W conj_of(const W& w) {
  if constexpr (is_cplx<W>)
    return std::conj(w);
  else
    return w;
}

// ---- dense matrices in wide precision ------------------------------------------------------------
template <class W>
struct Mat {
  std::int64_t m = 0, n = 0;
  std::vector<W> a;  // column-major
  Mat() = default;
  Mat(std::int64_t m_, std::int64_t n_) : m(m_), n(n_), a(static_cast<std::size_t>(m_ * n_), W(0)) {}
  W& operator()(std::int64_t i, std::int64_t j) { return a[static_cast<std::size_t>(i + j * m)]; }
  const W& operator()(std::int64_t i, std::int64_t j) const { return a[static_cast<std::size_t>(i + j * m)]; }
};

// Matrix b of t (batch elements in column-major order over the trailing dims), widened exactly.
template <class T>
Mat<wide_t<T>> to_mat(const Tensor<T>& t, std::int64_t b = 0) {
  using W = wide_t<T>;
  const std::vector<T> v = t.to_vector();
  const std::int64_t m = t.shape()[0], n = t.shape()[1];
  Mat<W> r(m, n);
  for (std::int64_t i = 0; i < m * n; ++i)
    r.a[static_cast<std::size_t>(i)] = W(v[static_cast<std::size_t>(b * m * n + i)]);
  return r;
}

template <class W>
Mat<W> operator*(const Mat<W>& x, const Mat<W>& y) {
  Mat<W> r(x.m, y.n);
  for (std::int64_t j = 0; j < y.n; ++j)
    for (std::int64_t p = 0; p < x.n; ++p) {
      const W yp = y(p, j);
      for (std::int64_t i = 0; i < x.m; ++i) r(i, j) += x(i, p) * yp;
    }
  return r;
}
template <class W>
Mat<W> operator-(Mat<W> x, const Mat<W>& y) {
  for (std::size_t i = 0; i < x.a.size(); ++i) x.a[i] -= y.a[i];
  return x;
}
template <class W>
Mat<W> adjoint(const Mat<W>& x) {
  Mat<W> r(x.n, x.m);
  for (std::int64_t j = 0; j < x.n; ++j)
    for (std::int64_t i = 0; i < x.m; ++i) r(j, i) = conj_of(x(i, j));
  return r;
}
template <class W>
Mat<W> eye_mat(std::int64_t n) {
  Mat<W> r(n, n);
  for (std::int64_t i = 0; i < n; ++i) r(i, i) = W(1);
  return r;
}
// First c columns.
template <class W>
Mat<W> cols(const Mat<W>& x, std::int64_t c) {
  Mat<W> r(x.m, c);
  for (std::int64_t j = 0; j < c; ++j)
    for (std::int64_t i = 0; i < x.m; ++i) r(i, j) = x(i, j);
  return r;
}
// First r rows.
template <class W>
Mat<W> rows(const Mat<W>& x, std::int64_t r) {
  Mat<W> y(r, x.n);
  for (std::int64_t j = 0; j < x.n; ++j)
    for (std::int64_t i = 0; i < r; ++i) y(i, j) = x(i, j);
  return y;
}
// x diag(d) for real d.
template <class W, class D>
Mat<W> scale_cols(Mat<W> x, const std::vector<D>& d) {
  for (std::int64_t j = 0; j < x.n; ++j)
    for (std::int64_t i = 0; i < x.m; ++i)
      x(i, j) *= static_cast<decltype(absval(W()))>(d[static_cast<std::size_t>(j)]);
  return x;
}

// The 1-norm (largest column sum of |x_ij|), as LAPACK's test ratios use.
template <class W>
double norm1(const Mat<W>& x) {
  using L = decltype(absval(W()));
  L best = 0;
  for (std::int64_t j = 0; j < x.n; ++j) {
    L s = 0;
    for (std::int64_t i = 0; i < x.m; ++i) s += absval(x(i, j));
    best = std::max(best, s);
  }
  return static_cast<double>(best);
}
// Frobenius norm (as a cheap upper bound of the 2-norm).
template <class W>
double normf(const Mat<W>& x) {
  using L = decltype(absval(W()));
  L s = 0;
  for (const W& v : x.a) s += absval(v) * absval(v);
  return static_cast<double>(std::sqrt(s));
}

// ||I - X^H X||_1 / (d eps): orthonormality of the columns of X.
template <class T, class W>
double orth_ratio(const Mat<W>& x, std::int64_t d) {
  return norm1(eye_mat<W>(x.n) - adjoint(x) * x) / (static_cast<double>(std::max<std::int64_t>(d, 1)) * eps<T>());
}

// ---- test matrices -------------------------------------------------------------------------------
// LAPACK's matrix types (xlatb4 / xlatms): condition 2, sqrt(0.1/eps), 0.1/eps (singular values
// spread geometrically), diagonal, triangular, scaled near underflow (1e3 * smallest normal) and near
// overflow (largest / 1e3), and rank-deficient (half the singular values zero).
enum class Kind { Cond2, CondSqrt, CondBad, Diagonal, Triangular, Small, Large, RankDeficient };

inline const char* kind_name(Kind k) {
  static constexpr const char* names[] = {
      "cond 2",     "cond sqrt(0.1/eps)",    "cond 0.1/eps",         "diagonal",
      "triangular", "scaled near underflow", "scaled near overflow", "rank-deficient"};
  return names[static_cast<int>(k)];
}

inline const std::vector<Kind>& all_kinds() {
  static const std::vector<Kind> v{Kind::Cond2,      Kind::CondSqrt, Kind::CondBad, Kind::Diagonal,
                                   Kind::Triangular, Kind::Small,    Kind::Large,   Kind::RankDeficient};
  return v;
}

template <class T>
double cond_of(Kind k) {
  switch (k) {
    case Kind::CondSqrt:
      return std::sqrt(0.1 / eps<T>());
    case Kind::CondBad:
      return 0.1 / eps<T>();
    default:
      return 2.0;
  }
}

// The scale factor of the kind (1 except for the scaled kinds).
template <class T>
double scale_of(Kind k) {
  using R = real_t<T>;
  if (k == Kind::Small) return 1e3 * static_cast<double>(std::numeric_limits<R>::min());
  if (k == Kind::Large) return static_cast<double>(std::numeric_limits<R>::max()) / 1e3;
  return 1.0;
}

// k values from 1 down to 1/cond, geometrically (LAPACK's mode 3).
inline std::vector<double> geometric(std::int64_t k, double cond) {
  std::vector<double> s(static_cast<std::size_t>(k));
  for (std::int64_t i = 0; i < k; ++i)
    s[static_cast<std::size_t>(i)] =
        k == 1 ? 1.0 : std::pow(cond, -static_cast<double>(i) / static_cast<double>(k - 1));
  return s;
}

// A Haar-distributed unitary n x n matrix (Q of a Gaussian matrix with R's diagonal positive).
template <class G>
Tensor<G> haar(std::int64_t n, std::uint64_t seed) {
  return linalg::qr(Tensor<G>::randn({n, n}, seed), linalg::QrMode::Reduced, true).first;
}

// Rounds a float64 / complex128 tensor to T, times `scale` (applied in the generation precision).
template <class T>
Tensor<T> round_to(const Tensor<gen_t<T>>& x, double scale = 1.0) {
  Tensor<gen_t<T>> y = scale == 1.0 ? x : mul(x, gen_t<T>(scale));
  if constexpr (std::is_same_v<T, gen_t<T>>)
    return contiguous(y);
  else
    return cast<T>(y);
}

// U[:, :k] diag(s) V[:, :k]^H, m x n (k = s.size() <= min(m, n)), in float64 / complex128.
template <class G>
Tensor<G> usv(std::int64_t m, std::int64_t n, const std::vector<double>& s, std::uint64_t seed) {
  const auto k = static_cast<std::int64_t>(s.size());
  const Tensor<G> U = slice(haar<G>(m, seed), 1, 0, k), V = slice(haar<G>(n, seed + 1000), 1, 0, k);
  std::vector<G> sv(s.begin(), s.end());
  const Tensor<G> srow = Tensor<G>::from_col_major({1, k}, sv);
  return matmul(mul(U, srow), V.mH());
}

// A general m x n matrix of the kind, rounded to T. Also returns (if asked) its singular values as
// generated (before rounding; empty for the triangular kind).
template <class T>
Tensor<T> general(Kind kind, std::int64_t m, std::int64_t n, std::uint64_t seed, std::vector<double>* sigma = nullptr) {
  using G = gen_t<T>;
  const std::int64_t k = std::min(m, n);
  std::vector<double> s;
  Tensor<G> A;
  switch (kind) {
    case Kind::Diagonal: {
      A = Tensor<G>::zeros({m, n});
      const Tensor<G> d = Tensor<G>::randn({k}, seed);
      for (std::int64_t i = 0; i < k; ++i) {
        G v = d.data()[i];
        v = v / std::abs(v) * (0.5 + std::abs(v));  // magnitudes in [0.5, ...)
        A.mutable_data()[i + i * m] = v;
        s.push_back(std::abs(v));
      }
      std::sort(s.rbegin(), s.rend());
      break;
    }
    case Kind::Triangular: {
      A = triu(Tensor<G>::randn({m, n}, seed));
      for (std::int64_t i = 0; i < k; ++i) {  // keep the diagonal away from zero
        G& v = A.mutable_data()[i + i * m];
        v = (std::abs(v) == 0 ? G(1) : v / std::abs(v)) * (1.0 + std::abs(v));
      }
      break;
    }
    case Kind::RankDeficient: {
      s = geometric(std::max<std::int64_t>(k / 2, 1), 2.0);
      A = usv<G>(m, n, s, seed);
      s.resize(static_cast<std::size_t>(k), 0.0);
      break;
    }
    default: {
      s = geometric(k, cond_of<T>(kind));
      A = usv<G>(m, n, s, seed);
    }
  }
  const double sc = scale_of<T>(kind);
  if (sigma) {
    *sigma = s;
    for (double& v : *sigma) v *= sc;
  }
  return round_to<T>(A, sc);
}

// Makes the rounded matrix exactly Hermitian: upper = conj(lower), real diagonal.
template <class T>
Tensor<T> hermitize(const Tensor<T>& a) {
  Tensor<T> r = clone(contiguous(a));
  const std::int64_t n = r.shape()[0];
  T* p = r.mutable_data();
  for (std::int64_t j = 0; j < n; ++j) {
    p[j + j * n] = T(std::real(p[j + j * n]));
    for (std::int64_t i = j + 1; i < n; ++i) {
      if constexpr (is_complex_v<T>)
        p[j + i * n] = std::conj(p[i + j * n]);
      else
        p[j + i * n] = p[i + j * n];
    }
  }
  return r;
}

// U diag(lambda) U^H (n = lambda.size()) in float64 / complex128, rounded to T and made exactly
// Hermitian.
template <class T>
Tensor<T> hermitian(const std::vector<double>& lambda, std::uint64_t seed, double scale = 1.0) {
  using G = gen_t<T>;
  const auto n = static_cast<std::int64_t>(lambda.size());
  const Tensor<G> U = haar<G>(n, seed);
  std::vector<G> lv(lambda.begin(), lambda.end());
  const Tensor<G> A = matmul(mul(U, Tensor<G>::from_col_major({1, n}, lv)), U.mH());
  return hermitize(round_to<T>(A, scale));
}

// Hermitian n x n of the kind: eigenvalues of alternating sign with magnitudes spread over the
// condition number (`definite`: all positive, for Cholesky). Diagonal: a real diagonal matrix.
// Returns the eigenvalues as generated (ascending, scaled) in `lambda` when asked.
template <class T>
Tensor<T> hermitian_of(Kind kind, std::int64_t n, std::uint64_t seed, bool definite,
                       std::vector<double>* lambda = nullptr) {
  std::vector<double> l;
  if (kind == Kind::RankDeficient) {
    l = geometric(std::max<std::int64_t>(n / 2, 1), 2.0);
    l.resize(static_cast<std::size_t>(n), 0.0);
  } else if (kind == Kind::Diagonal) {
    const Tensor<double> d = Tensor<double>::rand({n}, seed, 0.5, 2.0);
    l = d.to_vector();
  } else {
    l = geometric(n, cond_of<T>(kind));
  }
  if (!definite)
    for (std::size_t i = 0; i < l.size(); i += 2) l[i] = -l[i];
  const double sc = scale_of<T>(kind);
  Tensor<T> A;
  if (kind == Kind::Diagonal) {
    A = Tensor<T>::zeros({n, n});
    for (std::int64_t i = 0; i < n; ++i)
      A.mutable_data()[i + i * n] = T(static_cast<real_t<T>>(l[static_cast<std::size_t>(i)] * sc));
  } else {
    A = hermitian<T>(l, seed, sc);
  }
  if (lambda) {
    *lambda = l;
    for (double& v : *lambda) v *= sc;
    std::sort(lambda->begin(), lambda->end());
  }
  return A;
}

// ---- misc ----------------------------------------------------------------------------------------
// Whether every element is finite.
template <class T>
bool all_finite(const Tensor<T>& t) {
  for (const T& v : t.to_vector()) {
    if constexpr (is_complex_v<T>) {
      if (!std::isfinite(v.real()) || !std::isfinite(v.imag())) return false;
    } else {
      if (!std::isfinite(v)) return false;
    }
  }
  return true;
}
template <class T>
bool all_nan(const Tensor<T>& t) {
  for (const T& v : t.to_vector()) {
    if constexpr (is_complex_v<T>) {
      if (!std::isnan(v.real()) && !std::isnan(v.imag())) return false;
    } else {
      if (!std::isnan(v)) return false;
    }
  }
  return true;
}

// Runs f on another thread and waits up to `seconds`; a call that does not return is a failed test
// and ends the process (it cannot be cancelled). Exceptions from f are rethrown here. A thread that
// returned is joined, so its thread-locals (gtest's trace stack) are gone before the process exits
// (a detached one could still be tearing down then, which LeakSanitizer reported as a leak).
template <class F>
void within(double seconds, const std::string& what, F f) {
  auto state = std::make_shared<std::promise<std::exception_ptr>>();
  auto fut = state->get_future();
  std::thread worker([state, f]() mutable {
    try {
      f();
      state->set_value(nullptr);
    } catch (...) {
      state->set_value(std::current_exception());
    }
  });
  if (fut.wait_for(std::chrono::duration<double>(seconds)) != std::future_status::ready) {
    ADD_FAILURE() << what << " did not return within " << seconds << " s (a hang)";
    std::fprintf(stderr, "FATAL: %s hangs\n", what.c_str());
    std::fflush(nullptr);
    std::_Exit(1);
  }
  worker.join();
  if (auto e = fut.get()) std::rethrow_exception(e);
}

}  // namespace tenax::lcheck
