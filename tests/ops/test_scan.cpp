// argmax/argmin, cumsum and cumprod: values against direct host loops along every axis, strided and
// transposed inputs, ties and NaN, empty inputs, the gradient harness (cumprod at points with
// zeros), compiled == eager, and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
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
using TI = tx::Tensor<std::int64_t>;

// Calls f(base, step, len) for every line of a contiguous column-major tensor of shape s along
// axis a (base: the line's first element, step: the element stride along a).
template <class F>
void for_each_line(const tx::Shape& s, int a, F f) {
  std::int64_t step = 1, numel = 1;
  for (int d = 0; d < s.size(); ++d) {
    if (d < a) step *= s[d];
    numel *= s[d];
  }
  const std::int64_t len = s[a];
  for (std::int64_t e = 0; e < numel; ++e)
    if ((e / step) % len == 0) f(e, step, len);
}

template <class T>
std::vector<T> host_scan(const std::vector<T>& v, const tx::Shape& s, int a, bool product) {
  std::vector<T> r(v.size());
  for_each_line(s, a, [&](std::int64_t b, std::int64_t st, std::int64_t n) {
    T acc = product ? T(1) : T(0);
    for (std::int64_t i = 0; i < n; ++i) {
      const auto e = static_cast<std::size_t>(b + i * st);
      acc = product ? acc * v[e] : acc + v[e];
      r[e] = acc;
    }
  });
  return r;
}

template <class T>
std::vector<std::int64_t> host_arg(const std::vector<T>& v, const tx::Shape& s, int a, bool is_max) {
  std::vector<std::int64_t> r;
  for_each_line(s, a, [&](std::int64_t b, std::int64_t st, std::int64_t n) {
    std::int64_t at = 0;
    for (std::int64_t i = 1; i < n; ++i) {
      const T x = v[static_cast<std::size_t>(b + i * st)], best = v[static_cast<std::size_t>(b + at * st)];
      if (best != best) break;
      if (x != x || (is_max ? x > best : x < best)) at = i;
    }
    r.push_back(at);
  });
  return r;
}

TEST(ArgMax, ValuesAlongEveryAxisAndShapes) {
  const TD x = TD::randn({5, 4, 3}, 1);
  const tx::Shape s = x.shape();
  for (int a = 0; a < 3; ++a) {
    SCOPED_TRACE(a);
    EXPECT_EQ(tx::argmax(x, a).to_vector(), host_arg(x.to_vector(), s, a, true));
    EXPECT_EQ(tx::argmin(x, a).to_vector(), host_arg(x.to_vector(), s, a, false));
    tx::Shape kept = s, dropped;
    kept[a] = 1;
    for (int d = 0; d < 3; ++d)
      if (d != a) dropped.push_back(s[d]);
    EXPECT_EQ(tx::argmax(x, a).shape(), dropped);
    EXPECT_EQ(tx::argmin(x, a, true).shape(), kept);
    EXPECT_EQ(tx::argmax(x, a, true).to_vector(), tx::argmax(x, a).to_vector());
  }
  EXPECT_EQ(tx::argmax(x, -1).to_vector(), tx::argmax(x, 2).to_vector());
  // Transposed and strided views give the values of their contiguous copies.
  const TD t = tx::permute(x, {2, 0, 1});
  const TD st = tx::slice(x, 0, 1, 5, 2);
  for (int a = 0; a < 3; ++a) {
    EXPECT_EQ(tx::argmax(t, a).to_vector(), tx::argmax(t.contiguous(), a).to_vector());
    EXPECT_EQ(tx::argmin(st, a).to_vector(), tx::argmin(st.contiguous(), a).to_vector());
  }
  // Over everything: the index into the column-major flattening.
  const TD m = TD::from_col_major({2, 3}, {1, 2, 9, 4, -5, 6});
  EXPECT_EQ(tx::argmax(m).item(), 2);
  EXPECT_EQ(tx::argmin(m).item(), 4);
  EXPECT_EQ(tx::argmax(m).shape(), (tx::Shape{}));
  EXPECT_EQ(tx::argmax(m.mT()).item(), 1);  // m^T flattened: 1 9 -5 2 4 6
  EXPECT_EQ(tx::argmax(TD::full({}, 3.0)).item(), 0);
  EXPECT_EQ(tx::argmax(TD::full({}, 3.0), 0).item(), 0);
  // float32 and the integers.
  EXPECT_EQ(tx::argmax(tx::cast<float>(x), 1).to_vector(), tx::argmax(x, 1).to_vector());
  const auto xi = tx::Tensor<std::int32_t>::from_col_major({2, 3}, {3, 7, 7, 1, -2, 7});
  EXPECT_EQ(tx::argmax(xi, 1).to_vector(), (std::vector<std::int64_t>{1, 0}));  // rows 3 7 -2 and 7 1 7
  EXPECT_EQ(tx::argmin(tx::cast<std::int64_t>(xi), 0).to_vector(), (std::vector<std::int64_t>{0, 1, 0}));
  // Empty lines of nonzero length: an empty result; a kept empty dimension is fine.
  EXPECT_EQ(tx::argmax(TD::zeros({0, 3}), 1).shape(), (tx::Shape{0}));
  EXPECT_EQ(tx::argmin(TD::zeros({3, 0}), 0, true).shape(), (tx::Shape{1, 0}));
}

