// The linalg fuzz target's decoder and driver (fuzz_linalg.cpp has the entry point): inputs decoded
// from the fuzz bytes (dtype, batch rank, sizes, layout, mode flags, raw float bits) and run<T>, which
// calls one linalg op, its _ex variant, or its VJP/JVP on them.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "tenax/tenax.hpp"

namespace tenax_fuzz {

namespace tx = tenax;
namespace la = tenax::linalg;
using tx::Shape;
using tx::Tensor;

class Bytes {
 public:
  Bytes(const std::uint8_t* p, std::size_t n) : p_(p), n_(n) {}
  std::uint8_t u8() { return i_ < n_ ? p_[i_++] : 0; }
  double f64() {
    const std::uint8_t sel = u8();
    if (sel < 200) return (static_cast<double>(sel) - 100.0) / 25.0;
    switch (sel) {
      case 200:
        return std::numeric_limits<double>::quiet_NaN();
      case 201:
        return std::numeric_limits<double>::infinity();
      case 202:
        return -std::numeric_limits<double>::infinity();
      case 203:
        return std::numeric_limits<double>::denorm_min();
      case 204:
        return 1e300;
      case 205:
        return -1e-300;
      case 206:
        return 0.0;
      default: {  // raw bits
        std::uint64_t bits = 0;
        for (int k = 0; k < 8; ++k) bits = (bits << 8) | u8();
        double d;
        std::memcpy(&d, &bits, sizeof d);
        return d;
      }
    }
  }
  // A dimension: mostly small, sometimes empty, huge or negative (factories must reject those).
  std::int64_t dim() {
    static constexpr std::int64_t table[] = {0, 1, 2, 3, 4, 5, 2, 3, 1, 4, 7, 3, 2, 1, 3, 2};
    const std::uint8_t b = u8();
    if (b == 255) return std::int64_t{1} << 40;
    if (b == 254) return -3;
    if (b == 253) return std::numeric_limits<std::int64_t>::max();
    return table[b % 16];
  }

 private:
  const std::uint8_t* p_;
  std::size_t n_, i_ = 0;
};

template <class T>
T value(Bytes& in) {
  if constexpr (tx::is_complex_v<T>) {
    using R = tx::real_t<T>;
    const double re = in.f64(), im = in.f64();
    return T(static_cast<R>(re), static_cast<R>(im));
  } else {
    return static_cast<T>(in.f64());
  }
}

// A tensor of the given logical shape in one of several layouts. Sizes too large to fill are
// passed to a factory, which must throw tenax::Error.
template <class T>
Tensor<T> make(Bytes& in, const Shape& shape, std::uint8_t layout) {
  std::int64_t count = 1;
  bool small = true;
  for (auto d : shape) {
    if (d < 0 || d > 64) small = false;
    if (small) count *= d;
  }
  if (!small) return Tensor<T>::zeros(shape);  // must throw
  std::vector<T> v(static_cast<std::size_t>(count));
  for (auto& x : v) x = value<T>(in);
  Tensor<T> t = Tensor<T>::from_col_major(shape, v);
  if (shape.size() < 2) return t;
  switch (layout % 4) {
    case 1: {  // a transposed view
      Shape s = shape;
      std::swap(s[0], s[1]);
      return Tensor<T>::from_col_major(s, v).transpose(0, 1);
    }
    case 2:  // every other row of a taller tensor (a strided view)
      return tx::concat<T>({t, Tensor<T>::zeros(shape)}, 0).slice(0, 0, 2 * shape[0], 2);
    case 3:  // a broadcast batch dimension
      return tx::expand(tx::unsqueeze(t, t.dim()), [&] {
        Shape s = shape;
        s.push_back(2);
        return s;
      }());
    default:
      return t;
  }
}

// A real scalar of any floating result (for the VJP).
template <class U>
Tensor<tx::real_t<U>> scalar_of(const Tensor<U>& y) {
  return tx::real(tx::sum(y * y));
}

template <class T, class F>
void with_derivatives(Bytes& in, const Tensor<T>& A, F f) {
  (void)f(A);
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, std::complex<double>>) {
    if (in.u8() % 2) {
      (void)tx::grad([&](const Tensor<T>& a) { return scalar_of(f(a)); }, A);
    } else {
      const Tensor<T> dA = make<T>(in, A.shape(), 0);
      (void)tx::jvp([&](const Tensor<T>& a) { return scalar_of(f(a)); }, A, dA);
    }
  }
}

