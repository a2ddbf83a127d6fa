// Elementwise unary ops: values against the scalar functions, then the full AD check (JVP vs
// finite differences, VJP vs JVP, second order, float32 vs float64) on real and complex inputs,
// views, scalars and empty tensors.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "support/gradcheck.hpp"

namespace tx = tenax;
using tx::Tensor;
using tx::testing::expect_ad;
using tx::testing::expect_layout_invariant;
using tx::testing::lit;
using tx::testing::noncontiguous;
using tx::testing::rand_away;
using C = std::complex<double>;

namespace {

// y = f(x) elementwise equals ref(x_i).
template <class F, class R, class T>
void expect_values(F f, R ref, const Tensor<T>& x) {
  const auto y = f(x);
  ASSERT_EQ(y.shape(), x.shape());
  const auto xv = x.to_vector();
  const auto yv = y.to_vector();
  for (std::size_t i = 0; i < xv.size(); ++i) {
    const auto r = ref(xv[i]);
    EXPECT_LE(std::abs(yv[i] - r), 1e-15 * std::abs(r) + 1e-300) << "element " << i << " of f(" << xv[i] << ")";
  }
}

// The standard battery for an elementwise op on inputs drawn by make(shape, seed): values, AD on a
// matrix, a batched tensor, a rank-0 scalar and a view, and an empty tensor.
template <class T, class F, class R, class Make>
void unary_suite(F f, R ref, Make make) {
  const Tensor<T> x = make(tx::Shape{3, 4}, 1);
  expect_values(f, ref, x);
  TENAX_CHECK_GRADS(f, x);
  TENAX_CHECK_GRADS(f, make(tx::Shape{2, 3, 2}, 2));
  TENAX_CHECK_GRADS(f, make(tx::Shape{}, 3));
  const Tensor<T> xv = noncontiguous(x);
  EXPECT_FALSE(xv.is_contiguous());
  TENAX_CHECK_GRADS(f, xv);
  expect_layout_invariant(f, xv);
  const Tensor<T> e = Tensor<T>::randn({0, 3}, 4);
  EXPECT_EQ(f(e).shape(), e.shape());
  TENAX_CHECK_GRADS(f, e);
}

template <class T>
auto signed_input() {
  return [](const tx::Shape& s, std::uint64_t seed) { return rand_away<T>(s, seed); };
}
template <class T>
auto positive_input(double lo = 0.3, double hi = 2.0) {  // complex: both parts in [lo, hi), off the branch cut
  return [=](const tx::Shape& s, std::uint64_t seed) { return Tensor<T>::rand(s, seed, lo, hi); };
}

}  // namespace

TEST(Unary, Neg) {
  auto f = [](const auto& x) { return tx::neg(x); };
  unary_suite<double>(
      f, [](double v) { return -v; }, signed_input<double>());
  unary_suite<C>(
      f, [](C v) { return -v; }, signed_input<C>());
  auto g = [](const auto& x) { return -x; };
  TENAX_CHECK_GRADS(g, rand_away<C>({3, 2}, 5));
}

TEST(Unary, Abs) {
  auto f = [](const auto& x) { return tx::abs(x); };
  unary_suite<double>(
      f, [](double v) { return std::abs(v); }, signed_input<double>());
  unary_suite<C>(
      f, [](C v) { return std::abs(v); }, signed_input<C>());
}

TEST(Unary, Sign) {
  auto f = [](const auto& x) { return tx::sign(x); };
  unary_suite<double>(
      f, [](double v) { return v > 0 ? 1.0 : -1.0; }, signed_input<double>());
  unary_suite<C>(
      f, [](C v) { return v / std::abs(v); }, signed_input<C>());
  // 0 at 0; NaN stays NaN (real and complex alike), so it is not hidden downstream.
  const auto s = tx::sign(Tensor<double>::from_col_major({4}, {0.0, -0.0, NAN, -3.0})).to_vector();
  EXPECT_EQ(s[0], 0.0);
  EXPECT_EQ(s[1], 0.0);
  EXPECT_TRUE(std::isnan(s[2]));
  EXPECT_EQ(s[3], -1.0);
  EXPECT_TRUE(std::isnan(tx::sign(Tensor<float>::from_col_major({1}, {NAN})).item()));
}