TEST(ArgMax, TiesTakeTheFirstAndNanWins) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const TD x = TD::from_col_major({6}, {1, 3, 3, -1, -1, 0});
  EXPECT_EQ(tx::argmax(x).item(), 1);
  EXPECT_EQ(tx::argmin(x).item(), 3);
  const TD n = TD::from_col_major({6}, {1, inf, nan, 5, nan, -inf});
  EXPECT_EQ(tx::argmax(n).item(), 2);
  EXPECT_EQ(tx::argmin(n).item(), 2);
  EXPECT_EQ(tx::argmax(TD::from_col_major({2}, {nan, inf})).item(), 0);
  EXPECT_EQ(tx::argmin(TD::from_col_major({3}, {inf, inf, -inf})).item(), 2);
  EXPECT_EQ(tx::argmax(TD::from_col_major({3}, {-inf, -inf, -inf})).item(), 0);
}

TEST(ArgMax, LargeInputsMatchTheHostAtAnyThreadCount) {
  const TD x = TD::randn({300, 200}, 2);
  for (int a = 0; a < 2; ++a) EXPECT_EQ(tx::argmax(x, a).to_vector(), host_arg(x.to_vector(), x.shape(), a, true));
  EXPECT_EQ(tx::argmax(x).item(), host_arg(x.to_vector(), tx::Shape{60000}, 0, true)[0]);
}

TEST(Cumulative, ValuesAlongEveryAxis) {
  const TD x = TD::rand({4, 3, 5}, 3, 0.5, 1.5);
  const TZ z = tx::complex(TD::rand({4, 3, 5}, 4, -1, 1), TD::rand({4, 3, 5}, 5, -1, 1));
  for (int a = 0; a < 3; ++a) {
    SCOPED_TRACE(a);
    // Summed in index order, as the host loop: equal bits.
    EXPECT_EQ(tx::cumsum(x, a).to_vector(), host_scan(x.to_vector(), x.shape(), a, false));
    EXPECT_EQ(tx::cumprod(x, a).to_vector(), host_scan(x.to_vector(), x.shape(), a, true));
    expect_close(tx::cumsum(z, a), TZ::from_col_major(z.shape(), host_scan(z.to_vector(), z.shape(), a, false)), 1e-15,
                 "complex cumsum");
    expect_close(tx::cumprod(z, a), TZ::from_col_major(z.shape(), host_scan(z.to_vector(), z.shape(), a, true)), 1e-15,
                 "complex cumprod");
    EXPECT_EQ(tx::cumsum(x, a).shape(), x.shape());
    // Views equal their contiguous copies.
    const TD t = tx::permute(x, {1, 2, 0});
    EXPECT_EQ(tx::cumsum(t, a).to_vector(), tx::cumsum(t.contiguous(), a).to_vector());
    EXPECT_EQ(tx::cumprod(tx::slice(x, 2, 0, 5, 2), a).to_vector(),
              tx::cumprod(tx::slice(x, 2, 0, 5, 2).contiguous(), a).to_vector());
  }
  EXPECT_EQ(tx::cumsum(x, -1).to_vector(), tx::cumsum(x, 2).to_vector());
  const TD v = TD::from_col_major({4}, {1, 2, 3, 4});
  EXPECT_EQ(tx::cumsum(v, 0).to_vector(), (std::vector<double>{1, 3, 6, 10}));
  EXPECT_EQ(tx::cumprod(v, 0).to_vector(), (std::vector<double>{1, 2, 6, 24}));
  EXPECT_EQ(tx::cumprod(tx::cast<float>(v), 0).to_vector(), (std::vector<float>{1, 2, 6, 24}));
  // Empty and 0-d inputs.
  EXPECT_EQ(tx::cumsum(TD::zeros({0, 3}), 0).shape(), (tx::Shape{0, 3}));
  EXPECT_EQ(tx::cumprod(TD::zeros({2, 0}), 0).shape(), (tx::Shape{2, 0}));
  EXPECT_EQ(tx::cumsum(TD::full({}, 2.5), 0).item(), 2.5);
  EXPECT_EQ(tx::cumprod(TD::full({}, 2.5), -1).shape(), (tx::Shape{}));
  // Large: the lines spread over threads give the host's sums.
  const TD big = TD::randn({50, 1000}, 6);
  EXPECT_EQ(tx::cumsum(big, 1).to_vector(), host_scan(big.to_vector(), big.shape(), 1, false));
  EXPECT_EQ(tx::cumsum(big, 0).to_vector(), host_scan(big.to_vector(), big.shape(), 0, false));
}