template <class T>
void run(Bytes& in) {
  const int op = in.u8() % 35;
  const std::uint8_t layout = in.u8();
  const std::int64_t m = in.dim(), n = (in.u8() % 3 == 0) ? in.dim() : m, k = in.dim();
  Shape sa{m, n}, sb{m, k};
  const int batch = in.u8() % 3;
  for (int b = 0; b < batch; ++b) {
    const std::int64_t d = in.dim();
    sa.push_back(d);
    if (in.u8() % 4) sb.push_back(d);
  }
  const Tensor<T> A = make<T>(in, sa, layout);
  const bool upper = in.u8() % 2, left = in.u8() % 2, unit = in.u8() % 2;
  const auto trans = static_cast<la::Trans>("NTC"[in.u8() % 3]);
  switch (op) {
    case 0:
      with_derivatives(in, A, [&](const Tensor<T>& a) { return la::solve(a, make<T>(in, sb, layout), left); });
      break;
    case 1:
      (void)la::solve_ex(A, make<T>(in, sb, layout));
      break;
    case 2:
      with_derivatives(in, A, [](const Tensor<T>& a) { return la::inv(a); });
      break;
    case 3:
      (void)la::inv_ex(A);
      break;
    case 4:
      with_derivatives(in, A, [](const Tensor<T>& a) { return la::lu_factor(a).first; });
      break;
    case 5:
      (void)la::lu_factor_ex(A);
      break;
    case 6:
      with_derivatives(in, A, [](const Tensor<T>& a) { return std::get<1>(la::lu(a)) + std::get<2>(la::lu(a)); });
      break;
    case 7: {
      const auto factors = la::lu_factor(A);
      const Tensor<std::int32_t> piv = factors.second;
      with_derivatives(in, factors.first,
                       [&](const Tensor<T>& lu) { return la::lu_solve(lu, piv, make<T>(in, sb, layout), trans); });
      break;
    }
    case 8:
    case 9:
    case 10: {
      const auto mode = op == 8 ? la::QrMode::Reduced : op == 9 ? la::QrMode::Complete : la::QrMode::R;
      with_derivatives(in, A, [&](const Tensor<T>& a) { return la::qr(a, mode, upper).second; });
      break;
    }
    case 11:
      with_derivatives(in, A, [&](const Tensor<T>& a) { return tx::abs(la::eigh(a, upper).second); });
      break;
    case 12:
      with_derivatives(in, A, [&](const Tensor<T>& a) { return la::eigvalsh(a, upper); });
      break;
    case 13:
    case 14:
      with_derivatives(in, A, [&](const Tensor<T>& a) { return std::get<1>(la::svd(a, op == 14)); });
      break;
    case 15:
      with_derivatives(in, A, [](const Tensor<T>& a) { return la::svdvals(a); });
      break;
    case 16:
      with_derivatives(in, A, [&](const Tensor<T>& a) { return la::cholesky(a, upper); });
      break;
    case 17:
      (void)la::cholesky_ex(A, upper);
      break;
    case 18:
      with_derivatives(in, A, [](const Tensor<T>& a) { return la::det(a); });
      break;
    case 19:
      with_derivatives(in, A, [](const Tensor<T>& a) { return la::slogdet(a).second; });
      break;
    case 20:
      (void)la::slogdet_ex(A);
      break;
    case 21:
      with_derivatives(in, A, [&](const Tensor<T>& a) {
        return la::solve_triangular(a, make<T>(in, sb, layout), upper, left, unit, trans);
      });
      break;
    case 22:
      with_derivatives(in, A, [&](const Tensor<T>& a) { return tx::matmul(a, make<T>(in, sb, layout)); });
      break;
    case 24:
      with_derivatives(in, A, [&](const Tensor<T>& a) {
        return la::pinv(a, std::nullopt, std::nullopt, upper && a.shape()[0] == a.shape()[1]);
      });
      break;
    case 25:
      (void)la::matrix_rank(A, in.u8() % 2 ? std::optional<double>(in.u8() / 16.0) : std::nullopt);
      break;
    case 26:
      with_derivatives(in, A, [&](const Tensor<T>& a) { return la::lstsq(a, make<T>(in, sb, layout)).solution; });
      break;
    case 27:
      with_derivatives(in, A, [](const Tensor<T>& a) { return la::matrix_exp(a); });
      break;
    case 28: {
      const int p = static_cast<int>(in.u8() % 17) - 8;
      with_derivatives(in, A, [p](const Tensor<T>& a) { return la::matrix_power(a, p); });
      break;
    }
    case 29:
      with_derivatives(in, A, [&](const Tensor<T>& a) { return la::multi_dot<T>({a, a.mH(), a}); });
      break;
    case 30: {
      static constexpr double ords[] = {2, 1, 0, 3, 0.5, -1, INFINITY, -INFINITY};
      const double ord = ords[in.u8() % 8];
      with_derivatives(in, A, [ord](const Tensor<T>& a) { return la::vector_norm(a, ord, {0}); });
      break;
    }
    case 31: {
      static constexpr double ords[] = {1, -1, 2, -2, INFINITY, -INFINITY};
      const double ord = ords[in.u8() % 6];
      with_derivatives(in, A, [&](const Tensor<T>& a) {
        return upper ? la::matrix_norm(a, left ? "fro" : "nuc") : la::matrix_norm(a, ord);
      });
      break;
    }
    case 32:
      with_derivatives(in, A, [&](const Tensor<T>& a) { return upper ? la::cond(a) : la::cond(a, "fro"); });
      break;
    case 33:
      with_derivatives(in, A, [](const Tensor<T>& a) { return tx::abs(la::eig(a).second); });
      break;
    case 34:
      with_derivatives(in, A, [](const Tensor<T>& a) { return la::eigvals(a); });
      break;
    default:
      (void)la::svd(A, true);
      break;
  }
}

// One file per dtype instantiates run (fuzz_linalg_<dtype>.cpp), so the target compiles in parallel.
extern template void run<float>(Bytes&);
extern template void run<double>(Bytes&);
extern template void run<std::complex<float>>(Bytes&);
extern template void run<std::complex<double>>(Bytes&);

}  // namespace tenax_fuzz