TEST(Unary, Exp) {
  auto f = [](const auto& x) { return tx::exp(x); };
  unary_suite<double>(
      f, [](double v) { return std::exp(v); }, signed_input<double>());
  unary_suite<C>(
      f, [](C v) { return std::exp(v); }, signed_input<C>());
}

TEST(Unary, Log) {
  auto f = [](const auto& x) { return tx::log(x); };
  unary_suite<double>(
      f, [](double v) { return std::log(v); }, positive_input<double>());
  unary_suite<C>(
      f, [](C v) { return std::log(v); }, positive_input<C>());
}

TEST(Unary, Log1p) {
  auto f = [](const auto& x) { return tx::log1p(x); };
  unary_suite<double>(
      f, [](double v) { return std::log1p(v); }, positive_input<double>(-0.5, 2.0));
}

TEST(Unary, Expm1) {
  auto f = [](const auto& x) { return tx::expm1(x); };
  unary_suite<double>(
      f, [](double v) { return std::expm1(v); }, signed_input<double>());
}

TEST(Unary, Sqrt) {
  auto f = [](const auto& x) { return tx::sqrt(x); };
  unary_suite<double>(
      f, [](double v) { return std::sqrt(v); }, positive_input<double>());
  unary_suite<C>(
      f, [](C v) { return std::sqrt(v); }, positive_input<C>());
}

TEST(Unary, Rsqrt) {
  auto f = [](const auto& x) { return tx::rsqrt(x); };
  unary_suite<double>(
      f, [](double v) { return 1 / std::sqrt(v); }, positive_input<double>());
  unary_suite<C>(
      f, [](C v) { return 1.0 / std::sqrt(v); }, positive_input<C>());
}

TEST(Unary, Square) {
  auto f = [](const auto& x) { return tx::square(x); };
  unary_suite<double>(
      f, [](double v) { return v * v; }, signed_input<double>());
  unary_suite<C>(
      f, [](C v) { return v * v; }, signed_input<C>());
}

TEST(Unary, Sin) {
  auto f = [](const auto& x) { return tx::sin(x); };
  unary_suite<double>(
      f, [](double v) { return std::sin(v); }, signed_input<double>());
  unary_suite<C>(
      f, [](C v) { return std::sin(v); }, signed_input<C>());
}

TEST(Unary, Cos) {
  auto f = [](const auto& x) { return tx::cos(x); };
  unary_suite<double>(
      f, [](double v) { return std::cos(v); }, signed_input<double>());
  unary_suite<C>(
      f, [](C v) { return std::cos(v); }, signed_input<C>());
}

TEST(Unary, Tanh) {
  auto f = [](const auto& x) { return tx::tanh(x); };
  unary_suite<double>(
      f, [](double v) { return std::tanh(v); }, signed_input<double>());
  unary_suite<C>(
      f, [](C v) { return std::tanh(v); }, signed_input<C>());
}

TEST(Unary, Sigmoid) {
  auto f = [](const auto& x) { return tx::sigmoid(x); };
  unary_suite<double>(
      f, [](double v) { return 1 / (1 + std::exp(-v)); }, signed_input<double>());
  unary_suite<C>(
      f, [](C v) { return 1.0 / (1.0 + std::exp(-v)); }, signed_input<C>());
}

TEST(Unary, Relu) {
  auto f = [](const auto& x) { return tx::relu(x); };
  unary_suite<double>(
      f, [](double v) { return v > 0 ? v : 0.0; }, signed_input<double>());
}

TEST(Unary, Conj) {
  auto f = [](const auto& x) { return tx::conj(x); };
  unary_suite<C>(
      f, [](C v) { return std::conj(v); }, signed_input<C>());
  unary_suite<double>(
      f, [](double v) { return v; }, signed_input<double>());  // identity
}

TEST(Unary, Real) {
  auto f = [](const auto& x) { return tx::real(x); };
  unary_suite<C>(
      f, [](C v) { return std::real(v); }, signed_input<C>());
  unary_suite<double>(
      f, [](double v) { return v; }, signed_input<double>());
}

