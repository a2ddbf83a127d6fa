// The CUDA backend on a GPU (label cuda; every case skips when no device is visible). Each op and
// rule runs on the device and is compared with the same computation on the CPU in float64/complex128
// (float32 inputs at float32 tolerance); prepared programs run on the device; the coverage test runs
// every public op (every_op.hpp) on the device and prints its agreement with the CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <tenax/core/deferred_checks.hpp>
#include <tenax/tenax.hpp>
#include <tenax/trace.hpp>

#include "cuda/every_op.hpp"
#include "support/matrices.hpp"
#include "support/messages.hpp"

namespace tx = tenax;
using tx::Tensor;
using tx::testing::spd;
using C = std::complex<double>;
using Cf = std::complex<float>;

namespace {

const tx::Device gpu = tx::Device::cuda(0);

#define REQUIRE_GPU() \
  if (tx::cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device is visible"

template <class T>
double tol() {
  return std::is_same_v<tx::real_t<T>, float> ? 2e-5 : 1e-12;
}

// The device result (copied back) equals the CPU result to a relative tolerance.
template <class T>
void expect_device_close(const Tensor<T>& got_dev, const Tensor<T>& want, double rtol, const std::string& what) {
  ASSERT_TRUE(got_dev.device() == gpu) << what << ": result on " << got_dev.device().str();
  const Tensor<T> got = got_dev.to(tx::Device::cpu());
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const auto g = got.to_vector(), w = want.to_vector();
  double scale = 0;
  for (const auto& v : w) scale = std::max(scale, static_cast<double>(std::abs(v)));
  for (std::size_t i = 0; i < g.size(); ++i) {
    const double e = static_cast<double>(std::abs(g[i] - w[i]));
    if (std::isnan(static_cast<double>(std::abs(w[i])))) {
      EXPECT_TRUE(std::isnan(static_cast<double>(std::abs(g[i])))) << what << " element " << i;
      continue;
    }
    ASSERT_LE(e, rtol * (1 + scale)) << what << " element " << i << ": " << g[i] << " vs " << w[i];
  }
}

template <class T>
Tensor<T> input(const tx::Shape& s, std::uint64_t seed, double lo = 0.2, double hi = 1.5) {
  return Tensor<T>::rand(s, seed, lo, hi);
}

}  // namespace

TEST(Cuda, CopiesRoundTripEveryDtype) {
  REQUIRE_GPU();
  auto round = [](const auto& x) {
    const auto back = x.to(gpu).to(tx::Device::cpu());
    EXPECT_EQ(back.to_vector(), x.to_vector());
  };
  round(Tensor<bool>::from_row_major({2, 2}, {true, false, false, true}));
  round(Tensor<std::int32_t>::from_row_major({3}, {1, -2, 3}));
  round(Tensor<std::int64_t>::from_row_major({3}, {1, -2, 1ll << 40}));
  round(input<float>({5, 7}, 1));
  round(input<double>({5, 7}, 2));
  round(input<Cf>({5, 7}, 3));
  round(input<C>({5, 7}, 4));
  round(input<double>({0, 3}, 5));
  // Factories fill on the device.
  EXPECT_EQ(Tensor<double>::full({3, 2}, 2.5, gpu).to(tx::Device::cpu()).to_vector(), std::vector<double>(6, 2.5));
  EXPECT_EQ(Tensor<C>::ones({4}, gpu).to(tx::Device::cpu()).to_vector(), std::vector<C>(4, C(1)));
  EXPECT_EQ(Tensor<bool>::zeros({5}, gpu).to(tx::Device::cpu()).to_vector(), std::vector<bool>(5, false));
  EXPECT_EQ(Tensor<float>::zeros({0, 3}, gpu).numel(), 0);
  // A strided view goes through contiguous() on the device.
  const auto x = input<double>({6, 5}, 6);
  expect_device_close(tx::contiguous(x.to(gpu).mT()), tx::contiguous(x.mT()), 0, "transposed view");
  expect_device_close(tx::slice(x.to(gpu), 1, 1, 5, 2), tx::contiguous(tx::slice(x, 1, 1, 5, 2)), 0, "sliced view");
}

template <class T>
void unary_family() {
  const auto x = input<T>({7, 9}, 11);
  const auto xd = x.to(gpu);
  std::vector<std::pair<std::string, std::function<Tensor<T>(const Tensor<T>&)>>> ops = {
      {"neg", [](auto& a) { return tx::neg(a); }},         {"exp", [](auto& a) { return tx::exp(a); }},
      {"log", [](auto& a) { return tx::log(a); }},         {"sqrt", [](auto& a) { return tx::sqrt(a); }},
      {"rsqrt", [](auto& a) { return tx::rsqrt(a); }},     {"square", [](auto& a) { return tx::square(a); }},
      {"sin", [](auto& a) { return tx::sin(a); }},         {"cos", [](auto& a) { return tx::cos(a); }},
      {"tanh", [](auto& a) { return tx::tanh(a); }},       {"sigmoid", [](auto& a) { return tx::sigmoid(a); }},
      {"sign", [](auto& a) { return tx::sign(a); }},       {"conj", [](auto& a) { return tx::conj(a); }},
      {"pow", [](auto& a) { return tx::pow(a, T(1.7)); }},
  };
  for (auto& [name, f] : ops) expect_device_close(f(xd), f(x), tol<T>(), name + " " + tx::dtype_traits<T>::name);
  expect_device_close(tx::abs(xd), tx::abs(x), tol<T>(), "abs");
  if constexpr (!tx::is_complex_v<T>) {
    expect_device_close(tx::log1p(xd), tx::log1p(x), tol<T>(), "log1p");
    expect_device_close(tx::expm1(xd), tx::expm1(x), tol<T>(), "expm1");
    const auto z = input<T>({7, 9}, 12, -1, 1);
    expect_device_close(tx::relu(z.to(gpu)), tx::relu(z), 0, "relu");
  } else {
    expect_device_close(tx::real(xd), tx::real(x), tol<T>(), "real");
    expect_device_close(tx::imag(xd), tx::imag(x), tol<T>(), "imag");
  }
}

TEST(Cuda, UnaryOpsMatchTheCpu) {
  REQUIRE_GPU();
  unary_family<float>();
  unary_family<double>();
  unary_family<Cf>();
  unary_family<C>();
}

template <class T>
void binary_family() {
  // Broadcasting both ways and a transposed (strided) operand.
  const auto a = input<T>({4, 1, 3}, 21), b = input<T>({4, 5, 1}, 22), t = input<T>({5, 4}, 23);
  const auto ad = a.to(gpu), bd = b.to(gpu), td = t.to(gpu);
  expect_device_close(tx::add(ad, bd), tx::add(a, b), tol<T>(), "add");
  expect_device_close(tx::sub(ad, bd), tx::sub(a, b), tol<T>(), "sub");
  expect_device_close(tx::mul(ad, bd), tx::mul(a, b), tol<T>(), "mul");
  expect_device_close(tx::div(ad, bd), tx::div(a, b), tol<T>(), "div");
  expect_device_close(tx::pow(ad, bd), tx::pow(a, b), tol<T>(), "pow");
  expect_device_close(tx::mul(td.mT(), td.mT()), tx::mul(t.mT(), t.mT()), tol<T>(), "strided mul");
  expect_device_close(tx::add(ad, T(2)), tx::add(a, T(2)), tol<T>(), "add scalar");
  expect_device_close(tx::mul(ad, T(3)), tx::mul(a, T(3)), tol<T>(), "mul scalar");
  expect_device_close(tx::rsub(ad, T(1)), tx::rsub(a, T(1)), tol<T>(), "rsub scalar");
  expect_device_close(tx::rdiv(ad, T(1)), tx::rdiv(a, T(1)), tol<T>(), "rdiv scalar");
  expect_device_close(tx::div(ad, T(3)), tx::div(a, T(3)), tol<T>(), "div scalar");
  const auto c = tx::eq(a, a);
  expect_device_close(tx::where(c.to(gpu), ad, ad), tx::where(c, a, a), 0, "where");
  if constexpr (!tx::is_complex_v<T>) {
    expect_device_close(tx::maximum(ad, bd), tx::maximum(a, b), 0, "maximum");
    expect_device_close(tx::minimum(ad, bd), tx::minimum(a, b), 0, "minimum");
    const auto lt = tx::lt(ad, bd).to(tx::Device::cpu());
    EXPECT_EQ(lt.to_vector(), tx::lt(a, b).to_vector());
    expect_device_close(tx::complex(ad, bd), tx::complex(a, b), tol<T>(), "complex");
  }
  EXPECT_EQ(tx::ne(ad, bd).to(tx::Device::cpu()).to_vector(), tx::ne(a, b).to_vector());
}

TEST(Cuda, BinaryOpsBroadcastAndMatchTheCpu) {
  REQUIRE_GPU();
  binary_family<float>();
  binary_family<double>();
  binary_family<Cf>();
  binary_family<C>();
}

// The elementwise ops of issue 33 on edge values (zeros, halves, infinities, NaN; complex branch
// cuts): the device's math library against the host's, equal where either is infinite or NaN or an
// integer result, close elsewhere.
template <class T>
void expect_device_matches(const Tensor<T>& got_dev, const Tensor<T>& want, const std::string& what) {
  ASSERT_TRUE(got_dev.device() == gpu) << what;
  const auto g = got_dev.to(tx::Device::cpu()).to_vector(), w = want.to_vector();
  ASSERT_EQ(g.size(), w.size()) << what;
  const auto near = [](auto p, auto q) {
    using R = decltype(p);
    if constexpr (std::is_integral_v<R>) {
      return p == q;
    } else {
      if (std::isnan(q) || std::isinf(q)) return std::isnan(q) ? std::isnan(p) : p == q;
      return std::abs(p - q) <= R(std::is_same_v<R, float> ? 4e-6 : 1e-14) * std::max(R(1), std::abs(q));
    }
  };
  for (std::size_t i = 0; i < g.size(); ++i) {
    if constexpr (tx::is_complex_v<T>)
      EXPECT_TRUE(near(g[i].real(), w[i].real()) && near(g[i].imag(), w[i].imag()))
          << what << " element " << i << ": " << g[i] << " vs " << w[i];
    else
      EXPECT_TRUE(near(g[i], w[i])) << what << " element " << i << ": " << g[i] << " vs " << w[i];
  }
}

// The unary ops with real and complex dtypes.
template <class T>
std::vector<std::pair<std::string, std::function<Tensor<T>(const Tensor<T>&)>>> floating_unary() {
  return {{"tan", [](const Tensor<T>& v) { return tx::tan(v); }},
          {"asin", [](const Tensor<T>& v) { return tx::asin(v); }},
          {"acos", [](const Tensor<T>& v) { return tx::acos(v); }},
          {"atan", [](const Tensor<T>& v) { return tx::atan(v); }},
          {"sinh", [](const Tensor<T>& v) { return tx::sinh(v); }},
          {"cosh", [](const Tensor<T>& v) { return tx::cosh(v); }},
          {"asinh", [](const Tensor<T>& v) { return tx::asinh(v); }},
          {"acosh", [](const Tensor<T>& v) { return tx::acosh(v); }},
          {"atanh", [](const Tensor<T>& v) { return tx::atanh(v); }},
          {"log10", [](const Tensor<T>& v) { return tx::log10(v); }}};
}

template <class T>
void elementwise_real_family() {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> e = {0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 0.3, -0.99, 3, -7, 40, inf, -inf, nan};
  const auto n = static_cast<std::int64_t>(e.size());
  const Tensor<T> x = tx::cast<T>(Tensor<double>::from_col_major({n}, e));
  const Tensor<T> a = tx::cast<T>(Tensor<double>::from_col_major({n, 1}, e)), b = a.mT();  // all pairs
  const auto xd = x.to(gpu), ad = a.to(gpu), bd = b.to(gpu);
#define TENAX_DEVICE_CASE(CALL_D, CALL_H) expect_device_matches(CALL_D, CALL_H, #CALL_H)
  auto ops = floating_unary<T>();
  ops.insert(ops.end(), {{"log2", [](const Tensor<T>& v) { return tx::log2(v); }},
                         {"erf", [](const Tensor<T>& v) { return tx::erf(v); }},
                         {"erfc", [](const Tensor<T>& v) { return tx::erfc(v); }},
                         {"softplus", [](const Tensor<T>& v) { return tx::softplus(v); }},
                         {"floor", [](const Tensor<T>& v) { return tx::floor(v); }},
                         {"ceil", [](const Tensor<T>& v) { return tx::ceil(v); }},
                         {"round", [](const Tensor<T>& v) { return tx::round(v); }},
                         {"trunc", [](const Tensor<T>& v) { return tx::trunc(v); }},
                         {"clamp", [](const Tensor<T>& v) { return tx::clamp(v, T(-1), T(2)); }},
                         {"remainder scalar", [](const Tensor<T>& v) { return tx::remainder(v, T(-0.75)); }},
                         {"fmod scalar", [](const Tensor<T>& v) { return tx::fmod(v, T(0.75)); }}});
  for (const auto& [name, f] : ops) expect_device_matches(f(xd), f(x), name);
  TENAX_DEVICE_CASE(tx::atan2(ad, bd), tx::atan2(a, b));
  TENAX_DEVICE_CASE(tx::hypot(ad, bd), tx::hypot(a, b));
  TENAX_DEVICE_CASE(tx::logaddexp(ad, bd), tx::logaddexp(a, b));
  TENAX_DEVICE_CASE(tx::remainder(ad, bd), tx::remainder(a, b));
  TENAX_DEVICE_CASE(tx::fmod(ad, bd), tx::fmod(a, b));
  TENAX_DEVICE_CASE(tx::clamp(ad, bd, tx::add(bd, T(1))), tx::clamp(a, b, tx::add(b, T(1))));
  // Gradients through the rules on the device.
  const Tensor<T> g = input<T>({3, 4}, 81, -0.9, 0.9), h = input<T>({3, 1}, 82, 0.5, 2);
  const auto loss = [](const Tensor<T>& p, const Tensor<T>& q) {
    return tx::sum(tx::add(tx::add(tx::atan2(p, q), tx::logaddexp(tx::asin(p), q)),
                           tx::add(tx::clamp(p, tx::neg(q), q), tx::remainder(p, q))));
  };
  const auto [gd0, gd1] = tx::grad(loss, g.to(gpu), h.to(gpu));
  const auto [gh0, gh1] = tx::grad(loss, g, h);
  expect_device_close(gd0, gh0, tol<T>(), "gradient, first input");
  expect_device_close(gd1, gh1, tol<T>(), "gradient, second input");
}

template <class T>
void elementwise_complex_family() {
  const double inf = std::numeric_limits<double>::infinity();
  using R = tx::real_t<T>;
  const std::vector<T> e = {T(0, 0),     T(2, R(0)), T(2, R(-0.0)), T(-2, 0),     T(0, 2),     T(0, -2),
                            T(0.5, 0.5), T(3, -4),   T(1, 0),       T(R(inf), 1), T(1, R(inf))};
  const Tensor<T> z = Tensor<T>::from_col_major({static_cast<std::int64_t>(e.size())}, e);
  const auto zd = z.to(gpu);
  for (const auto& [name, f] : floating_unary<T>()) expect_device_matches(f(zd), f(z), name);
}

template <class I>
void elementwise_integer_family() {
  constexpr I mn = std::numeric_limits<I>::min(), mx = std::numeric_limits<I>::max();
  const std::vector<I> e = {0, 1, -1, 7, -7, 3, -3, mn, mx};
  const auto n = static_cast<std::int64_t>(e.size());
  const Tensor<I> a = Tensor<I>::from_col_major({n, 1}, e), b = a.mT();
  const auto ad = a.to(gpu), bd = b.to(gpu);
  TENAX_DEVICE_CASE(tx::add(ad, bd), tx::add(a, b));
  TENAX_DEVICE_CASE(tx::sub(ad, bd), tx::sub(a, b));
  TENAX_DEVICE_CASE(tx::mul(ad, bd), tx::mul(a, b));
  TENAX_DEVICE_CASE(tx::maximum(ad, bd), tx::maximum(a, b));
  TENAX_DEVICE_CASE(tx::minimum(ad, bd), tx::minimum(a, b));
  TENAX_DEVICE_CASE(tx::floor_divide(ad, bd), tx::floor_divide(a, b));  // zero divisors and min / -1
  TENAX_DEVICE_CASE(tx::remainder(ad, bd), tx::remainder(a, b));
  TENAX_DEVICE_CASE(tx::fmod(ad, bd), tx::fmod(a, b));
  TENAX_DEVICE_CASE(tx::remainder(ad, I(-3)), tx::remainder(a, I(-3)));
  TENAX_DEVICE_CASE(tx::fmod(ad, I(0)), tx::fmod(a, I(0)));
  TENAX_DEVICE_CASE(tx::neg(ad), tx::neg(a));
  TENAX_DEVICE_CASE(tx::abs(ad), tx::abs(a));
#undef TENAX_DEVICE_CASE
}

TEST(Cuda, ElementwiseEdgeValuesAndIntegersMatchTheCpu) {
  REQUIRE_GPU();
  elementwise_real_family<float>();
  elementwise_real_family<double>();
  elementwise_complex_family<Cf>();
  elementwise_complex_family<C>();
  elementwise_integer_family<std::int32_t>();
  elementwise_integer_family<std::int64_t>();
}

TEST(Cuda, CastsConvertLikeTheCpu) {
  REQUIRE_GPU();
  const auto z = input<C>({3, 4}, 31, -2, 2);
  expect_device_close(tx::cast<double>(z.to(gpu)), tx::cast<double>(z), 0, "c128 -> f64");
  expect_device_close(tx::cast<Cf>(z.to(gpu)), tx::cast<Cf>(z), 0, "c128 -> c64");
  const auto r = input<float>({3, 4}, 32, -2, 2);
  expect_device_close(tx::cast<C>(r.to(gpu)), tx::cast<C>(r), 0, "f32 -> c128");
  EXPECT_EQ(tx::cast<std::int64_t>(r.to(gpu)).to(tx::Device::cpu()).to_vector(), tx::cast<std::int64_t>(r).to_vector());
  // Saturating float -> integer conversions: the device functor is the host one.
  const auto big = tx::Tensor<double>::from_col_major({4}, {std::nan(""), 1e300, -1e300, -2.5});
  EXPECT_EQ(tx::cast<std::int32_t>(big.to(gpu)).to(tx::Device::cpu()).to_vector(),
            (std::vector<std::int32_t>{0, INT32_MAX, INT32_MIN, -2}));
}

template <class T>
void reduce_family() {
  for (const tx::Shape& s : {tx::Shape{6, 5, 4}, tx::Shape{300, 700}, tx::Shape{1 << 17}, tx::Shape{0, 3}}) {
    const auto x = input<T>(s, 41, 0.9, 1.1);
    const auto xd = x.to(gpu);
    expect_device_close(tx::sum(xd), tx::sum(x), tol<T>() * 10, "sum all");
    for (std::int64_t ax = 0; ax < x.dim(); ++ax) {
      expect_device_close(tx::sum(xd, {ax}, true), tx::sum(x, {ax}, true), tol<T>() * 10, "sum axis");
      expect_device_close(tx::mean(xd, {ax}, false), tx::mean(x, {ax}, false), tol<T>() * 10, "mean axis");
    }
    if (x.numel() <= 1000) expect_device_close(tx::prod(xd), tx::prod(x), tol<T>() * 10, "prod");
    if constexpr (!tx::is_complex_v<T>) {
      if (x.numel() > 0) {
        expect_device_close(tx::max(xd), tx::max(x), 0, "max");
        expect_device_close(tx::min(xd, {0}, false), tx::min(x, {0}, false), 0, "min axis");
      }
    }
  }
}

TEST(Cuda, ReductionsMatchTheCpu) {
  REQUIRE_GPU();
  reduce_family<float>();
  reduce_family<double>();
  reduce_family<C>();
}

// Scans and arg-reductions along every axis of strided inputs: the device's one thread per line
// sums and multiplies in the CPU's order (exact for argmax/argmin); cumprod's gradient with zeros.
template <class T>
void scan_family() {
  const auto x = input<T>({6, 5, 4}, 61, -1.5, 1.5);
  const auto xd = x.to(gpu);
  for (int a = 0; a < 3; ++a) {
    const std::string at = " axis " + std::to_string(a);
    expect_device_close(tx::cumsum(xd, a), tx::cumsum(x, a), tol<T>(), "cumsum" + at);
    expect_device_close(tx::cumprod(tx::permute(xd, {2, 0, 1}), a), tx::cumprod(tx::permute(x, {2, 0, 1}), a), tol<T>(),
                        "cumprod of a permuted view" + at);
    if constexpr (!tx::is_complex_v<T>) {
      EXPECT_EQ(tx::argmax(xd, a).to(tx::Device::cpu()).to_vector(), tx::argmax(x, a).to_vector()) << at;
      EXPECT_EQ(tx::argmin(tx::slice(xd, 0, 1, 6, 2), a, true).to(tx::Device::cpu()).to_vector(),
                tx::argmin(tx::slice(x, 0, 1, 6, 2), a, true).to_vector())
          << at;
    }
  }
  if constexpr (!tx::is_complex_v<T>) {
    EXPECT_EQ(tx::argmax(xd).to(tx::Device::cpu()).item(), tx::argmax(x).item());
    const T nan = std::numeric_limits<T>::quiet_NaN();
    const auto n = Tensor<T>::from_col_major({4}, {T(1), nan, T(3), nan});
    EXPECT_EQ(tx::argmax(n.to(gpu)).to(tx::Device::cpu()).item(), 1);
  }
  const auto z = Tensor<T>::from_col_major({4, 2}, {T(2), T(0), T(3), T(0.5), T(0), T(1.5), T(0), T(2)});
  const auto loss = [](const Tensor<T>& v) { return tx::sum(tx::mul(tx::cumprod(v, 0), v)); };
  expect_device_close(tx::grad(loss, z.to(gpu)), tx::grad(loss, z), tol<T>(), "cumprod gradient with zeros");
}

TEST(Cuda, ScansAndArgReductionsMatchTheCpu) {
  REQUIRE_GPU();
  scan_family<float>();
  scan_family<double>();
  scan_family<C>();
}

// Random numbers from the same generator state: identical integers and uniform floats, normals to
// the last bits of the device's log/cos/sin.
TEST(Cuda, RandomNumbersMatchTheCpu) {
  REQUIRE_GPU();
  const tx::Shape s{257, 130};
  const auto on = [&](tx::Device d, auto f) {
    tx::Generator g(2024);
    return f(g, d).to(tx::Device::cpu()).to_vector();
  };
  EXPECT_EQ(on(gpu, [&](tx::Generator& g, tx::Device d) { return tx::rand<double>(s, g, d); }),
            on(tx::Device::cpu(), [&](tx::Generator& g, tx::Device d) { return tx::rand<double>(s, g, d); }));
  EXPECT_EQ(on(gpu, [&](tx::Generator& g, tx::Device d) { return tx::rand<Cf>(s, g, d); }),
            on(tx::Device::cpu(), [&](tx::Generator& g, tx::Device d) { return tx::rand<Cf>(s, g, d); }));
  EXPECT_EQ(on(gpu, [&](tx::Generator& g, tx::Device d) { return tx::randint(-7, 1000003, s, g, d); }),
            on(tx::Device::cpu(), [&](tx::Generator& g, tx::Device d) { return tx::randint(-7, 1000003, s, g, d); }));
  EXPECT_EQ(
      on(gpu, [&](tx::Generator& g, tx::Device d) { return tx::randperm<std::int32_t>(500, g, d); }),
      on(tx::Device::cpu(), [&](tx::Generator& g, tx::Device d) { return tx::randperm<std::int32_t>(500, g, d); }));
  EXPECT_EQ(on(gpu, [&](tx::Generator& g, tx::Device d) { return tx::bernoulli<bool>(0.3, s, g, d); }),
            on(tx::Device::cpu(), [&](tx::Generator& g, tx::Device d) { return tx::bernoulli<bool>(0.3, s, g, d); }));
  tx::Generator g1(7), g2(7);
  expect_device_close(tx::randn<double>(s, g1, gpu), tx::randn<double>(s, g2), 1e-14, "randn f64");
  expect_device_close(tx::randn<C>(s, g1, gpu), tx::randn<C>(s, g2), 1e-14, "randn c128");
  expect_device_close(tx::randn<float>(s, g1, gpu), tx::randn<float>(s, g2), 1e-5, "randn f32");
  EXPECT_EQ(g1.offset(), g2.offset());
}

template <class T>
void matmul_family() {
  const auto a = input<T>({5, 7, 3}, 51), b = input<T>({7, 4, 3}, 52), b1 = input<T>({7, 4}, 53);
  const auto ad = a.to(gpu), bd = b.to(gpu), b1d = b1.to(gpu);
  expect_device_close(tx::matmul(ad, bd), tx::matmul(a, b), tol<T>(), "batched");
  expect_device_close(tx::matmul(ad, b1d), tx::matmul(a, b1), tol<T>(), "broadcast");
  expect_device_close(tx::matmul(b1d.mT(), ad.mT()), tx::matmul(b1.mT(), a.mT()), tol<T>(), "transposed");
  const auto big = input<T>({130, 129}, 54);
  expect_device_close(tx::matmul(big.to(gpu), big.to(gpu).mH()), tx::matmul(big, big.mH()), tol<T>() * 10, "130x129");
}

TEST(Cuda, MatmulMatchesTheCpu) {
  REQUIRE_GPU();
  matmul_family<float>();
  matmul_family<double>();
  matmul_family<Cf>();
  matmul_family<C>();
}

// The mlp loss of BENCHMARKS.md: gradients, a JVP and a Hessian-vector product on the device
// against the CPU.
TEST(Cuda, GradientsJvpAndSecondOrderMatchTheCpu) {
  REQUIRE_GPU();
  auto loss = [](const Tensor<double>& x, const Tensor<double>& w, const Tensor<double>& b) {
    const auto h = tx::relu(tx::add(tx::matmul(x, w), b));
    return tx::mean(tx::square(tx::tanh(h)));
  };
  const auto x = input<double>({8, 16}, 61, -1, 1), w = input<double>({16, 8}, 62, -1, 1),
             b = input<double>({1, 8}, 63, -1, 1);
  const auto xd = x.to(gpu), wd = w.to(gpu), bd = b.to(gpu);
  const auto gc = tx::grad(loss, x, w, b);
  const auto gd = tx::grad(loss, xd, wd, bd);
  expect_device_close(std::get<0>(gd), std::get<0>(gc), 1e-12, "grad x");
  expect_device_close(std::get<1>(gd), std::get<1>(gc), 1e-12, "grad w");
  expect_device_close(std::get<2>(gd), std::get<2>(gc), 1e-12, "grad b");
  auto f = [&](const Tensor<double>& v) {
    return loss(x.device() == v.device() ? x : xd, v, v.device() == gpu ? bd : b);
  };
  const auto dir = input<double>({16, 8}, 64, -1, 1);
  const auto jc = tx::jvp(f, w, dir), jd = tx::jvp(f, wd, dir.to(gpu));
  expect_device_close(jd.second, jc.second, 1e-12, "jvp");
  const auto hc = tx::hvp(f, w, dir), hd = tx::hvp(f, wd, dir.to(gpu));
  expect_device_close(hd, hc, 1e-11, "hvp");
}

// The AD transforms on the device: Jacobians (jacrev, jacfwd with its replayed linearization),
// a Hessian, a custom op with one rule transposed, and checkpoint, against the CPU.
TEST(Cuda, TransformsMatchTheCpu) {
  REQUIRE_GPU();
  const auto A = input<double>({4, 4}, 81, -1, 1), x = input<double>({4, 2}, 82, -1, 1);
  const auto Ad = A.to(gpu), xd = x.to(gpu);
  auto f = [&](const Tensor<double>& v) {
    const auto& M = v.device() == gpu ? Ad : A;
    return tx::linalg::solve(tx::add(M, tx::mul(Tensor<double>::eye(4, 4, v.device()), 4.0)), tx::tanh(v));
  };
  expect_device_close(tx::jacrev(f, xd), tx::jacrev(f, x), 1e-12, "jacrev");
  expect_device_close(tx::jacfwd(f, xd), tx::jacfwd(f, x), 1e-12, "jacfwd");
  auto loss = [&](const Tensor<double>& v) { return tx::sum(tx::square(f(v))); };
  expect_device_close(tx::hessian(loss, xd), tx::hessian(loss, x), 1e-11, "hessian");
  const auto softplus = tx::custom_jvp(
      "softplus", [](const Tensor<double>& v) { return tx::log1p(tx::exp(v)); },
      [](const Tensor<double>& v, const Tensor<double>&, const Tensor<double>& dv) {
        return tx::mul(dv, tx::sigmoid(v));
      });
  auto g = [&](const Tensor<double>& v) {
    return tx::sum(tx::checkpoint([&](const Tensor<double>& u) { return softplus(tx::sin(u)); }, v));
  };
  expect_device_close(tx::grad(g, xd), tx::grad(g, x), 1e-12, "custom rule and checkpoint");
}

// A prepared program runs on the device, equals the eager device result bit for bit, and after
// the first run takes every buffer from the device pool.
TEST(Cuda, CompiledProgramsRunOnTheDevice) {
  REQUIRE_GPU();
  auto step = [](const Tensor<double>& w, const Tensor<double>& x) {
    auto [l, g] = tx::value_and_grad([&](const Tensor<double>& v) { return tx::sum(tx::square(tx::matmul(x, v))); }, w);
    return std::tuple{l, tx::sub(w, tx::mul(g, 0.01))};
  };
  const auto w = input<double>({6, 3}, 71).to(gpu), x = input<double>({5, 6}, 72).to(gpu);
  auto prog = tx::compile(step, w, x);
  const auto [l0, w0] = step(w, x);
  const auto [l1, w1] = prog(w, x);
  EXPECT_EQ(l1.to(tx::Device::cpu()).to_vector(), l0.to(tx::Device::cpu()).to_vector());
  EXPECT_EQ(w1.to(tx::Device::cpu()).to_vector(), w0.to(tx::Device::cpu()).to_vector());
  tx::reset_allocator_stats(gpu);
  for (int i = 0; i < 5; ++i) prog(w, x);
  const auto s = tx::allocator_stats(gpu);
  EXPECT_EQ(s.pool_misses, 0);
  EXPECT_EQ(s.system_allocs, 0);
  // A CPU input against the device signature is refused.
  const std::string e = tx::testing::error_of([&] { prog(w.to(tx::Device::cpu()), x); });
  EXPECT_TRUE(tx::testing::has(e, "cuda:0")) << e;
}

TEST(Cuda, AllocatorPoolsAndReleases) {
  REQUIRE_GPU();
  tx::release_cached_memory(gpu);
  tx::reset_allocator_stats(gpu);
  { auto t = Tensor<double>::empty({1000}, gpu); }
  { auto t = Tensor<double>::empty({1000}, gpu); }
  auto s = tx::allocator_stats(gpu);
  EXPECT_EQ(s.system_allocs, 1);
  EXPECT_EQ(s.pool_hits, 1);
  EXPECT_EQ(s.bytes_live, 0);
  EXPECT_GT(s.bytes_cached, 0);
  tx::release_cached_memory(gpu);
  EXPECT_EQ(tx::allocator_stats(gpu).bytes_cached, 0);
}

// Coverage: every public op (the table in every_op.hpp, which test_cuda_coverage keeps complete)
// runs on the device, leaves its outputs there, and agrees with the CPU in float64. An op without a
// CUDA path raises an Error naming itself and the device (or, for a functor without a device
// instance, fails to link), which fails the case like a wrong number, shape or device would; the
// agreement of each op is printed.
TEST(Cuda, EveryOpMatchesTheCpu) {
  REQUIRE_GPU();
  std::vector<std::string> failed;
  for (const auto& call : tx::testing::every_op_calls()) {
    const tx::testing::OpOutputs want = call.run(tx::Device::cpu());
    tx::testing::OpOutputs got;
    if (const std::string e = tx::testing::error_of([&] { got = call.run(gpu); }); !e.empty()) {
      ADD_FAILURE() << call.name << " on cuda:0: " << e;
      failed.push_back(call.name);
      continue;
    }
    ASSERT_EQ(got.values.size(), want.values.size()) << call.name;
    double worst = 0;  // max |gpu - cpu| / (1 + max |cpu|) over the op's outputs
    bool ok = true;
    for (std::size_t k = 0; k < want.values.size(); ++k) {
      EXPECT_TRUE(got.devices[k] == gpu) << call.name << " output " << k << " on " << got.devices[k].str();
      EXPECT_EQ(got.shapes[k], want.shapes[k]) << call.name << " output " << k;
      if (got.values[k].size() != want.values[k].size()) {
        ok = false;
        continue;
      }
      double scale = 0;
      for (double v : want.values[k]) scale = std::max(scale, std::abs(v));
      for (std::size_t i = 0; i < want.values[k].size(); ++i) {
        const double w = want.values[k][i], g = got.values[k][i];
        if (std::isnan(w) || std::isnan(g)) {
          ok = ok && std::isnan(w) && std::isnan(g);
          continue;
        }
        worst = std::max(worst, std::abs(g - w) / (1 + scale));
      }
    }
    ok = ok && worst <= 1e-11;
    EXPECT_TRUE(ok) << call.name << ": relative difference " << worst;
    if (!ok) failed.push_back(call.name);
    std::printf("%-18s gpu vs cpu (f64): %.2e\n", call.name.c_str(), worst);
  }
  EXPECT_TRUE(failed.empty()) << failed.size() << " ops failed on cuda:0";
}

namespace {

template <class T>
void linalg_values() {
  using R = tx::real_t<T>;
  const double t = tol<T>() * 100;
  const auto A = spd<T>(6, {3}, 91), Ad = A.to(gpu);
  const auto G = Tensor<T>::randn({6, 6, 3}, 92), Gd = G.to(gpu);
  const auto B = Tensor<T>::randn({6, 2, 3}, 93), Bd = B.to(gpu);
  expect_device_close(tx::linalg::cholesky(Ad), tx::linalg::cholesky(A), t, "cholesky");
  expect_device_close(tx::linalg::cholesky(Ad, true), tx::linalg::cholesky(A, true), t, "cholesky upper");
  expect_device_close(tx::linalg::solve(Gd, Bd), tx::linalg::solve(G, B), t, "solve");
  expect_device_close(tx::linalg::inv(Gd), tx::linalg::inv(G), t, "inv");
  const auto L = tx::linalg::cholesky(A);
  expect_device_close(tx::linalg::solve_triangular(L.to(gpu), Bd, false), tx::linalg::solve_triangular(L, B, false), t,
                      "solve_triangular");
  expect_device_close(tx::linalg::triangular_matmul(L.to(gpu), Bd, false, true, false, tx::linalg::Trans::C),
                      tx::linalg::triangular_matmul(L, B, false, true, false, tx::linalg::Trans::C), t,
                      "triangular_matmul");
  expect_device_close(tx::linalg::eigvalsh(Ad), tx::linalg::eigvalsh(A), t, "eigvalsh");
  // Eigenvectors are unique up to a phase per column: compare A V = V diag(w) and V^H V = I.
  auto [w, V] = tx::linalg::eigh(Ad);
  const auto Vc = V.to(tx::Device::cpu());
  const auto res = tx::sub(tx::matmul(A, Vc), tx::mul(Vc, tx::cast<T>(tx::detail::as_row(w.to(tx::Device::cpu())))));
  EXPECT_LE(tx::max(tx::abs(res)).item(), R(t * 100)) << "eigh residual";
  expect_device_close(tx::linalg::det(Gd), tx::linalg::det(G), t, "det");
  {
    auto [sd, ld] = tx::linalg::slogdet(Gd);
    auto [sc, lc] = tx::linalg::slogdet(G);
    expect_device_close(sd, sc, t, "slogdet sign");
    expect_device_close(ld, lc, t, "slogdet log");
  }
  {
    auto [P, Lw, Uw] = tx::linalg::lu(Gd);
    auto [Pc, Lc, Uc] = tx::linalg::lu(G);
    expect_device_close(P, Pc, 0, "lu P");
    expect_device_close(Lw, Lc, t, "lu L");
    expect_device_close(Uw, Uc, t, "lu U");
  }
  for (const tx::Shape& s : {tx::Shape{7, 4, 2}, tx::Shape{4, 7, 2}}) {
    const auto M = Tensor<T>::randn(s, 95);
    expect_device_close(tx::linalg::svdvals(M.to(gpu)), tx::linalg::svdvals(M), t, "svdvals");
    auto [U, S, Vh] = tx::linalg::svd(M.to(gpu));
    const auto rec = tx::matmul(tx::mul(U, tx::cast<T>(tx::detail::as_row(S))), Vh).to(tx::Device::cpu());
    EXPECT_LE(tx::max(tx::abs(tx::sub(rec, M))).item(), R(t * 100)) << "svd reconstruction";
  }
  for (auto mode : {tx::linalg::QrMode::Reduced, tx::linalg::QrMode::Complete, tx::linalg::QrMode::R}) {
    for (const tx::Shape& s : {tx::Shape{7, 4, 2}, tx::Shape{4, 7, 2}}) {
      const auto M = Tensor<T>::randn(s, 94);
      auto [Qd, Rd] = tx::linalg::qr(M.to(gpu), mode, true);
      auto [Qc, Rc] = tx::linalg::qr(M, mode, true);
      expect_device_close(Rd, Rc, t, "qr R");
      if (Qc.defined()) expect_device_close(Qd, Qc, t, "qr Q");
    }
  }
}

}  // namespace

TEST(Cuda, LinalgMatchesTheCpu) {
  REQUIRE_GPU();
  linalg_values<double>();
  linalg_values<C>();
  linalg_values<float>();
}

// First-order gradients through every device linalg op, and a second-order one, against the CPU.
TEST(Cuda, LinalgGradientsMatchTheCpu) {
  REQUIRE_GPU();
  const auto A = spd<double>(5, {3}, 95), G = Tensor<double>::randn({5, 5, 3}, 96),
             B = Tensor<double>::randn({5, 2, 3}, 97);
  auto check = [&](const std::string& what, auto f, const Tensor<double>& x) {
    expect_device_close(tx::grad(f, x.to(gpu)), tx::grad(f, x), 1e-9, what);
  };
  check(
      "cholesky", [](const Tensor<double>& a) { return tx::sum(tx::square(tx::linalg::cholesky(a))); }, A);
  check(
      "eigvalsh", [](const Tensor<double>& a) { return tx::sum(tx::square(tx::linalg::eigvalsh(a))); }, A);
  check(
      "eigh |V|^2",
      [](const Tensor<double>& a) {
        auto [w, V] = tx::linalg::eigh(a);
        return tx::add(tx::sum(tx::mul(tx::square(V), tx::square(V))), tx::sum(w));
      },
      A);
  check(
      "solve", [&](const Tensor<double>& a) { return tx::sum(tx::square(tx::linalg::solve(a, B.to(a.device())))); }, G);
  check(
      "inv", [](const Tensor<double>& a) { return tx::sum(tx::linalg::inv(a)); }, G);
  check(
      "qr",
      [](const Tensor<double>& a) {
        auto [Q, R] = tx::linalg::qr(a, tx::linalg::QrMode::Reduced, true);
        return tx::add(tx::sum(tx::square(R)), tx::sum(Q));
      },
      G);
  check(
      "det", [](const Tensor<double>& a) { return tx::sum(tx::linalg::det(a)); }, G);
  check(
      "slogdet", [](const Tensor<double>& a) { return tx::sum(std::get<1>(tx::linalg::slogdet(a))); }, G);
  check(
      "svdvals", [](const Tensor<double>& a) { return tx::sum(tx::linalg::svdvals(a)); }, G);
  check(
      "lu",
      [](const Tensor<double>& a) {
        auto [P, L, U] = tx::linalg::lu(a);
        return tx::add(tx::sum(L), tx::sum(U));
      },
      G);
  // Second order: the Hessian-vector product of a solve-based loss.
  auto f = [&](const Tensor<double>& a) { return tx::sum(tx::square(tx::linalg::solve(a, B.to(a.device())))); };
  const auto v = Tensor<double>::randn({5, 5, 3}, 98);
  expect_device_close(tx::hvp(f, G.to(gpu), v.to(gpu)), tx::hvp(f, G, v), 1e-8, "hvp solve");
}

// Failures on the device are reported like on the CPU: the same LinAlgError for the default
// variants (when the device's results are next read: core/deferred_checks.hpp), the same info codes
// (kept on the device) for the _ex variants.
TEST(Cuda, LinalgFailuresReportLikeTheCpu) {
  REQUIRE_GPU();
  tx::cuda::synchronize(0);  // (runs the checks earlier cases left)
  auto A = tx::contiguous(spd<double>(4, {3}, 99));
  A.mutable_data()[16] = -100;  // matrix 1 is not positive definite
  auto message = [](auto f) {
    try {
      f();
    } catch (const tx::linalg::LinAlgError& e) {
      return tx::testing::on_device(e.what(), "cuda:0", "cpu");  // the device's message read as the CPU's
    }
    return std::string();
  };
  const auto Ad = A.to(gpu);
  const std::string mc = message([&] { tx::linalg::cholesky(A); });
  // On the device the call returns without waiting for the info codes; reading the result raises.
  Tensor<double> Lbad;
  EXPECT_NO_THROW(Lbad = tx::linalg::cholesky(Ad));
  EXPECT_EQ(tx::detail::deferred_checks(gpu), 1u);
  const std::string md = message([&] { (void)Lbad.to(tx::Device::cpu()); });
  EXPECT_FALSE(mc.empty());
  EXPECT_EQ(md, mc);
  EXPECT_EQ(tx::detail::deferred_checks(gpu), 0u);
  // ... or synchronising the device; a good matrix's check passes silently.
  (void)tx::linalg::cholesky(Ad);
  EXPECT_EQ(message([&] { tx::cuda::synchronize(0); }), mc);
  const auto good = tx::linalg::cholesky(spd<double>(4, {3}, 101).to(gpu));
  EXPECT_NO_THROW(tx::cuda::synchronize(0));
  expect_device_close(good, tx::linalg::cholesky(spd<double>(4, {3}, 101)), 1e-12, "cholesky after a failure");
  // A compiled program queues its runs without a synchronisation; the failure of one of K runs
  // raises at the barrier.
  const auto spd_d = spd<double>(4, {3}, 102).to(gpu);
  const auto prog = tx::compile([](const Tensor<double>& x) { return tx::linalg::cholesky(x); }, spd_d);
  (void)prog(spd_d);
  tx::cuda::synchronize(0);
  for (int k = 0; k < 8; ++k) (void)prog(k == 5 ? Ad : spd_d);
  EXPECT_EQ(tx::detail::deferred_checks(gpu), 8u);
  EXPECT_EQ(message([&] { tx::cuda::synchronize(0); }), mc);
  EXPECT_NO_THROW((void)prog(spd_d).to(tx::Device::cpu()));
  // The _ex variants leave no check.
  (void)tx::linalg::cholesky_ex(Ad);
  EXPECT_EQ(tx::detail::deferred_checks(gpu), 0u);
  auto [Ld, info_d] = tx::linalg::cholesky_ex(Ad);
  auto [Lc, info_c] = tx::linalg::cholesky_ex(A);
  EXPECT_TRUE(info_d.device() == gpu);
  EXPECT_EQ(info_d.to(tx::Device::cpu()).to_vector(), info_c.to_vector());
  auto S = tx::contiguous(Tensor<double>::randn({3, 3, 2}, 100));
  for (int i = 0; i < 3; ++i) S.mutable_data()[9 + i] = 0;  // matrix 1 singular
  auto [Xd, sd] = tx::linalg::solve_ex(S.to(gpu), Tensor<double>::ones({3, 1, 2}).to(gpu));
  auto [Xc, sc] = tx::linalg::solve_ex(S, Tensor<double>::ones({3, 1, 2}));
  EXPECT_EQ(sd.to(tx::Device::cpu()).to_vector(), sc.to_vector());
  S.mutable_data()[0] = NAN;
  const std::string qc = message([&] { tx::linalg::qr(S); }),
                    qd = message([&] { (void)std::get<1>(tx::linalg::qr(S.to(gpu))).to(tx::Device::cpu()); });
  EXPECT_FALSE(qc.empty());
  EXPECT_EQ(qd, qc);
}

// Paths added without a GPU to run them (session 12 and 13): concat's tree of copying
// concatenations, imag of a real tensor, lu_factor + lu_solve and its singular-factors check
// (ops::ZeroPivotInfo's tensor-op branch), det and its second derivative at singular matrices
// (per-matrix rule split, ops::Adjugate), and a subnormal pivot (the CPU refactors and scales;
// cuSOLVER's and cuBLAS's behaviour there is what this checks).
TEST(Cuda, ConcatImagLuSolveSingularDetSubnormal) {
  REQUIRE_GPU();
  tx::cuda::synchronize(0);
  const auto a = Tensor<double>::randn({3, 2, 2}, 111), b = Tensor<double>::randn({3, 4, 2}, 112),
             c = Tensor<double>::randn({3, 1, 2}, 113);
  expect_device_close(tx::concat<double>({a.to(gpu), b.to(gpu), c.to(gpu)}, 1), tx::concat<double>({a, b, c}, 1), 0,
                      "concat");
  const auto w = Tensor<double>::randn({3, 7, 2}, 114);
  auto loss = [&](const Tensor<double>& x) {
    return tx::sum(tx::mul(tx::concat<double>({x, tx::square(x), x}, 1), w.to(x.device())));
  };
  expect_device_close(tx::grad(loss, b.to(gpu)), tx::grad(loss, b), 1e-12, "concat grad");
  expect_device_close(tx::imag(a.to(gpu)), tx::imag(a), 0, "imag of real");
  const auto z = Tensor<C>::randn({3, 3}, 115);
  expect_device_close(tx::imag(z.to(gpu)), tx::imag(z), 0, "imag of complex");

  const auto G = Tensor<double>::randn({4, 4, 3}, 116), B = Tensor<double>::randn({4, 2, 3}, 117);
  auto [LUd, pd] = tx::linalg::lu_factor(G.to(gpu));
  auto [LUc, pc] = tx::linalg::lu_factor(G);
  expect_device_close(LUd, LUc, 1e-12, "lu_factor");
  for (auto t : {tx::linalg::Trans::N, tx::linalg::Trans::T})
    expect_device_close(tx::linalg::lu_solve(LUd, pd, B.to(gpu), t), tx::linalg::lu_solve(LUc, pc, B, t), 1e-11,
                        "lu_solve");
  auto S = tx::clone(G);
  for (int i = 0; i < 4; ++i) S.mutable_data()[16 + 4 + i] = 0;  // matrix 1 singular
  // (Named tensors, not structured bindings: clang before 16 cannot capture those in a lambda.)
  const auto fd = tx::linalg::lu_factor(S.to(gpu)), fc = tx::linalg::lu_factor(S);
  const std::string mc = tx::testing::error_of([&] { tx::linalg::lu_solve(fc.first, fc.second, B); });
  const std::string md =
      tx::testing::error_of([&] { (void)tx::linalg::lu_solve(fd.first, fd.second, B.to(gpu)).to(tx::Device::cpu()); });
  EXPECT_FALSE(mc.empty());
  EXPECT_EQ(tx::testing::on_device(md, "cuda:0", "cpu"), mc);
  tx::cuda::synchronize(0);

  // det: a batch of a singular (rank 2) and regular matrices; values, gradient and hvp.
  auto D = tx::contiguous(Tensor<double>::randn({3, 3, 2}, 118));
  for (int i = 0; i < 3; ++i) D.mutable_data()[6 + i] = D.mutable_data()[i] + D.mutable_data()[3 + i];
  auto f = [](const Tensor<double>& x) { return tx::sum(tx::linalg::det(x)); };
  expect_device_close(tx::linalg::det(D.to(gpu)), tx::linalg::det(D), 1e-12, "det");
  expect_device_close(tx::grad(f, D.to(gpu)), tx::grad(f, D), 1e-11, "det grad at a singular matrix");
  const auto v = Tensor<double>::randn({3, 3, 2}, 119);
  expect_device_close(tx::hvp(f, D.to(gpu), v.to(gpu)), tx::hvp(f, D, v), 1e-10, "det hvp at a singular matrix");

  // diag(1e-310, 1): the CPU gives det 1e-310 and solve (1, 2) exactly.
  const auto T = Tensor<double>::from_col_major({2, 2}, {1e-310, 0, 0, 1});
  const auto y = Tensor<double>::from_col_major({2, 1}, {1e-310, 2});
  expect_device_close(tx::linalg::solve(T.to(gpu), y.to(gpu)), tx::linalg::solve(T, y), 1e-15,
                      "solve, subnormal pivot");
  EXPECT_NEAR(tx::linalg::det(T.to(gpu)).item() / 1e-310, 1.0, 1e-12) << "det, subnormal pivot";
  expect_device_close(tx::linalg::solve_triangular(T.to(gpu), y.to(gpu), true),
                      tx::linalg::solve_triangular(T, y, true), 1e-15, "solve_triangular, subnormal diagonal");
}

namespace {

// U^H U = I for the columns of U (copied back).
template <class T>
tx::real_t<T> orthogonality_error(const Tensor<T>& U) {
  const auto u = U.to(tx::Device::cpu());
  const auto I = Tensor<T>::eye(u.shape()[1]);
  return tx::max(tx::abs(tx::sub(tx::matmul(u.mH(), u), I))).item();
}

// Each solver op on the device against the CPU for n x n x batch inputs: SPD ones (matrix 0 not
// positive definite when `fail`) and general ones (matrix 0 singular when `fail`).
template <class T>
void solver_calls_match(std::int64_t n, std::int64_t nb, bool fail, const std::string& at) {
  using R = tx::real_t<T>;
  const double t = std::is_same_v<R, float> ? 2e-3 : 1e-9;
  const auto cpu = tx::Device::cpu();
  auto A = tx::contiguous(spd<T>(n, {nb}, 130 + static_cast<std::uint64_t>(n)));
  auto G = tx::contiguous(Tensor<T>::randn({n, n, nb}, 120 + static_cast<std::uint64_t>(n)));
  if (fail) {
    A.mutable_data()[0] = T(-1);
    for (std::int64_t i = 0; i < n; ++i) G.mutable_data()[(n - 1) * n + i] = T(0);
  }
  const auto Ad = A.to(gpu), Gd = G.to(gpu);
  {
    auto [Ld, id] = tx::linalg::cholesky_ex(Ad);
    auto [Lc, ic] = tx::linalg::cholesky_ex(A);
    EXPECT_EQ(id.to(cpu).to_vector(), ic.to_vector()) << "cholesky info" << at;
    expect_device_close(Ld, Lc, t, "cholesky" + at);
  }
  auto [LUd, pd, id] = tx::linalg::lu_factor_ex(Gd);
  auto [LUc, pc, ic] = tx::linalg::lu_factor_ex(G);
  EXPECT_EQ(id.to(cpu).to_vector(), ic.to_vector()) << "lu_factor info" << at;
  if constexpr (std::is_same_v<T, R>) {
    // Real pivoting has one answer (ties aside); a complex pivot's size may be measured as |z| or
    // |Re| + |Im| (LAPACK), so complex factors are checked by reconstruction below.
    EXPECT_EQ(pd.to(cpu).to_vector(), pc.to_vector()) << "pivots" << at;
    expect_device_close(LUd, LUc, t, "lu_factor" + at);
  }
  {
    auto [P, L, U] = tx::linalg::lu(Gd);
    const auto rec = tx::matmul(P, tx::matmul(L, U)).to(cpu);
    EXPECT_LE(tx::max(tx::abs(tx::sub(rec, G))).item(), R(t * n)) << "P L U = A" << at;
  }
  // Rectangular factors: cuSOLVER per matrix.
  {
    const auto W = Tensor<T>::randn({n, n / 2 + 1, nb}, 125);
    auto [LUw, pw] = tx::linalg::lu_factor(W.to(gpu));
    auto [LUwc, pwc] = tx::linalg::lu_factor(W);
    if constexpr (std::is_same_v<T, R>) expect_device_close(LUw, LUwc, t, "lu_factor, tall" + at);
  }
  if (!fail) {
    for (std::int64_t k : {std::int64_t{1}, std::int64_t{2}, n}) {
      const auto B = Tensor<T>::randn({n, k, nb}, 140 + static_cast<std::uint64_t>(k));
      for (auto tr : {tx::linalg::Trans::N, tx::linalg::Trans::T, tx::linalg::Trans::C})
        expect_device_close(tx::linalg::lu_solve(LUd, pd, B.to(gpu), tr), tx::linalg::lu_solve(LUc, pc, B, tr), t * n,
                            "lu_solve" + at + " nrhs " + std::to_string(k));
      expect_device_close(tx::linalg::solve(Gd, B.to(gpu)), tx::linalg::solve(G, B), t * n, "solve" + at);
    }
  }
  // Triangular solves: a triangle per matrix, or one for the whole batch (stride 0).
  const auto Tl = tx::add(tx::tril(G), tx::mul(Tensor<T>::eye(n), T(static_cast<double>(n))));
  const auto Bl = Tensor<T>::randn({n, 2, nb}, 145), Br = Tensor<T>::randn({2, n, nb}, 146);
  for (const auto& Tx : {Tl, tx::slice(Tl, 2, 0, 1, 1)})
    for (auto tr : {tx::linalg::Trans::N, tx::linalg::Trans::C}) {
      expect_device_close(tx::linalg::solve_triangular(Tx.to(gpu), Bl.to(gpu), false, true, false, tr),
                          tx::linalg::solve_triangular(Tx, Bl, false, true, false, tr), t,
                          "solve_triangular left" + at);
      expect_device_close(tx::linalg::solve_triangular(Tx.mH().to(gpu), Br.to(gpu), true, false, true, tr),
                          tx::linalg::solve_triangular(Tx.mH(), Br, true, false, true, tr), t,
                          "solve_triangular right" + at);
    }
  expect_device_close(tx::linalg::eigvalsh(Ad), tx::linalg::eigvalsh(A), t * n, "eigvalsh" + at);
  auto [w, V] = tx::linalg::eigh(Ad);
  const auto Vc = V.to(cpu);
  const auto res = tx::sub(tx::matmul(A, Vc), tx::mul(Vc, tx::cast<T>(tx::detail::as_row(w.to(cpu)))));
  EXPECT_LE(tx::max(tx::abs(res)).item(), R(t * n * n)) << "eigh residual" << at;
  EXPECT_LE(orthogonality_error(V), R(t * n)) << "eigh orthogonality" << at;
  const std::int64_t h = n / 2 + 1;
  for (const tx::Shape& s : {tx::Shape{n, n, nb}, tx::Shape{n, h, nb}, tx::Shape{h, n, nb}}) {
    const auto M = Tensor<T>::randn(s, 150 + static_cast<std::uint64_t>(s[1]));
    const std::string in = at + " shape " + std::to_string(s[0]) + "x" + std::to_string(s[1]);
    expect_device_close(tx::linalg::svdvals(M.to(gpu)), tx::linalg::svdvals(M), t * n, "svdvals" + in);
    auto [U, S, Vh] = tx::linalg::svd(M.to(gpu));
    const auto rec = tx::matmul(tx::mul(U, tx::cast<T>(tx::detail::as_row(S))), Vh).to(cpu);
    EXPECT_LE(tx::max(tx::abs(tx::sub(rec, M))).item(), R(t * n * n)) << "svd reconstruction" << in;
    auto [Uf, Sf, Vhf] = tx::linalg::svd(M.to(gpu), true);
    expect_device_close(Sf, tx::linalg::svdvals(M), t * n, "svd full S" + in);
    EXPECT_LE(orthogonality_error(Uf), R(t * n)) << "svd full U" << in;
    EXPECT_LE(orthogonality_error(Vhf.mH()), R(t * n)) << "svd full V" << in;
  }
}

}  // namespace

// The CUDA backend runs a batch through one batched cuBLAS/cuSOLVER call or one call per matrix
// (backend/cuda_batching.hpp). Both sides of every cut-off give the CPU's results and info codes.
TEST(Cuda, BatchedAndPerMatrixSolverCallsMatchTheCpu) {
  REQUIRE_GPU();
  tx::cuda::synchronize(0);
  struct Case {
    std::int64_t n, batch;
  };
  for (const Case c : {Case{4, 1}, Case{4, 40}, Case{8, 3}, Case{20, 2}, Case{33, 3}, Case{100, 2}, Case{100, 3}}) {
    for (bool fail : {false, true}) {
      const std::string at =
          " (n " + std::to_string(c.n) + ", batch " + std::to_string(c.batch) + (fail ? ", matrix 0 failing)" : ")");
      solver_calls_match<double>(c.n, c.batch, fail, at + " f64");
      solver_calls_match<C>(c.n, c.batch, fail, at + " c128");
      solver_calls_match<float>(c.n, c.batch, fail, at + " f32");
    }
  }
}

// 70000 2 x 2 matrices: more than one chunk (65535) of every batched call, and a zero and a
// subnormal pivot inside batched LU and triangular calls.
TEST(Cuda, BatchesBeyondOneChunk) {
  REQUIRE_GPU();
  tx::cuda::synchronize(0);
  const std::int64_t nb = 70000;
  const auto A = spd<double>(2, {nb}, 160), Ad = A.to(gpu);
  const auto G = Tensor<double>::randn({2, 2, nb}, 161), B = Tensor<double>::randn({2, 1, nb}, 162);
  expect_device_close(tx::linalg::cholesky(Ad), tx::linalg::cholesky(A), 1e-12, "cholesky, 70000 matrices");
  expect_device_close(tx::linalg::solve(G.to(gpu), B.to(gpu)), tx::linalg::solve(G, B), 1e-9, "solve, 70000 matrices");
  expect_device_close(tx::linalg::eigvalsh(Ad), tx::linalg::eigvalsh(A), 1e-12, "eigvalsh, 70000 matrices");
  expect_device_close(tx::linalg::svdvals(G.to(gpu)), tx::linalg::svdvals(G), 1e-12, "svdvals, 70000 matrices");
  const auto Ld = tx::linalg::cholesky(Ad);
  expect_device_close(tx::linalg::solve_triangular(Ld, B.to(gpu), false),
                      tx::linalg::solve_triangular(tx::linalg::cholesky(A), B, false), 1e-10,
                      "solve_triangular, 70000 matrices");
  auto [w, V] = tx::linalg::eigh(Ad);
  const auto Vc = V.to(tx::Device::cpu());
  const auto res = tx::sub(tx::matmul(A, Vc), tx::mul(Vc, tx::detail::as_row(w.to(tx::Device::cpu()))));
  EXPECT_LE(tx::max(tx::abs(res)).item(), 1e-10) << "eigh residual, 70000 matrices";
  auto [U, S, Vh] = tx::linalg::svd(G.to(gpu));
  const auto rec = tx::matmul(tx::mul(U, tx::detail::as_row(S)), Vh).to(tx::Device::cpu());
  EXPECT_LE(tx::max(tx::abs(tx::sub(rec, G))).item(), 1e-10) << "svd reconstruction, 70000 matrices";

  // A zero pivot in a middle column of matrix 1 (exact: multipliers 1/4 and 1/2), in a batch that
  // cuBLAS's batched LU takes: the same info as LAPACK, and factors that still give P L U = A
  // (LAPACK completes the factorization past the zero pivot without dividing by it; which of two
  // zero candidates becomes the pivot is not fixed, so the factors are not compared).
  auto Z = tx::clone(Tensor<double>::randn({3, 3, 3}, 163));
  const double z[9] = {1, 2, 4, 2, 4, 8, 3, 5, 7};  // columns (1, 2, 4), (2, 4, 8), (3, 5, 7)
  for (int i = 0; i < 9; ++i) Z.mutable_data()[9 + i] = z[i];
  auto [LUz, pz, iz] = tx::linalg::lu_factor_ex(Z.to(gpu));
  auto [LUzc, pzc, izc] = tx::linalg::lu_factor_ex(Z);
  EXPECT_EQ(izc.to_vector(), (std::vector<std::int32_t>{0, 2, 0}));
  EXPECT_EQ(iz.to(tx::Device::cpu()).to_vector(), izc.to_vector()) << "info, middle zero pivot";
  {
    auto [P, L, U] = tx::linalg::lu(Z.to(gpu));
    const auto rec = tx::matmul(P, tx::matmul(L, U)).to(tx::Device::cpu());
    EXPECT_LE(tx::max(tx::abs(tx::sub(rec, Z))).item(), 1e-14) << "P L U = A, middle zero pivot";
  }
  // and a subnormal pivot in a batch (the CPU refactors; what cuBLAS does is what this checks)
  auto D = tx::clone(Tensor<double>::randn({2, 2, 3}, 164));
  const double d[4] = {1e-310, 0, 0, 1};
  for (int i = 0; i < 4; ++i) D.mutable_data()[4 + i] = d[i];
  auto y = tx::clone(Tensor<double>::randn({2, 1, 3}, 165));
  y.mutable_data()[2] = 3e-310;  // matrix 1's x = (3, y1): no overflow
  expect_device_close(tx::linalg::solve(D.to(gpu), y.to(gpu)), tx::linalg::solve(D, y), 1e-12,
                      "solve, subnormal pivot, batch 3");
  expect_device_close(tx::linalg::solve_triangular(D.to(gpu), y.to(gpu), true),
                      tx::linalg::solve_triangular(D, y, true), 1e-12, "solve_triangular, subnormal diagonal, batch 3");
}

// Pivots are checked and turned into permutations on the device, with no synchronisation: a pivot
// outside 1..n from the user raises the CPU's error when the result is read, and the solve before
// it stayed inside the matrices (compute-sanitizer in scripts/gpu_check.sh would see otherwise).
TEST(Cuda, PivotsAreCheckedOnTheDevice) {
  REQUIRE_GPU();
  tx::cuda::synchronize(0);
  const auto cpu = tx::Device::cpu();
  const auto G = Tensor<double>::randn({3, 3, 2}, 170), B = Tensor<double>::randn({3, 1, 2}, 171);
  const auto factors = tx::linalg::lu_factor(G);
  const Tensor<double>& LU = factors.first;
  const Tensor<std::int32_t>& piv = factors.second;
  for (std::int32_t wrong : {0, 4, -2}) {
    auto bad = tx::clone(piv);
    bad.mutable_data()[3 + 1] = wrong;  // matrix 1, pivot 1
    const std::string mc = tx::testing::error_of([&] { tx::linalg::lu_solve(LU, bad, B); });
    EXPECT_FALSE(mc.empty());
    Tensor<double> X;
    EXPECT_NO_THROW(X = tx::linalg::lu_solve(LU.to(gpu), bad.to(gpu), B.to(gpu)));
    EXPECT_EQ(tx::detail::deferred_checks(gpu), 2u);  // singular factors (passes), pivots (fails)
    EXPECT_EQ(tx::testing::on_device(tx::testing::error_of([&] { (void)X.to(cpu); }), "cuda:0", "cpu"), mc);
    // The differentiable composite (op T, LU requiring its gradient) permutes by pivot_rows,
    // checked the same way.
    auto loss = [&](const Tensor<double>& lu) {
      return tx::sum(tx::linalg::lu_solve(lu, bad.to(lu.device()), B.to(lu.device()), tx::linalg::Trans::T));
    };
    const std::string gc = tx::testing::error_of([&] { tx::grad(loss, LU); });
    EXPECT_FALSE(gc.empty());
    EXPECT_EQ(tx::testing::on_device(tx::testing::error_of([&] { (void)tx::grad(loss, LU.to(gpu)).to(cpu); }), "cuda:0",
                                     "cpu"),
              gc);
    tx::cuda::synchronize(0);
  }
  // Valid pivots: the device's permutation and its inverse give the CPU's solve and gradient.
  auto loss = [&](const Tensor<double>& lu) {
    return tx::sum(tx::linalg::lu_solve(lu, piv.to(lu.device()), B.to(lu.device()), tx::linalg::Trans::T));
  };
  expect_device_close(tx::grad(loss, LU.to(gpu)), tx::grad(loss, LU), 1e-11, "lu_solve T gradient in LU");
  EXPECT_EQ(tx::detail::deferred_checks(gpu), 0u);
}

// The eigh/svd gauge check on the device is deferred like the info checks: a loss that depends on
// the eigenvector phases raises the CPU's error (its sizes aside: the phases differ) when the
// gradient is read, and a phase-invariant loss leaves a passing check.
TEST(Cuda, GaugeChecksAreDeferred) {
  REQUIRE_GPU();
  tx::cuda::synchronize(0);
  const auto a = Tensor<C>::randn({4, 4}, 180);
  const auto A = tx::add(tx::matmul(a, a.mH()), Tensor<C>::eye(4));
  const auto W = Tensor<C>::randn({4, 4}, 181);
  auto phase_dependent = [&](const Tensor<C>& x) {
    return tx::sum(tx::real(tx::mul(W.to(x.device()), std::get<1>(tx::linalg::eigh(x)))));
  };
  const std::string mc = tx::testing::error_of([&] { tx::grad(phase_dependent, A); });
  ASSERT_TRUE(mc.rfind("[eigh] the loss depends on the eigenvector phases", 0) == 0) << mc;
  Tensor<C> g;
  EXPECT_NO_THROW(g = tx::grad(phase_dependent, A.to(gpu)));
  EXPECT_GE(tx::detail::deferred_checks(gpu), 1u);
  const std::string md =
      tx::testing::on_device(tx::testing::error_of([&] { (void)g.to(tx::Device::cpu()); }), "cuda:0", "cpu");
  EXPECT_EQ(md.substr(0, md.find(" (dropped")), mc.substr(0, mc.find(" (dropped")));
  auto invariant = [](const Tensor<C>& x) {
    auto [w, V] = tx::linalg::eigh(x);
    return tx::sum(tx::real(tx::matmul(tx::mul(V, tx::cast<C>(tx::detail::as_row(w))), V.mH())));
  };
  expect_device_close(tx::grad(invariant, A.to(gpu)), tx::grad(invariant, A), 1e-10, "phase-invariant eigh gradient");
}

// slogdet_ex's info codes by tensor ops on the device: a regular, a singular (exact zero pivot)
// and a non-finite matrix give the CPU's codes, signs and logs.
TEST(Cuda, SlogdetInfoOnTheDevice) {
  REQUIRE_GPU();
  tx::cuda::synchronize(0);
  auto M = tx::clone(Tensor<double>::randn({3, 3, 3}, 190));
  const double z[9] = {1, 2, 4, 2, 4, 8, 3, 5, 7};  // U(2, 2) = 0 exactly (as in the batched LU test)
  for (int i = 0; i < 9; ++i) M.mutable_data()[9 + i] = z[i];
  M.mutable_data()[18 + 4] = NAN;
  auto [sd, ld, id] = tx::linalg::slogdet_ex(M.to(gpu));
  auto [sc, lc, ic] = tx::linalg::slogdet_ex(M);
  EXPECT_EQ(ic.to_vector(), (std::vector<std::int32_t>{0, 2, tx::detail::kNonFiniteInfo}));
  EXPECT_EQ(id.to(tx::Device::cpu()).to_vector(), ic.to_vector());
  expect_device_close(sd, sc, 1e-12, "slogdet sign");
  const auto got = ld.to(tx::Device::cpu()).to_vector(), want = lc.to_vector();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_NEAR(got[0], want[0], 1e-12);
  EXPECT_EQ(got[1], -INFINITY);
  EXPECT_EQ(want[1], -INFINITY);
  EXPECT_TRUE(std::isnan(got[2]) && std::isnan(want[2]));
  // 0 x 0 matrices: sign 1, log 0, info 0 (no pivot to look at)
  auto [s0, l0, i0] = tx::linalg::slogdet_ex(Tensor<double>::zeros({0, 0, 3}, gpu));
  EXPECT_EQ(i0.to(tx::Device::cpu()).to_vector(), (std::vector<std::int32_t>{0, 0, 0}));
  EXPECT_EQ(s0.to(tx::Device::cpu()).to_vector(), (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(l0.to(tx::Device::cpu()).to_vector(), (std::vector<double>{0, 0, 0}));
}

// Indexing and sorting on the device: values (bit copies and sums in the CPU's order, so equal to
// the CPU bit for bit), gradients, and an out-of-range index reported when the results are read,
// with the CPU's message, without a wait at the call.
TEST(Cuda, IndexingAndSortMatchTheCpu) {
  REQUIRE_GPU();
  tx::cuda::synchronize(0);
  const auto cpu = tx::Device::cpu();
  using TI = Tensor<std::int64_t>;
  const auto x = Tensor<double>::randn({5, 4, 3}, 180);
  const auto xt = tx::permute(Tensor<double>::randn({4, 5, 3}, 181), {1, 0, 2});
  const auto idx = TI::from_col_major({6, 1, 3}, {0, 4, -1, 4, 2, 2, 1, 1, 1, 0, -5, 3, 2, 2, 4, 0, 0, 0});
  const auto src = Tensor<double>::randn({6, 1, 3}, 182);
  auto same = [&](const auto& dev, const auto& host, const std::string& what) {
    ASSERT_TRUE(dev.device() == gpu) << what;
    EXPECT_EQ(dev.to(cpu).to_vector(), host.to_vector()) << what;
  };
  same(tx::gather(xt.to(gpu), 0, idx.to(gpu)), tx::gather(xt, 0, idx), "gather");
  same(tx::scatter_add(xt.to(gpu), 0, idx.to(gpu), src.to(gpu)), tx::scatter_add(xt, 0, idx, src), "scatter_add");
  same(tx::put_along_axis(xt.to(gpu), idx.to(gpu), src.to(gpu), 0), tx::put_along_axis(xt, idx, src, 0), "put");
  same(tx::index_add(x.to(gpu), 2, TI::from_col_major({2}, {1, 1}).to(gpu), Tensor<double>::ones({5, 4, 2}).to(gpu)),
       tx::index_add(x, 2, TI::from_col_major({2}, {1, 1}), Tensor<double>::ones({5, 4, 2})), "index_add");
  for (int axis = 0; axis < 3; ++axis) {
    const auto [v, i] = tx::sort(xt.to(gpu), axis, axis == 1);
    const auto [hv, hi] = tx::sort(xt, axis, axis == 1);
    same(v, hv, "sort values");
    same(i, hi, "sort indices");
  }
  auto loss = [&](const Tensor<double>& a) {
    const auto i = idx.to(a.device());
    const auto g = tx::gather(a, 0, i);
    const auto p = tx::put_along_axis(tx::scatter_add(a, 0, i, tx::mul(g, g)), i, g, 0);
    return tx::add(tx::sum(tx::sin(tx::topk(p, 3, 0).first)), tx::sum(tx::index_select(p, 0, i.reshape({18}))));
  };
  expect_device_close(tx::grad(loss, x.to(gpu)), tx::grad(loss, x), 1e-12, "gradient");
  // An out-of-range index: skipped on the device, reported when the result is read.
  const auto bad = TI::from_col_major({2, 1, 1}, {1, 7});
  const std::string mc = tx::testing::error_of([&] { tx::gather(x, 0, bad); });
  ASSERT_FALSE(mc.empty());
  Tensor<double> g;
  EXPECT_NO_THROW(g = tx::gather(x.to(gpu), 0, bad.to(gpu)));
  EXPECT_EQ(tx::detail::deferred_checks(gpu), 1u);
  EXPECT_EQ(tx::testing::on_device(tx::testing::error_of([&] { (void)g.to(cpu); }), "cuda:0", "cpu"), mc);
  EXPECT_EQ(tx::detail::deferred_checks(gpu), 0u);
  // Mixed devices are refused before any kernel.
  EXPECT_FALSE(tx::testing::error_of([&] { tx::gather(x.to(gpu), 0, bad); }).empty());
  tx::cuda::synchronize(0);
}
