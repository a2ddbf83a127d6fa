// The elementwise ops of issue 33: trigonometric and hyperbolic functions and their inverses,
// log2, log10, erf, erfc, softplus, the rounding ops, atan2, hypot, logaddexp, remainder, fmod,
// clamp, and integer arithmetic. Values against std:: on the host for every dtype (edge values,
// complex branch cuts, halves, signs, integer overflow and division by zero), the gradient
// harness, clamp's gradient at and beyond its bounds, broadcasting, strided inputs, compiled ==
// eager, and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include <tenax/tenax.hpp>

#include "support/expect.hpp"
#include "support/gradcheck.hpp"
#include "support/messages.hpp"
#include "trace/trace_support.hpp"

namespace tx = tenax;
using tx::testing::expect_ad;
using tx::testing::expect_close;
using tx::testing::expect_error;

namespace {

using TD = tx::Tensor<double>;
using TF = tx::Tensor<float>;
using TZ = tx::Tensor<tx::c128>;
using TI = tx::Tensor<std::int32_t>;
using TL = tx::Tensor<std::int64_t>;

constexpr double inf = std::numeric_limits<double>::infinity();
const double nan = std::numeric_limits<double>::quiet_NaN();

// Equal values, bit for bit where neither is NaN (so 0.0 and -0.0 differ); NaN matches NaN.
template <class R>
bool same_real(R a, R b) {
  if (a != a || b != b) return a != a && b != b;
  return std::memcmp(&a, &b, sizeof(R)) == 0;
}
template <class T>
bool same(T a, T b) {
  if constexpr (tx::is_complex_v<T>)
    return same_real(a.real(), b.real()) && same_real(a.imag(), b.imag());
  else if constexpr (std::is_floating_point_v<T>)
    return same_real(a, b);
  else
    return a == b;
}

template <class T>
void expect_same(const std::vector<T>& got, const std::vector<T>& want, const std::vector<T>& in,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_TRUE(same(got[i], want[i])) << what << " at " << in[i] << ": " << got[i] << " vs " << want[i];
}

const std::vector<double> kReal = {0.0,   -0.0, 1.0,   -1.0,  0.5,     -0.5, 1.5,   2.5, -2.5, 0.3, 3.0,
                                   -7.25, 0.99, -0.99, 1e300, -1e-300, 20.0, -20.0, inf, -inf, nan};

// A unary op on real inputs against a host function, in double and float, contiguous and transposed.
template <class Op, class Ref>
void check_real_unary(const std::string& what, Op op, Ref ref) {
  std::vector<double> want;
  for (double v : kReal) want.push_back(ref(v));
  expect_same(op(TD::from_col_major({static_cast<std::int64_t>(kReal.size())}, kReal)).to_vector(), want, kReal,
              what + " f64");
  std::vector<float> inf32, want32;
  for (double v : kReal) {
    inf32.push_back(static_cast<float>(v));
    want32.push_back(ref(static_cast<float>(v)));
  }
  expect_same(op(TF::from_col_major({static_cast<std::int64_t>(inf32.size())}, inf32)).to_vector(), want32, inf32,
              what + " f32");
  // A transposed (non-contiguous) batch: the same values at the same logical positions.
  const TD m = TD::from_col_major({3, 7}, kReal);
  const TD t = m.mT();
  expect_same(op(t).to_vector(), op(tx::contiguous(t)).to_vector(), tx::contiguous(t).to_vector(),
              what + " transposed");
}

const std::vector<tx::c128> kComplex = {{0, 0},   {0, -0.0},  {0.5, 0.5}, {-0.5, 0.25}, {2, 0},     {2, -0.0},
                                        {-2, 0},  {-2, -0.0}, {0, 2},     {0, -2},      {-0.0, 2},  {1, 0},
                                        {-1, 0},  {0, 1},     {0, -1},    {3, -4},      {inf, 0},   {-inf, 1},
                                        {0, inf}, {nan, 1},   {1, nan},   {1e10, 1e10}, {-1e-10, 1}};

template <class Op, class Ref>
void check_complex_unary(const std::string& what, Op op, Ref ref) {
  std::vector<tx::c128> want;
  for (auto v : kComplex) want.push_back(ref(v));
  expect_same(op(TZ::from_col_major({static_cast<std::int64_t>(kComplex.size())}, kComplex)).to_vector(), want,
              kComplex, what + " c128");
  std::vector<tx::c64> in64, want64;
  for (auto v : kComplex) {
    in64.emplace_back(static_cast<float>(v.real()), static_cast<float>(v.imag()));
    want64.push_back(ref(in64.back()));
  }
  expect_same(op(tx::Tensor<tx::c64>::from_col_major({static_cast<std::int64_t>(in64.size())}, in64)).to_vector(),
              want64, in64, what + " c64");
}

#define TENAX_REAL_CASE(F) \
  check_real_unary(        \
      #F, [](const auto& x) { return tx::F(x); }, [](auto v) { return std::F(v); })
#define TENAX_COMPLEX_CASE(F) \
  check_complex_unary(        \
      #F, [](const auto& x) { return tx::F(x); }, [](auto v) { return std::F(v); })

TEST(ElementwiseUnary, RealValuesMatchTheStandardLibrary) {
  TENAX_REAL_CASE(tan);
  TENAX_REAL_CASE(asin);
  TENAX_REAL_CASE(acos);
  TENAX_REAL_CASE(atan);
  TENAX_REAL_CASE(sinh);
  TENAX_REAL_CASE(cosh);
  TENAX_REAL_CASE(asinh);
  TENAX_REAL_CASE(acosh);
  TENAX_REAL_CASE(atanh);
  TENAX_REAL_CASE(log2);
  TENAX_REAL_CASE(log10);
  TENAX_REAL_CASE(erf);
  TENAX_REAL_CASE(erfc);
  TENAX_REAL_CASE(floor);
  TENAX_REAL_CASE(ceil);
  TENAX_REAL_CASE(trunc);
  check_real_unary(
      "round", [](const auto& x) { return tx::round(x); }, [](auto v) { return std::nearbyint(v); });
}

TEST(ElementwiseUnary, ComplexValuesMatchTheStandardLibrary) {
  // Branch cuts included: the sign of a zero imaginary part picks the side (asin(2 +- 0i) etc.).
  TENAX_COMPLEX_CASE(tan);
  TENAX_COMPLEX_CASE(asin);
  TENAX_COMPLEX_CASE(acos);
  TENAX_COMPLEX_CASE(atan);
  TENAX_COMPLEX_CASE(sinh);
  TENAX_COMPLEX_CASE(cosh);
  TENAX_COMPLEX_CASE(asinh);
  TENAX_COMPLEX_CASE(acosh);
  TENAX_COMPLEX_CASE(atanh);
  TENAX_COMPLEX_CASE(log10);
  const auto a = tx::asin(TZ::from_col_major({2}, {tx::c128(2, 0.0), tx::c128(2, -0.0)})).to_vector();
  EXPECT_GT(a[0].imag(), 0);
  EXPECT_LT(a[1].imag(), 0);
}
#undef TENAX_REAL_CASE
#undef TENAX_COMPLEX_CASE

TEST(ElementwiseUnary, RoundHalvesToEven) {
  const TD x =
      TD::from_col_major({9}, {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999999999999994, 4503599627370497.0, -3.5});
  const auto r = tx::round(x).to_vector();
  const std::vector<double> want = {0, 2, 2, -0.0, -2, -2, 0, 4503599627370497.0, -4};
  for (std::size_t i = 0; i < r.size(); ++i) EXPECT_TRUE(same(r[i], want[i])) << i << ": " << r[i];
  EXPECT_TRUE(std::signbit(r[3]));
  EXPECT_EQ(tx::round(TF::from_col_major({2}, {2.5f, 3.5f})).to_vector(), (std::vector<float>{2.f, 4.f}));
}

TEST(ElementwiseUnary, SoftplusIsStable) {
  const auto host = [](double v) { return std::max(v, 0.0) + std::log1p(std::exp(-std::abs(v))); };
  check_real_unary(
      "softplus", [](const auto& x) { return tx::softplus(x); },
      [](auto v) {
        return static_cast<decltype(v)>((v > 0 ? v : decltype(v)(0)) + std::log1p(std::exp(-std::abs(v))));
      });
  const auto s = tx::softplus(TD::from_col_major({5}, {1000, -1000, 0, 2, -30})).to_vector();
  EXPECT_EQ(s[0], 1000);
  EXPECT_EQ(s[1], 0);  // e^-1000 underflows
  EXPECT_NEAR(s[2], std::log(2.0), 1e-16);
  EXPECT_NEAR(s[3], std::log1p(std::exp(2.0)), 1e-15);
  EXPECT_NEAR(s[4], host(-30), 1e-28);
  EXPECT_NEAR(s[4], std::exp(-30.0) - std::exp(-60.0) / 2, 1e-29);  // log1p(e^-30), no cancellation
}

TEST(ElementwiseUnary, Gradients) {
  const TD x = TD::rand({3, 4}, 1, -0.8, 0.8);
  const TD big = TD::rand({3, 4}, 2, 1.2, 3.0);
  const TD pos = TD::rand({3, 4}, 3, 0.3, 3.0);
  const TZ z = tx::complex(TD::rand({2, 3}, 4, -0.7, 0.7), TD::rand({2, 3}, 5, -0.7, 0.7));
  const TZ zbig = tx::complex(TD::rand({2, 3}, 6, 1.2, 2.0), TD::rand({2, 3}, 7, 0.2, 0.9));
#define TENAX_AD(F, X) expect_ad([](const auto& v) { return tx::F(v); }, X)
  TENAX_AD(tan, x);
  TENAX_AD(asin, x);
  TENAX_AD(acos, x);
  TENAX_AD(atan, x);
  TENAX_AD(sinh, x);
  TENAX_AD(cosh, x);
  TENAX_AD(asinh, x);
  TENAX_AD(acosh, big);
  TENAX_AD(atanh, x);
  TENAX_AD(log2, pos);
  TENAX_AD(log10, pos);
  TENAX_AD(erf, x);
  TENAX_AD(erfc, x);
  TENAX_AD(softplus, tx::mul(x, 10.0));
  TENAX_AD(tan, z);
  TENAX_AD(asin, z);
  TENAX_AD(acos, z);
  TENAX_AD(atan, z);
  TENAX_AD(sinh, z);
  TENAX_AD(cosh, z);
  TENAX_AD(asinh, z);
  TENAX_AD(acosh, zbig);
  TENAX_AD(atanh, z);
  TENAX_AD(log10, zbig);
  // Transposed inputs go through the rules as views.
  TENAX_AD(asinh, TD::rand({4, 3}, 8, -2, 2).mT());
#undef TENAX_AD
}

TEST(ElementwiseUnary, RoundingHasZeroDerivative) {
  const TD x = tx::add(TD::rand({3, 4}, 9, -3, 3), 0.0);
  for (const auto& f : std::vector<std::function<TD(const TD&)>>{
           [](const TD& v) { return tx::floor(v); }, [](const TD& v) { return tx::ceil(v); },
           [](const TD& v) { return tx::round(v); }, [](const TD& v) { return tx::trunc(v); }}) {
    // Composed with a differentiable term, so the harness's relative checks have a nonzero scale:
    // the derivative is the identity's, to second order.
    expect_ad(
        tx::testing::GradOptions{.f32 = false}, [&](const TD& v) { return tx::add(f(v), tx::square(v)); }, x);
    const TD g = tx::grad([&](const TD& v) { return tx::sum(f(v)); }, x);
    EXPECT_EQ(g.shape(), x.shape());
    EXPECT_EQ(g.to_vector(), std::vector<double>(12, 0.0));
    // An infinite tangent still gives a zero tangent (zeros, not 0 * dx).
    const auto [y, dy] = tx::jvp([&](const TD& v) { return f(v); }, x, TD::full({3, 4}, inf));
    EXPECT_EQ(dy.to_vector(), std::vector<double>(12, 0.0));
    EXPECT_EQ(y.to_vector(), f(x).to_vector());
  }
}

// Python's a % b, from the definition (exact for these small values).
double py_mod(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  if (r == 0) r = std::copysign(0.0, b);
  return r;
}

TEST(ElementwiseBinary, ValuesOverAllPairsOfEdgeValues) {
  const std::vector<double> e = {0.0, -0.0, 1.0, -1.0, 2.5, -3.0, 7.0, 1e300, inf, -inf, nan};
  const auto n = static_cast<std::int64_t>(e.size());
  // a varies along dimension 0 and b along dimension 1: the broadcast of {n, 1} and {1, n}.
  const TD a = TD::from_col_major({n, 1}, e), b = TD::from_col_major({1, n}, e);
  const auto check = [&](const std::string& what, const TD& got, auto ref) {
    ASSERT_EQ(got.shape(), (tx::Shape{n, n})) << what;
    const auto v = got.to_vector();
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i) {
        const double want = ref(e[i], e[j]), have = v[static_cast<std::size_t>(i + j * n)];
        EXPECT_TRUE(same(have, want)) << what << "(" << e[i] << ", " << e[j] << "): " << have << " vs " << want;
      }
  };
  check("atan2", tx::atan2(a, b), [](double p, double q) { return std::atan2(p, q); });
  check("hypot", tx::hypot(a, b), [](double p, double q) { return std::hypot(p, q); });
  check("fmod", tx::fmod(a, b), [](double p, double q) { return std::fmod(p, q); });
  check("remainder", tx::remainder(a, b), py_mod);
  check("logaddexp", tx::logaddexp(a, b), [](double p, double q) {
    if (p == q) return p + std::log(2.0);
    const double m = std::max(p, q);
    if (p != p || q != q) return nan;
    return m + std::log1p(std::exp(-std::abs(p - q)));
  });
  // The same in float, against the float functions.
  const TF af = tx::cast<float>(a), bf = tx::cast<float>(b);
  const auto vf = tx::atan2(af, bf).to_vector();
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i)
      EXPECT_TRUE(same(vf[static_cast<std::size_t>(i + j * n)],
                       std::atan2(static_cast<float>(e[i]), static_cast<float>(e[j]))));
}

TEST(ElementwiseBinary, RemainderAndFmodSigns) {
  const TD a = TD::from_col_major({8}, {5, -5, 5, -5, 4, -4, -5, 5});
  const TD b = TD::from_col_major({8}, {3, 3, -3, -3, -2, 2, inf, inf});
  const auto r = tx::remainder(a, b).to_vector();
  const std::vector<double> want_r = {2, 1, -1, -2, -0.0, 0, inf, 5};
  for (std::size_t i = 0; i < r.size(); ++i) EXPECT_TRUE(same(r[i], want_r[i])) << i << ": " << r[i];
  const auto f = tx::fmod(a, b).to_vector();
  const std::vector<double> want_f = {2, -2, 2, -2, 0, -0.0, -5, 5};
  for (std::size_t i = 0; i < f.size(); ++i) EXPECT_TRUE(same(f[i], want_f[i])) << i << ": " << f[i];
  EXPECT_TRUE(std::isnan(tx::remainder(TD::ones({1}), TD::zeros({1})).item()));
  // Scalar forms equal the tensor forms.
  const TD x = TD::rand({3, 4}, 10, -10, 10);
  EXPECT_EQ(tx::remainder(x, -3.0).to_vector(), tx::remainder(x, TD::full({1}, -3.0)).to_vector());
  EXPECT_EQ(tx::fmod(x, 2.5).to_vector(), tx::fmod(x, TD::full({1}, 2.5)).to_vector());
  EXPECT_EQ(tx::remainder(TF::from_col_major({2}, {-1.f, 7.f}), 3.0f).to_vector(), (std::vector<float>{2.f, 1.f}));
}

TEST(ElementwiseBinary, LogAddExpIsStable) {
  const TD a = TD::from_col_major({5}, {1000, -1000, -inf, inf, -inf});
  const TD b = TD::from_col_major({5}, {1000, -1001, -inf, -inf, 3});
  const auto v = tx::logaddexp(a, b).to_vector();
  EXPECT_NEAR(v[0], 1000 + std::log(2.0), 1e-12);
  EXPECT_NEAR(v[1], -1000 + std::log1p(std::exp(-1.0)), 1e-12);
  EXPECT_EQ(v[2], -inf);
  EXPECT_EQ(v[3], inf);
  EXPECT_EQ(v[4], 3);
}

TEST(ElementwiseBinary, Gradients) {
  const TD a = TD::rand({3, 4}, 11, -2, 2), b = TD::rand({3, 4}, 12, 0.5, 2);
  const TD col = TD::rand({3, 1}, 13, 0.5, 2), row = TD::rand({1, 4}, 14, -2, 2);
  expect_ad([](const auto& p, const auto& q) { return tx::atan2(p, q); }, a, b);
  expect_ad([](const auto& p, const auto& q) { return tx::hypot(p, q); }, a, b);
  expect_ad([](const auto& p, const auto& q) { return tx::logaddexp(p, q); }, tx::mul(a, 5.0), tx::mul(b, 3.0));
  // remainder and fmod: a / b away from integers (random values), a negative divisor included.
  expect_ad([](const auto& p, const auto& q) { return tx::remainder(p, q); }, tx::mul(a, 3.0), tx::neg(b));
  expect_ad([](const auto& p, const auto& q) { return tx::fmod(p, q); }, tx::mul(a, 3.0), b);
  expect_ad([](const auto& p) { return tx::remainder(p, 0.7); }, a);
  expect_ad([](const auto& p) { return tx::fmod(p, -0.7); }, a);
  // Broadcasting: cotangents are summed over the broadcast dimensions.
  expect_ad([](const auto& p, const auto& q) { return tx::atan2(p, q); }, row, col);
  expect_ad([](const auto& p, const auto& q) { return tx::hypot(p, q); }, a, col);
  expect_ad([](const auto& p, const auto& q) { return tx::logaddexp(p, q); }, row, a);
  expect_ad([](const auto& p, const auto& q) { return tx::remainder(p, q); }, tx::mul(a, 3.0), col);
  expect_ad([](const auto& p, const auto& q) { return tx::fmod(p, q); }, tx::mul(row, 3.0), b.mT().mT());
  // The slopes at a = 7.5, b = 2 (a / b = 3.75) and at -7.5 (floor -4, trunc -3).
  const TD p = TD::from_col_major({2}, {7.5, -7.5}), q = TD::full({2}, 2.0);
  const auto [gr_a, gr_b] = tx::grad([](const TD& s, const TD& t) { return tx::sum(tx::remainder(s, t)); }, p, q);
  EXPECT_EQ(gr_a.to_vector(), (std::vector<double>{1, 1}));
  EXPECT_EQ(gr_b.to_vector(), (std::vector<double>{-3, 4}));
  const auto [gf_a, gf_b] = tx::grad([](const TD& s, const TD& t) { return tx::sum(tx::fmod(s, t)); }, p, q);
  EXPECT_EQ(gf_a.to_vector(), (std::vector<double>{1, 1}));
  EXPECT_EQ(gf_b.to_vector(), (std::vector<double>{-3, 3}));
}

TEST(Clamp, ValuesNaNAndReversedBounds) {
  const TD x = TD::from_col_major({7}, {-2, -1, 0, 1, 2, nan, -inf});
  EXPECT_TRUE(std::isnan(tx::clamp(x, -1.0, 1.0).to_vector()[5]));
  const auto c = tx::clamp(x, -1.0, 1.0).to_vector();
  EXPECT_EQ(std::vector<double>(c.begin(), c.begin() + 5), (std::vector<double>{-1, -1, 0, 1, 1}));
  EXPECT_EQ(c[6], -1);
  // lo > hi: hi everywhere (as PyTorch).
  const auto r = tx::clamp(x, 2.0, -2.0).to_vector();
  EXPECT_EQ(r[0], -2);
  EXPECT_EQ(r[4], -2);
  EXPECT_EQ(tx::clamp_min(x, 0.0).to_vector()[0], 0);
  EXPECT_EQ(tx::clamp_min(x, 0.0).to_vector()[4], 2);
  EXPECT_EQ(tx::clamp_max(x, 0.0).to_vector()[4], 0);
  EXPECT_EQ(tx::clamp_max(x, 0.0).to_vector()[0], -2);
  // Tensor bounds broadcast, and equal the scalar forms; a NaN bound propagates.
  const TD y = TD::rand({3, 4}, 15, -3, 3);
  EXPECT_EQ(tx::clamp(y, TD::full({1}, -1.0), TD::full({1, 1}, 0.5)).to_vector(), tx::clamp(y, -1.0, 0.5).to_vector());
  EXPECT_EQ(tx::clamp_min(y, TD::full({3, 1}, 0.2)).to_vector(), tx::clamp_min(y, 0.2).to_vector());
  EXPECT_EQ(tx::clamp_max(y, TD::full({3, 1}, 0.2)).to_vector(), tx::clamp_max(y, 0.2).to_vector());
  EXPECT_TRUE(std::isnan(tx::clamp(TD::ones({1}), TD::full({1}, nan), TD::ones({1})).item()));
  EXPECT_TRUE(std::isnan(tx::clamp(TD::ones({1}), TD::zeros({1}), TD::full({1}, nan)).item()));
  // Per-element bounds.
  const TD lo = TD::from_col_major({3}, {0, 5, -1}), hi = TD::from_col_major({3}, {1, 6, 0});
  EXPECT_EQ(tx::clamp(TD::from_col_major({3}, {2, 2, 2}), lo, hi).to_vector(), (std::vector<double>{1, 5, 0}));
}

TEST(Clamp, GradientAtAndBeyondTheBounds) {
  // Scalar bounds: x gets the gradient where lo <= x <= hi, the bounds included (ties go to x,
  // unlike maximum/minimum, which split them).
  const TD x = TD::from_col_major({6}, {-2, -1, 0, 1, 2, nan});
  const auto g = tx::grad([](const TD& v) { return tx::sum(tx::clamp(v, -1.0, 1.0)); }, x).to_vector();
  EXPECT_EQ(g, (std::vector<double>{0, 1, 1, 1, 0, 0}));
  EXPECT_EQ(tx::grad([](const TD& v) { return tx::sum(tx::clamp_min(v, -1.0)); }, x).to_vector(),
            (std::vector<double>{0, 1, 1, 1, 1, 0}));
  EXPECT_EQ(tx::grad([](const TD& v) { return tx::sum(tx::clamp_max(v, 1.0)); }, x).to_vector(),
            (std::vector<double>{1, 1, 1, 1, 0, 0}));
  EXPECT_EQ(tx::grad([](const TD& v) { return tx::sum(tx::maximum(v, TD::full({1}, -1.0))); }, x).to_vector()[1], 0.5)
      << "maximum splits ties (clamp does not)";
  // Tensor bounds: each bound where it was taken; at a tie x gets it; lo > hi: hi.
  const TD xs = TD::from_col_major({6}, {-2, -1, 0, 1, 2, 0});
  const TD lo = TD::from_col_major({6}, {-1, -1, -1, -1, -1, 1});
  const TD hi = TD::from_col_major({6}, {1, 1, 1, 1, 1, -1});
  const auto [gx, glo, ghi] =
      tx::grad([](const TD& a, const TD& b, const TD& c) { return tx::sum(tx::clamp(a, b, c)); }, xs, lo, hi);
  EXPECT_EQ(gx.to_vector(), (std::vector<double>{0, 1, 1, 1, 0, 0}));
  EXPECT_EQ(glo.to_vector(), (std::vector<double>{1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(ghi.to_vector(), (std::vector<double>{0, 0, 0, 0, 1, 1}));
  // The tangent: the selected input's tangent, 0 (not NaN) for an infinite unselected one.
  const auto [y, dy] = tx::jvp([](const TD& v) { return tx::clamp(v, -1.0, 1.0); }, x, TD::full({6}, inf));
  EXPECT_EQ(dy.to_vector()[0], 0);
  EXPECT_EQ(dy.to_vector()[1], inf);
  // The harness away from ties, with broadcast bounds.
  const TD a = TD::rand({3, 4}, 16, -2, 2);
  expect_ad([](const auto& v) { return tx::clamp(v, -0.9, 0.8); }, a);
  expect_ad([](const auto& v) { return tx::clamp_min(v, 0.1); }, a);
  expect_ad([](const auto& v) { return tx::clamp_max(v, 0.1); }, a);
  expect_ad([](const auto& v, const auto& l, const auto& h) { return tx::clamp(v, l, h); }, a,
            TD::rand({3, 1}, 17, -1, 0), TD::rand({1, 4}, 18, 0, 1));
  expect_ad([](const auto& v, const auto& l) { return tx::clamp_min(v, l); }, a, TD::rand({3, 1}, 19, -1, 1));
  expect_ad([](const auto& v, const auto& h) { return tx::clamp_max(v, h); }, a, TD::rand({1, 4}, 20, -1, 1));
}

template <class I>
void check_integer_ops() {
  using T = tx::Tensor<I>;
  constexpr I mn = std::numeric_limits<I>::min(), mx = std::numeric_limits<I>::max();
  const std::vector<I> e = {0, 1, -1, 7, -7, 3, -3, mn, mx};
  const auto n = static_cast<std::int64_t>(e.size());
  const T a = T::from_col_major({n, 1}, e), b = T::from_col_major({1, n}, e);
  const auto wrap = [](long double v) {
    // Reduce modulo 2^bits into the type's range (two's complement).
    const long double m = std::ldexp(1.0L, 8 * static_cast<int>(sizeof(I)));
    long double r = std::fmod(v, m);
    if (r < 0) r += m;
    if (r >= m / 2) r -= m;
    return static_cast<I>(r);
  };
  const auto check = [&](const std::string& what, const T& got, auto ref) {
    ASSERT_EQ(got.shape(), (tx::Shape{n, n})) << what;
    const auto v = got.to_vector();
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i)
        EXPECT_EQ(v[static_cast<std::size_t>(i + j * n)], ref(e[i], e[j]))
            << what << "(" << e[i] << ", " << e[j] << ")";
  };
  using L = long double;
  check("add", tx::add(a, b), [&](I p, I q) { return wrap(L(p) + L(q)); });
  check("sub", tx::sub(a, b), [&](I p, I q) { return wrap(L(p) - L(q)); });
  check("mul", tx::mul(a, b), [&](I p, I q) {
    // The low bits of the exact product (|p q| < 2^126 is exact in __int128).
    return static_cast<I>(static_cast<std::make_unsigned_t<I>>(static_cast<__int128>(p) * q));
  });
  check("maximum", tx::maximum(a, b), [](I p, I q) { return std::max(p, q); });
  check("minimum", tx::minimum(a, b), [](I p, I q) { return std::min(p, q); });
  // Python's // and %, and C's %: a zero divisor gives 0; min // -1 wraps to min.
  check("floor_divide", tx::floor_divide(a, b), [&](I p, I q) -> I {
    if (q == 0) return 0;
    const __int128 d = static_cast<__int128>(p) / q, m = static_cast<__int128>(p) % q;
    return wrap(static_cast<L>((m != 0 && ((m < 0) != (q < 0))) ? d - 1 : d));
  });
  check("remainder", tx::remainder(a, b), [](I p, I q) -> I {
    if (q == 0) return 0;
    const __int128 m = static_cast<__int128>(p) % q;
    return static_cast<I>((m != 0 && ((m < 0) != (q < 0))) ? m + q : m);
  });
  check("fmod", tx::fmod(a, b),
        [](I p, I q) -> I { return q == 0 ? I(0) : static_cast<I>(static_cast<__int128>(p) % q); });
  EXPECT_EQ(tx::floor_divide(T::from_col_major({1}, {mn}), T::from_col_major({1}, {I(-1)})).item(), mn);
  EXPECT_EQ(tx::floor_divide(T::from_col_major({2}, {I(7), I(-7)}), T::from_col_major({1}, {I(2)})).to_vector(),
            (std::vector<I>{3, -4}));
  EXPECT_EQ(tx::remainder(T::from_col_major({2}, {I(-7), I(7)}), I(3)).to_vector(), (std::vector<I>{2, 1}));
  EXPECT_EQ(tx::fmod(T::from_col_major({2}, {I(-7), I(7)}), I(3)).to_vector(), (std::vector<I>{-1, 1}));
  EXPECT_EQ(tx::remainder(T::from_col_major({1}, {mn}), I(-1)).item(), 0);
  EXPECT_EQ(tx::fmod(T::from_col_major({1}, {I(5)}), I(0)).item(), 0);
  // Unary.
  const T u = T::from_col_major({n}, e);
  std::vector<I> ng, ab;
  for (I v : e) {
    ng.push_back(wrap(-L(v)));
    ab.push_back(v < 0 ? wrap(-L(v)) : v);
  }
  EXPECT_EQ(tx::neg(u).to_vector(), ng);
  EXPECT_EQ(tx::abs(u).to_vector(), ab);
  EXPECT_EQ(tx::abs(T::from_col_major({1}, {mn})).item(), mn);
  // Comparisons, strided inputs, empty inputs.
  EXPECT_EQ(tx::lt(a, b).to_vector()[1 + 2 * n], 0);
  EXPECT_EQ(tx::lt(a, b).to_vector()[2 + 1 * n], 1);
  const T m = T::from_col_major({3, 3}, e);
  EXPECT_EQ(tx::add(m.mT(), m).to_vector(), tx::add(tx::contiguous(m.mT()), m).to_vector());
  EXPECT_EQ(tx::floor_divide(T::zeros({0, 3}), T::ones({1, 3})).shape(), (tx::Shape{0, 3}));
}

TEST(Integer, Int32) { check_integer_ops<std::int32_t>(); }
TEST(Integer, Int64) { check_integer_ops<std::int64_t>(); }

TEST(Elementwise, StridedAndEmptyInputs) {
  const TD m = TD::rand({4, 3}, 21, -0.9, 0.9), n = TD::rand({3, 4}, 22, 0.5, 2);
  EXPECT_EQ(tx::atan2(m.mT(), n).to_vector(), tx::atan2(tx::contiguous(m.mT()), n).to_vector());
  EXPECT_EQ(tx::remainder(n, m.mT()).to_vector(), tx::remainder(n, tx::contiguous(m.mT())).to_vector());
  EXPECT_EQ(tx::clamp(m.mT(), -0.5, 0.5).to_vector(), tx::clamp(tx::contiguous(m.mT()), -0.5, 0.5).to_vector());
  EXPECT_EQ(tx::tan(m.mT()).to_vector(), tx::tan(tx::contiguous(m.mT())).to_vector());
  const TD e = TD::zeros({0, 3});
  EXPECT_EQ(tx::erf(e).shape(), e.shape());
  EXPECT_EQ(tx::logaddexp(e, TD::ones({1, 3})).shape(), e.shape());
  EXPECT_EQ(tx::clamp(e, TD::zeros({1}), TD::ones({1})).shape(), e.shape());
  // Batched: a {2, 3, 4} batch broadcast against {1, 3, 1}.
  const TD x3 = TD::rand({2, 3, 4}, 23, -2, 2), y3 = TD::rand({1, 3, 1}, 24, 0.5, 1);
  const auto v = tx::hypot(x3, y3).to_vector(), xv = x3.to_vector(), yv = y3.to_vector();
  for (std::size_t k = 0; k < v.size(); ++k) EXPECT_EQ(v[k], std::hypot(xv[k], yv[(k / 2) % 3]));
}

TEST(Elementwise, CompiledEqualsEager) {
  const TD x0 = TD::rand({3, 4}, 25, -0.9, 0.9), x1 = TD::rand({3, 4}, 26, -0.9, 0.9);
  auto loss = [](const TD& v) {
    const TD a = tx::add(tx::atanh(v), tx::asinh(tx::tan(v)));
    const TD b = tx::logaddexp(tx::softplus(v), tx::erf(v));
    const TD c = tx::add(tx::remainder(v, 0.3), tx::fmod(tx::atan2(v, tx::hypot(v, a)), 0.2));
    const TD d = tx::clamp(tx::add(tx::floor(tx::mul(v, 4.0)), tx::log10(tx::cosh(v))), -0.5, 0.5);
    return tx::sum(tx::add(tx::add(a, b), tx::add(c, d)));
  };
  tx::ttest::expect_compiled_matches_eager(
      "value and gradient", [&](const TD& v) { return tx::value_and_grad(loss, v); }, std::tuple{x0}, std::tuple{x1});
  tx::ttest::expect_compiled_matches_eager(
      "clamp with tensor bounds", [](const TD& v, const TD& l) { return tx::clamp(v, l, tx::add(l, 0.5)); },
      std::tuple{x0, x1}, std::tuple{x1, x0});
  // Integer ops are recorded too.
  tx::ttest::expect_compiled_matches_eager(
      "integer ops",
      [](const TD& v) {
        const TL i = tx::cast<std::int64_t>(tx::mul(v, 100.0));
        return tx::cast<double>(
            tx::add(tx::floor_divide(i, TL::full({1}, 7)), tx::remainder(tx::abs(i), std::int64_t(5))));
      },
      std::tuple{x0}, std::tuple{x1});
}

TEST(Elementwise, Errors) {
  const TD a = TD::ones({2, 3}), b = TD::ones({4});
  expect_error([&] { tx::atan2(a, b); }, "[atan2]", {"[2, 3]", "[4]"});
  expect_error([&] { tx::remainder(a, b); }, "[remainder]", {"cannot be broadcast"});
  expect_error([&] { tx::clamp(a, b, a); }, "[clamp]", {"cannot be broadcast"});
  expect_error([&] { tx::clamp_min(a, TD()); }, "[clamp_min]");
  expect_error([&] { tx::add(TI::ones({2}), TI::ones({3})); }, "[add]", {"i32"});
  expect_error([&] { tx::floor_divide(TL::ones({2}), TL()); }, "[floor_divide]");
  expect_error([&] { tx::tan(TD()); }, "[tan]");
}

}  // namespace