TEST(Unary, Imag) {
  auto f = [](const auto& x) { return tx::imag(x); };
  unary_suite<C>(
      f, [](C v) { return std::imag(v); }, signed_input<C>());
  unary_suite<double>(
      f, [](double) { return 0.0; }, signed_input<double>());
  // Of a real tensor: exact zeros also at inf and NaN (not x * 0), and a zero gradient that a
  // backward pass from it reaches (the result stays on the tape).
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const auto x = Tensor<double>::from_col_major({3}, {inf, -inf, nan}).requires_grad();
  EXPECT_EQ(tx::imag(x).to_vector(), (std::vector<double>{0, 0, 0}));
  tx::sum(tx::imag(x)).backward();
  EXPECT_EQ(x.grad().to_vector(), (std::vector<double>{0, 0, 0}));
  // The complex rule's real part is exactly zero also for a non-finite cotangent.
  const auto zc = Tensor<C>::randn({2}, 9);
  const auto [yz, pb] = tx::vjp([](const Tensor<C>& z) { return tx::imag(z); }, zc);
  const auto gz = pb(Tensor<double>::from_col_major({2}, {inf, 1.0})).to_vector();
  EXPECT_EQ(gz[0], C(0, inf));
  EXPECT_EQ(gz[1], C(0, 1.0));
}

TEST(Unary, PowScalar) {
  auto p25 = [](const auto& x) { return tx::pow(x, lit(x, 2.5)); };
  unary_suite<double>(
      p25, [](double v) { return std::pow(v, 2.5); }, positive_input<double>());
  auto p3 = [](const auto& x) { return tx::pow(x, lit(x, 3.0)); };  // integer power of negative bases
  unary_suite<double>(
      p3, [](double v) { return std::pow(v, 3.0); }, signed_input<double>());
  auto pneg = [](const auto& x) { return tx::pow(x, lit(x, -1.5)); };
  unary_suite<double>(
      pneg, [](double v) { return std::pow(v, -1.5); }, positive_input<double>());
  auto p0 = [](const auto& x) { return tx::pow(x, lit(x, 0.0)); };  // constant 1, derivative 0
  unary_suite<double>(
      p0, [](double) { return 1.0; }, signed_input<double>());
  auto pc = [](const auto& x) {
    using S = tx::testing::scalar_of<decltype(x)>;
    return tx::pow(x, S(0.7, -0.4));
  };
  unary_suite<C>(
      pc, [](C v) { return std::pow(v, C(0.7, -0.4)); }, positive_input<C>());
  auto p2 = [](const auto& x) { return tx::pow(x, lit(x, 2.0)); };
  unary_suite<C>(
      p2, [](C v) { return std::pow(v, C(2.0)); }, positive_input<C>());
}

TEST(Unary, PowTensor) {
  auto f = [](const auto& x, const auto& e) { return tx::pow(x, e); };
  const auto x = Tensor<double>::rand({3, 4}, 1, 0.3, 2.0);
  const auto e = Tensor<double>::randn({3, 4}, 2);
  TENAX_CHECK_GRADS(f, x, e);
  TENAX_CHECK_GRADS(f, x, Tensor<double>::randn({3}, 3));           // exponent broadcast along dim 1
  TENAX_CHECK_GRADS(f, Tensor<double>::rand({3}, 4, 0.3, 2.0), e);  // base broadcast
  TENAX_CHECK_GRADS(f, x, Tensor<double>::randn({}, 5));            // rank-0 exponent
  const auto xc = Tensor<C>::rand({3, 4}, 6, 0.3, 2.0);
  TENAX_CHECK_GRADS(f, xc, Tensor<C>::randn({3, 4}, 7));
  TENAX_CHECK_GRADS(f, xc, Tensor<C>::randn({1, 4}, 8));
  expect_layout_invariant(f, noncontiguous(x), noncontiguous(e));
  const auto y = f(x, e);
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 4; ++j) EXPECT_DOUBLE_EQ(y.at({i, j}), std::pow(x.at({i, j}), e.at({i, j})));
  TENAX_CHECK_GRADS(f, Tensor<double>::rand({0, 4}, 9, 0.3, 2.0), Tensor<double>::randn({0, 4}, 10));
  EXPECT_TENAX_ERROR(f(x, Tensor<double>::randn({4}, 1)), "pow");
}

