// logsumexp, softmax, log_softmax, var and std: values against direct host computations, stability
// at large magnitudes and -inf, shapes (axes, keepdim), the gradient harness, compiled == eager,
// and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
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
using TZ = tx::Tensor<tx::c128>;

// Host logsumexp of the columns (axis 0) of an m x n column-major matrix, by the shifted formula.
std::vector<double> host_lse_cols(const std::vector<double>& v, std::int64_t m, std::int64_t n) {
  std::vector<double> r;
  for (std::int64_t j = 0; j < n; ++j) {
    double mx = -std::numeric_limits<double>::infinity(), s = 0;
    for (std::int64_t i = 0; i < m; ++i) mx = std::max(mx, v[static_cast<std::size_t>(i + j * m)]);
    for (std::int64_t i = 0; i < m; ++i) s += std::exp(v[static_cast<std::size_t>(i + j * m)] - mx);
    r.push_back(mx + std::log(s));
  }
  return r;
}

TEST(Softmax, LogSumExpValuesShapesAndStability) {
  const TD x = tx::mul(TD::randn({4, 3}, 1), 3.0);
  const TD l0 = tx::logsumexp(x, {0}, false);
  ASSERT_EQ(l0.shape(), (tx::Shape{3}));
  expect_close(l0, TD::from_col_major({3}, host_lse_cols(x.to_vector(), 4, 3)), 1e-15, "axis 0");
  EXPECT_EQ(tx::logsumexp(x, {0}, true).shape(), (tx::Shape{1, 3}));
  EXPECT_EQ(tx::logsumexp(x, {-1}, true).shape(), (tx::Shape{4, 1}));
  expect_close(tx::logsumexp(x, {1}, false), tx::log(tx::sum(tx::exp(x), {1})), 1e-14, "axis 1");
  EXPECT_NEAR(tx::logsumexp(x).item(), std::log(tx::sum(tx::exp(x)).item()), 1e-14);
  EXPECT_EQ(tx::logsumexp(x).shape(), (tx::Shape{}));
  // Large magnitudes: no overflow; a slice of -inf gives -inf; +inf propagates.
  const double inf = std::numeric_limits<double>::infinity();
  const TD big = TD::from_col_major({2, 3}, {1000, 1000, -1000, -1000, -inf, -inf});
  const std::vector<double> l = tx::logsumexp(big, {0}, false).to_vector();
  EXPECT_NEAR(l[0], 1000 + std::log(2.0), 1e-12);
  EXPECT_NEAR(l[1], -1000 + std::log(2.0), 1e-12);
  EXPECT_EQ(l[2], -inf);
  EXPECT_EQ(tx::logsumexp(TD::from_col_major({2}, {inf, 1.0})).item(), inf);
  // Empty: log(0) = -inf, as PyTorch.
  EXPECT_EQ(tx::logsumexp(TD::zeros({0, 2}), {0}, false).to_vector(), (std::vector<double>{-inf, -inf}));
}

TEST(Softmax, SoftmaxAndLogSoftmax) {
  const TD x = tx::mul(TD::randn({3, 5}, 2), 4.0);
  const TD s = tx::softmax(x, 1);
  expect_close(tx::sum(s, {1}), TD::ones({3}), 1e-15, "rows sum to 1");
  expect_close(s, tx::exp(tx::sub(x, tx::logsumexp(x, {1}, true))), 1e-15, "exp(x - lse)");
  expect_close(tx::log_softmax(x, 1), tx::log(s), 1e-14, "log_softmax = log(softmax)");
  expect_close(tx::softmax(x, 0), tx::transpose(tx::softmax(tx::transpose(x, 0, 1), 1), 0, 1), 1e-15, "axis 0");
  const TD big = TD::from_col_major({1, 2}, {800.0, 801.0});
  const std::vector<double> p = tx::softmax(big, 1).to_vector();
  EXPECT_NEAR(p[0], 1 / (1 + std::exp(1.0)), 1e-15);
  EXPECT_NEAR(tx::log_softmax(big, 1).to_vector()[0], -std::log1p(std::exp(1.0)), 1e-13);
}