TEST(Cumulative, Gradients) {
  expect_ad([](const auto& x) { return tx::cumsum(x, 0); }, TD::randn({4, 3}, 10));
  expect_ad([](const auto& x) { return tx::cumsum(x, 1); }, tx::permute(TD::randn({3, 4, 2}, 11), {1, 0, 2}));
  expect_ad([](const auto& x) { return tx::cumsum(x, -1); }, tx::complex(TD::randn({3, 4}, 12), TD::randn({3, 4}, 13)));
  expect_ad([](const auto& x) { return tx::cumprod(x, 0); }, TD::rand({4, 3}, 14, 0.5, 1.5));
  expect_ad([](const auto& x) { return tx::cumprod(x, 1); },
            tx::permute(TD::rand({3, 4, 2}, 15, -1.5, 1.5), {1, 0, 2}));
  expect_ad([](const auto& x) { return tx::cumprod(x, 0); },
            tx::complex(TD::rand({4, 3}, 16, 0.5, 1.5), TD::rand({4, 3}, 17, -1, 1)));
  expect_ad([](const auto& x) { return tx::cumsum(x, 0); }, TD::zeros({0, 3}));
  expect_ad([](const auto& x) { return tx::cumprod(x, 1); }, TD::zeros({2, 0}));
}

// Lines holding zeros: the first one, one in the middle, the last; the gradient is exact
// (no 0/0) in first and second order.
TEST(Cumulative, CumprodGradientsWithOneZero) {
  const TD x = TD::from_col_major({4, 4}, {0, 1.5, -0.7, 1.2,  //
                                           0.8, 0, 1.3, -1.1,  //
                                           1.4, 0.9, 1.1, 0,   //
                                           0.6, -1.3, 0.9, 1.7});
  expect_ad([](const auto& v) { return tx::cumprod(v, 0); }, x);
  expect_ad([](const auto& v) { return tx::cumprod(v, 1); }, x.mT());
  const TZ z = tx::complex(x, tx::mul(x, 0.5));
  expect_ad([](const auto& v) { return tx::cumprod(v, 0); }, z);
  // The gradient of sum(cumprod) of [2, 0, 3] is exactly [1, 2 + 2*3, 0]... by hand:
  // y = [2, 0, 0]; dy/dx0 = [1, 0, 0], dy/dx1 = [0, 2, 6], dy/dx2 = [0, 0, 0].
  const TD g = tx::grad([](const TD& v) { return tx::sum(tx::cumprod(v, 0)); }, TD::from_col_major({3}, {2, 0, 3}));
  EXPECT_EQ(g.to_vector(), (std::vector<double>{1, 8, 0}));
}

// Several zeros in a line: the first derivative is exact (documented: not the second).
TEST(Cumulative, CumprodGradientsWithSeveralZeros) {
  tx::testing::GradOptions o;
  o.second_order = false;
  const TD x = TD::from_col_major({5, 2}, {1.3, 0, 0.7, 0, 1.1,  //
                                           0, 0, 0.5, 1.2, 0});
  expect_ad(
      o, [](const auto& v) { return tx::cumprod(v, 0); }, x);
  // sum(cumprod([2, 0, 3, 0, 5])): only the first zero has a gradient, 2 + 2*3 = 8.
  const TD g =
      tx::grad([](const TD& v) { return tx::sum(tx::cumprod(v, 0)); }, TD::from_col_major({5}, {2, 0, 3, 0, 5}));
  EXPECT_EQ(g.to_vector(), (std::vector<double>{1, 8, 0, 0, 0}));
}

TEST(Cumulative, CompiledEqualsEager) {
  const TD x0 = TD::randn({4, 3}, 20), x1 = TD::randn({4, 3}, 21);
  auto loss = [](const TD& v) { return tx::add(tx::sum(tx::mul(tx::cumsum(v, 0), v)), tx::sum(tx::cumprod(v, 1))); };
  tx::ttest::expect_compiled_matches_eager(
      "value and gradient", [&](const TD& v) { return tx::value_and_grad(loss, v); }, std::tuple{x0}, std::tuple{x1});
  tx::ttest::expect_compiled_matches_eager(
      "argmax",
      [](const TD& v) {
        return std::tuple{tx::argmax(v, 0), tx::argmin(v, 1, true), tx::argmax(v)};
      },
      std::tuple{x0}, std::tuple{x1});
}

TEST(Cumulative, Errors) {
  const TD x = TD::ones({2, 3});
  expect_error([&] { tx::cumsum(x, 2); }, "[cumsum]", {"axis 2", "[2, 3]"});
  expect_error([&] { tx::cumprod(x, -3); }, "[cumprod]");
  expect_error([&] { tx::cumsum(TD(), 0); }, "[cumsum]");
  expect_error([&] { tx::argmax(x, 3); }, "[argmax]");
  expect_error(
      [&] {
        tx::argmax(TD::zeros({0, 3}), 0);
      },
      "[argmax] reduction over an empty dimension", {"[0, 3]", "f64"});
  expect_error([&] { tx::argmin(TD::zeros({2, 0})); }, "[argmin]", {"empty"});
  expect_error([&] { tx::argmax(TD::full({}, 1.0), 1); }, "[argmax]");
}

}  // namespace