TEST(Unary, PowTensorAtZeroBase) {
  // As PyTorch: d/de x^e = 0 at x = 0 (0^e = 0 for e > 0) and d/dx x^e = 0 where e = 0 (x^0 = 1),
  // instead of 0 * (-inf) and 0 * inf.
  const auto x = Tensor<double>::from_col_major({3}, {0.0, 0.0, 2.0});
  const auto e = Tensor<double>::from_col_major({3}, {2.0, 0.0, 1.5});
  auto loss = [](const auto& a, const auto& b) { return tx::sum(tx::pow(a, b)); };
  const auto [gx, ge] = tx::grad(loss, x, e);
  EXPECT_EQ(gx.to_vector(), (std::vector<double>{0, 0, 1.5 * std::sqrt(2.0)}));
  EXPECT_EQ(ge.to_vector()[0], 0.0);
  EXPECT_EQ(ge.to_vector()[1], 0.0);
  EXPECT_NEAR(ge.to_vector()[2], std::pow(2.0, 1.5) * std::log(2.0), 1e-15);
  const auto ones = Tensor<double>::ones({3});
  const auto [y, t] = tx::jvp([&](const auto& b) { return tx::pow(x, b); }, e, ones);
  EXPECT_EQ(t.to_vector()[0], 0.0);
  EXPECT_EQ(t.to_vector()[1], 0.0);
  // Second order stays finite: d2/dx2 x^2 = 2 at x = 0, d2/de2 0^e = 0.
  const auto hx = tx::hvp([&](const auto& a) { return loss(a, e); }, x, ones);
  EXPECT_EQ(hx.to_vector()[0], 2.0);
  EXPECT_EQ(hx.to_vector()[1], 0.0);
  const auto he = tx::hvp([&](const auto& b) { return loss(x, b); }, e, ones);
  EXPECT_EQ(he.to_vector()[0], 0.0);
  EXPECT_EQ(he.to_vector()[1], 0.0);
  // The mixed derivative d/dx (d/de x^e) = x^(e-1) (1 + e log x) is kept at e = 0, x != 0 (0.5 at
  // x = 2), and reads 0 at x = 0, by reverse over reverse.
  const auto x2 = Tensor<double>::from_col_major({2}, {0.0, 2.0});
  const auto e2 = Tensor<double>::from_col_major({2}, {2.0, 0.0});
  const auto mixed =
      tx::grad([&](const auto& a, const auto& b) { return tx::sum(std::get<1>(tx::grad(loss, a, b))); }, x2, e2);
  EXPECT_EQ(std::get<0>(mixed).to_vector(), (std::vector<double>{0.0, 0.5}));
}