TEST(Softmax, Gradients) {
  const TD x = TD::randn({3, 4}, 3);
  expect_ad([](const auto& v) { return tx::logsumexp(v, {1}, false); }, x);
  expect_ad([](const auto& v) { return tx::logsumexp(v); }, x);
  expect_ad([](const auto& v) { return tx::softmax(v, 0); }, x);
  expect_ad([](const auto& v) { return tx::log_softmax(v, -1); }, x);
  // The gradient of logsumexp is softmax, exactly where it overflows without the shift.
  const TD big = tx::add(TD::randn({4}, 4), 700.0);
  expect_close(tx::grad([](const TD& v) { return tx::logsumexp(v); }, big), tx::softmax(big, 0), 1e-15, "d lse");
  // The shift is not differentiated: ties in the maximum do not split the gradient.
  const TD tie = TD::from_col_major({3}, {2.0, 2.0, 1.0});
  expect_close(tx::grad([](const TD& v) { return tx::logsumexp(v); }, tie), tx::softmax(tie, 0), 1e-15, "ties");
}

TEST(Moments, VarAndStdValues) {
  const TD x = TD::from_col_major({2, 3}, {1, 2, 3, 5, 8, 13});
  // Columns (1, 2), (3, 5), (8, 13): squared deviations 0.5, 2, 12.5.
  expect_close(tx::var(x, {0}), TD::from_col_major({3}, {0.5, 2, 12.5}), 1e-15, "unbiased");
  expect_close(tx::var(x, {0}, 0.0), TD::from_col_major({3}, {0.25, 1, 6.25}), 1e-15, "population");
  EXPECT_EQ(tx::var(x, {0}, 0.0, true).shape(), (tx::Shape{1, 3}));
  // All elements: mean 32/6.
  double m = 32.0 / 6, ss = 0;
  for (double v : x.to_vector()) ss += (v - m) * (v - m);
  EXPECT_NEAR(tx::var(x).item(), ss / 5, 1e-13);
  EXPECT_NEAR(tx::std(x).item(), std::sqrt(ss / 5), 1e-13);
  EXPECT_NEAR(tx::var(x, {0, 1}, 2.0).item(), ss / 4, 1e-13);
  expect_close(tx::std(x, {1}, 1.0, true), tx::sqrt(tx::var(x, {1}, 1.0, true)), 1e-15, "std = sqrt(var)");
  // N - correction <= 0: a division by zero (inf, or NaN for 0/0), as PyTorch.
  EXPECT_TRUE(std::isnan(tx::var(TD::ones({1, 2}), {0}).to_vector()[0]));
  EXPECT_TRUE(std::isinf(tx::var(x, {0}, 2.0).to_vector()[0]));
  // Complex: the mean of |x - mean|^2, real.
  const TZ z = TZ::from_col_major({2}, {tx::c128(1, 1), tx::c128(3, -1)});
  const tx::Tensor<double> vz = tx::var(z, {0}, 0.0);
  EXPECT_NEAR(vz.item(), 2.0, 1e-15);  // deviations (-1 + i), (1 - i): |.|^2 = 2 each
}

TEST(Moments, Gradients) {
  const TD x = TD::randn({3, 4}, 5);
  expect_ad([](const auto& v) { return tx::var(v, {1}); }, x);
  expect_ad([](const auto& v) { return tx::std(v, {0}, 0.0, true); }, x);
  expect_ad([](const auto& v) { return tx::std(v); }, x);
  expect_ad([](const auto& v) { return tx::var(v, {0}); }, TZ::randn({3, 2}, 6));
}

TEST(Stats, CompiledEqualsEager) {
  const TD x0 = TD::randn({4, 3}, 7), x1 = TD::randn({4, 3}, 8);
  auto loss = [](const TD& v) {
    return tx::add(tx::sum(tx::mul(tx::log_softmax(v, 0), v)), tx::add(tx::sum(tx::std(v, {1})), tx::logsumexp(v)));
  };
  tx::ttest::expect_compiled_matches_eager(
      "value and gradient", [&](const TD& v) { return tx::value_and_grad(loss, v); }, std::tuple{x0}, std::tuple{x1});
}

TEST(Stats, Errors) {
  const TD x = TD::ones({2, 3});
  expect_error([&] { tx::logsumexp(x, {2}, false); }, "[logsumexp]", {"2"});
  expect_error([&] { tx::softmax(x, -3); }, "[softmax]");
  expect_error([&] { tx::log_softmax(x, 5); }, "[log_softmax]");
  expect_error([&] { tx::var(x, {0, 0}); }, "[var] axis 0 listed twice");
  expect_error([&] { tx::std(TD(), {0}); }, "[std]");
}

}  // namespace