// x^0 = 1 for every x, so its derivatives in x are 0 everywhere (inf, NaN and subnormal x too,
// where e x^(e-1) read literally is 0 * inf), for a scalar and a tensor exponent; complex 0^0 = 1.
TEST(Unary, PowAtExponentZero) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const auto x = Tensor<double>::from_col_major({6}, {1e-310, -1e-310, 1e-170, inf, nan, 2.0});
  const auto ones = Tensor<double>::ones({6}), zeros = Tensor<double>::zeros({6});
  const std::vector<double> z(6, 0.0);
  auto tensor0 = [&](const auto& v) { return tx::sum(tx::pow(v, zeros)); };
  auto scalar0 = [](const auto& v) { return tx::sum(tx::pow(v, 0.0)); };
  auto scalar1 = [](const auto& v) { return tx::sum(tx::pow(v, 1.0)); };
  auto tensor1 = [&](const auto& v) { return tx::sum(tx::pow(v, ones)); };
  EXPECT_EQ(tx::grad(tensor0, x).to_vector(), z);
  EXPECT_EQ(tx::grad(scalar0, x).to_vector(), z);
  EXPECT_EQ(tx::hvp(tensor0, x, ones).to_vector(), z);
  EXPECT_EQ(tx::hvp(scalar0, x, ones).to_vector(), z);
  const auto finite = tx::slice(x, 0, 0, 4);  // pow(x, 1) = x: second derivative 0 (not at NaN)
  EXPECT_EQ(tx::hvp(scalar1, finite, tx::slice(ones, 0, 0, 4)).to_vector(), std::vector<double>(4, 0.0));
  EXPECT_EQ(tx::hvp(tensor1, x, ones).to_vector()[0], 0.0);
  const auto tf = Tensor<float>::from_col_major({2}, {1e-30f, 1e-39f});
  EXPECT_EQ(tx::hvp([](const auto& v) { return tx::sum(tx::pow(v, Tensor<float>::zeros({2}))); }, tf,
                    Tensor<float>::ones({2}))
                .to_vector(),
            (std::vector<float>{0, 0}));
  // The mixed derivative d/de (d/dx x^e) = x^-1 at e = 0 is kept where finite (0.5 at x = 2).
  const auto mixed = tx::grad(
      [&](const auto& a, const auto& b) {
        return tx::sum(
            std::get<0>(tx::grad([](const auto& p, const auto& q) { return tx::sum(tx::pow(p, q)); }, a, b)));
      },
      x, zeros);
  EXPECT_EQ(std::get<1>(mixed).to_vector(), (std::vector<double>{0, 0, 1.0 / 1e-170, 0, 0, 0.5}));
  // Where x is regular the formulas stay exact at third order: d/de d2/dx2 x^e = -x^-2 at e = 0
  // (-0.25 at x = 2; masking e = 0 for every x gave 0).
  auto dxx = [](const auto& a, const auto& b) {
    return tx::sum(tx::grad(
        [&](const auto& p) { return tx::sum(tx::grad([&](const auto& q) { return tx::sum(tx::pow(q, b)); }, p)); }, a));
  };
  const auto d3 = tx::grad(dxx, Tensor<double>::full({1}, 2.0), Tensor<double>::zeros({1}));
  EXPECT_DOUBLE_EQ(std::get<1>(d3).to_vector()[0], -0.25);
  // Complex: 0^0 = 1 (std::pow gives NaN), so z^1 and z^2 have their derivatives at 0.
  const auto z0 = Tensor<C>::zeros({2});
  EXPECT_EQ(tx::pow(z0, C(0)).to_vector(), (std::vector<C>{1, 1}));
  EXPECT_EQ(tx::pow(z0, Tensor<C>::zeros({2})).to_vector(), (std::vector<C>{1, 1}));
  EXPECT_EQ(tx::pow(Tensor<C>::full({1}, C(inf, 0)), C(0)).to_vector(), (std::vector<C>{1}));
  EXPECT_EQ(tx::grad([](const auto& q) { return tx::real(tx::sum(tx::pow(q, C(1)))); }, z0).to_vector(),
            (std::vector<C>{1, 1}));
  EXPECT_EQ(
      tx::hvp([](const auto& q) { return tx::real(tx::sum(tx::pow(q, C(2)))); }, z0, Tensor<C>::ones({2})).to_vector(),
      (std::vector<C>{2, 2}));
}

// sign(z) = z / |z| keeps full precision where |z| is subnormal or overflows with finite parts,
// and so does the gradient of |z| (which is sign(z)).
TEST(Unary, ComplexSignAtExtremeModulus) {
  const double h = std::sqrt(0.5);
  const auto z = Tensor<C>::from_col_major(
      {4}, {C(1e-320, 1e-320), C(0, 1e-310), C(1.5e308, 1.5e308), C(std::ldexp(3.0, -1050), std::ldexp(-4.0, -1050))});
  const std::vector<C> want{C(h, h), C(0, 1), C(h, h), C(0.6, -0.8)};
  const auto s = tx::sign(z).to_vector();
  const auto g = tx::grad([](const auto& v) { return tx::sum(tx::abs(v)); }, z).to_vector();
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(std::abs(s[i] - want[i]), 0.0, 1e-15) << i << ": " << s[i];
    EXPECT_NEAR(std::abs(g[i] - want[i]), 0.0, 1e-15) << i << ": " << g[i];
  }
  using CF = std::complex<float>;
  const auto zf = Tensor<CF>::from_col_major({1}, {CF(1e-39f, 1e-39f)});
  EXPECT_NEAR(std::abs(tx::sign(zf).to_vector()[0] - CF(float(h), float(h))), 0.0, 1e-7);
  EXPECT_EQ(tx::sign(Tensor<C>::zeros({1})).to_vector()[0], C(0));
}

TEST(Unary, Complex) {
  auto f = [](const auto& re, const auto& im) { return tx::complex(re, im); };
  const auto a = Tensor<double>::randn({3, 4}, 1), b = Tensor<double>::randn({3, 4}, 2);
  TENAX_CHECK_GRADS(f, a, b);
  TENAX_CHECK_GRADS(f, a, Tensor<double>::randn({3}, 3));
  TENAX_CHECK_GRADS(f, Tensor<double>::randn({}, 4), b);
  TENAX_CHECK_GRADS(f, Tensor<double>::randn({0, 2}, 5), Tensor<double>::randn({0, 2}, 6));
  expect_layout_invariant(f, noncontiguous(a), b.mT().contiguous().mT());
  const auto z = f(a, b);
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 4; ++j) EXPECT_EQ(z.at({i, j}), C(a.at({i, j}), b.at({i, j})));
  EXPECT_EQ(tx::real(z).to_vector(), a.to_vector());
  EXPECT_EQ(tx::imag(z).to_vector(), b.to_vector());
  EXPECT_TENAX_ERROR(f(a, Tensor<double>::randn({4}, 1)), "complex");
}

TEST(Unary, Composite) {
  // A chain mixing real and complex types: |exp(i x) + z|^2 + x Re(log z), x real, z complex.
  auto f = [](const auto& x, const auto& z) {
    auto e = tx::exp(tx::complex(tx::mul(x, lit(x, 0.0)), x));
    return tx::add(tx::square(tx::abs(tx::add(e, z))), tx::mul(x, tx::real(tx::log(z))));
  };
  TENAX_CHECK_GRADS(f, Tensor<double>::randn({3, 2}, 1), Tensor<C>::rand({3, 2}, 2, 0.3, 1.5));
}

TEST(Unary, KinksUseDocumentedSubgradients) {
  // abs, sign and relu at exactly 0: derivative 0 (PyTorch and JAX agree).
  const auto x = Tensor<double>::from_col_major({3}, {-1.0, 0.0, 2.0});
  auto gabs = tx::grad([](const auto& t) { return tx::sum(tx::abs(t)); }, x);
  EXPECT_EQ(gabs.to_vector(), (std::vector<double>{-1, 0, 1}));
  auto grelu = tx::grad([](const auto& t) { return tx::sum(tx::relu(t)); }, x);
  EXPECT_EQ(grelu.to_vector(), (std::vector<double>{0, 0, 1}));
  // relu keeps a NaN (as PyTorch and JAX do), so anomaly mode and the caller still see it.
  const auto n = tx::relu(Tensor<double>::from_col_major({2}, {std::nan(""), -1.0})).to_vector();
  EXPECT_TRUE(std::isnan(n[0]));
  EXPECT_EQ(n[1], 0.0);
  auto gsign = tx::grad([](const auto& t) { return tx::sum(tx::sign(t)); }, x);
  EXPECT_EQ(gsign.to_vector(), (std::vector<double>{0, 0, 0}));
  const auto z = Tensor<C>::from_col_major({2}, {C(0, 0), C(3, 4)});
  EXPECT_EQ(tx::sign(z).to_vector(), (std::vector<C>{C(0, 0), C(0.6, 0.8)}));
  auto gz = tx::grad([](const auto& t) { return tx::sum(tx::abs(t)); }, z);
  EXPECT_EQ(gz.to_vector()[0], C(0, 0));
  EXPECT_NEAR(std::abs(gz.to_vector()[1] - C(0.6, 0.8)), 0, 1e-15);
}

TEST(Unary, ReluDerivativeIsOneMaskedMap) {
  // relu's rules apply its derivative as one map (relu_mask: v where x > 0, else 0), not a
  // comparison and a where; 0 at 0 and at NaN, as before.
  const auto x = Tensor<double>::from_col_major({4}, {-1.0, 0.0, std::nan(""), 2.0});
  const auto g = tx::grad([](const auto& t) { return tx::sum(tx::relu(t) * 3.0); }, x).to_vector();
  EXPECT_EQ(g, (std::vector<double>{0, 0, 0, 3}));
  auto step = [](const Tensor<double>& t) { return tx::grad([](const auto& u) { return tx::sum(tx::relu(u)); }, t); };
  const auto p = tx::compile(step, x);
  const std::string dump = p.str();
  EXPECT_NE(dump.find("relu_mask("), std::string::npos) << dump;
  EXPECT_EQ(dump.find("where("), std::string::npos) << dump;
  // Its own rules: the mask applied to a tangent that depends on the input (second order through
  // forward over reverse and reverse over reverse), for inputs that broadcast against each other.
  auto f = [](const auto& a, const auto& w) { return tx::square(tx::relu(a * w)) * w; };
  TENAX_CHECK_GRADS(f, rand_away<double>({3, 4}, 7), rand_away<double>({1, 4}, 8));
}
