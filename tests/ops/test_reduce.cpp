// Reductions: sum, mean, prod, max, min over axes (with and without keepdim) and over all
// elements; prod with zeros; max/min ties; sum_to.
#include <gtest/gtest.h>

#include <complex>
#include <functional>
#include <limits>
#include <vector>

#include "support/gradcheck.hpp"

namespace tx = tenax;
using tx::Shape;
using tx::Tensor;
using tx::testing::expect_layout_invariant;
using tx::testing::noncontiguous;
using tx::testing::rand_away;
using C = std::complex<double>;
using Axes = std::vector<std::int64_t>;

namespace {

// Reference reduction of a rank-3 tensor by loops: the keepdim-shaped result in column-major
// order (which is also the order without keepdim).
template <class T, class Op>
std::vector<T> ref_reduce(const Tensor<T>& x, const Axes& axes, T init, Op op) {
  bool m[3] = {false, false, false};
  for (auto a : axes) m[a < 0 ? a + 3 : a] = true;
  const std::int64_t n0 = x.size(0), n1 = x.size(1), n2 = x.size(2);
  const std::int64_t k0 = m[0] ? 1 : n0, k1 = m[1] ? 1 : n1, k2 = m[2] ? 1 : n2;
  std::vector<T> r(static_cast<std::size_t>(k0 * k1 * k2), init);
  for (std::int64_t i = 0; i < n0; ++i)
    for (std::int64_t j = 0; j < n1; ++j)
      for (std::int64_t k = 0; k < n2; ++k) {
        T& o = r[static_cast<std::size_t>((m[0] ? 0 : i) + k0 * ((m[1] ? 0 : j) + k1 * (m[2] ? 0 : k)))];
        o = op(o, x.at({i, j, k}));
      }
  return r;
}

Shape reduced(const Shape& s, const Axes& axes, bool keepdim) {
  Shape r;
  for (int d = 0; d < s.size(); ++d) {
    bool red = false;
    for (auto a : axes) red = red || (a < 0 ? a + s.size() : a) == d;
    if (!red)
      r.push_back(s[d]);
    else if (keepdim)
      r.push_back(1);
  }
  return r;
}

const std::vector<Axes> kAxes = {{}, {0}, {1}, {2}, {0, 2}, {-1}, {1, 0}, {0, 1, 2}};

// Values against the loop reference and the AD battery for every axis set, keepdim or not, and the
// full reduction; red(x, axes, keepdim) / red_all(x) are the op.
template <class T, class Red, class RedAll, class Op>
void reduce_suite(Red red, RedAll red_all, T init, Op op, const Tensor<T>& x, double vtol = 1e-14) {
  for (const auto& axes : kAxes)
    for (bool keepdim : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "axes of size " << axes.size() << (axes.empty() ? "" : " first ")
                                        << (axes.empty() ? 0 : axes[0]) << " keepdim " << keepdim);
      auto f = [&](const auto& t) { return red(t, axes, keepdim); };
      const auto y = f(x);
      EXPECT_EQ(y.shape(), reduced(x.shape(), axes, keepdim));
      tx::testing::expect_close(
          tx::testing::values(y),
          tx::testing::values(Tensor<T>::from_col_major(y.shape(), ref_reduce(x, axes, init, op))), vtol, "values");
      TENAX_CHECK_GRADS(f, x);
    }
  auto all = [&](const auto& t) { return red_all(t); };
  const auto y = all(x);
  EXPECT_EQ(y.shape(), Shape{});
  tx::testing::expect_close(tx::testing::values(y),
                            tx::testing::values(Tensor<T>::from_col_major({}, ref_reduce(x, {0, 1, 2}, init, op))),
                            vtol, "values");
  TENAX_CHECK_GRADS(all, x);
  // Views, a rank-0 input, and a reduction that leaves a size-1 dimension.
  auto f1 = [&](const auto& t) { return red(t, Axes{1}, false); };
  TENAX_CHECK_GRADS(f1, noncontiguous(x));
  expect_layout_invariant(f1, noncontiguous(x));
  expect_layout_invariant(all, x.permute({2, 0, 1}).contiguous().permute({1, 2, 0}));
  TENAX_CHECK_GRADS(all, x.slice(0, 0, 1).slice(1, 2, 3).slice(2, 1, 2).reshape({}));
  TENAX_CHECK_GRADS([&](const auto& t) { return red(t, Axes{0}, true); }, x.slice(0, 0, 1));
  // A stride-0 (expanded) input.
  const auto ex = x.slice(1, 0, 1).expand(x.shape());
  auto f02 = [&](const auto& t) { return red(t, Axes{0, 2}, false); };
  expect_layout_invariant(f02, ex);
  TENAX_CHECK_GRADS(f02, ex);
}

}  // namespace

TEST(Reduce, Sum) {
  auto red = [](const auto& t, const Axes& a, bool k) { return tx::sum(t, a, k); };
  auto all = [](const auto& t) { return tx::sum(t); };
  reduce_suite<double>(red, all, 0.0, std::plus<>{}, Tensor<double>::randn({3, 4, 2}, 1));
  reduce_suite<C>(red, all, C(0), std::plus<>{}, Tensor<C>::randn({3, 4, 2}, 2));
  // Empty: a sum over an empty dimension is 0; over a non-empty one of an empty tensor, empty.
  const auto e = Tensor<double>::randn({0, 3}, 3);
  EXPECT_EQ(tx::sum(e).item(), 0.0);
  EXPECT_EQ(tx::sum(e, {0}).to_vector(), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(tx::sum(e, {1}).shape(), (Shape{0}));
  TENAX_CHECK_GRADS(all, e);
  TENAX_CHECK_GRADS([](const auto& t) { return tx::sum(t, {0}); }, e);
  TENAX_CHECK_GRADS([](const auto& t) { return tx::sum(t, {1}, true); }, e);
  EXPECT_TENAX_ERROR(tx::sum(Tensor<double>::zeros({3, 4}), {2}), "sum");
  EXPECT_TENAX_ERROR(tx::sum(Tensor<double>::zeros({3, 4}), {-3}), "sum");
  EXPECT_TENAX_ERROR(tx::sum(Tensor<double>::zeros({3, 4}), {1, -1}), "sum");
}

TEST(Reduce, Mean) {
  auto red = [](const auto& t, const Axes& a, bool k) { return tx::mean(t, a, k); };
  auto all = [](const auto& t) { return tx::mean(t); };
  const auto x = Tensor<double>::randn({3, 4, 2}, 1);
  for (const auto& axes : kAxes) {
    std::int64_t n = 1;
    for (auto a : axes) n *= x.size(static_cast<int>(a));
    auto s = tx::sum(x, axes, true).to_vector();
    auto m = tx::mean(x, axes, true).to_vector();
    for (std::size_t i = 0; i < s.size(); ++i) EXPECT_NEAR(m[i], s[i] / static_cast<double>(n), 1e-15);
    for (bool keepdim : {false, true}) {
      auto f = [&](const auto& t) { return red(t, axes, keepdim); };
      EXPECT_EQ(f(x).shape(), reduced(x.shape(), axes, keepdim));
      TENAX_CHECK_GRADS(f, x);
    }
  }
  EXPECT_NEAR(all(x).item(), tx::sum(x).item() / 24, 1e-15);
  TENAX_CHECK_GRADS(all, x);
  TENAX_CHECK_GRADS(all, Tensor<C>::randn({3, 4, 2}, 2));
  TENAX_CHECK_GRADS([](const auto& t) { return tx::mean(t, {0, 2}); }, Tensor<C>::randn({3, 4, 2}, 3));
  TENAX_CHECK_GRADS([](const auto& t) { return tx::mean(t, {1}); }, noncontiguous(x));
  TENAX_CHECK_GRADS([](const auto& t) { return tx::mean(t, {1}); }, Tensor<double>::randn({0, 3}, 4));
  EXPECT_TENAX_ERROR(tx::mean(x, {3}), "mean");
  EXPECT_TENAX_ERROR(tx::mean(x, {0, 0}), "mean");
}

TEST(Reduce, Prod) {
  auto red = [](const auto& t, const Axes& a, bool k) { return tx::prod(t, a, k); };
  auto all = [](const auto& t) { return tx::prod(t); };
  reduce_suite<double>(red, all, 1.0, std::multiplies<>{}, rand_away<double>({3, 4, 2}, 1, 0.5, 1.5));
  reduce_suite<C>(red, all, C(1), std::multiplies<>{}, rand_away<C>({3, 4, 2}, 2, 0.5, 1.5));
  const auto e = Tensor<double>::randn({0, 3}, 3);
  EXPECT_EQ(tx::prod(e).item(), 1.0);
  EXPECT_EQ(tx::prod(e, {0}).to_vector(), (std::vector<double>{1, 1, 1}));
  TENAX_CHECK_GRADS([](const auto& t) { return tx::prod(t, {0}); }, e);
  TENAX_CHECK_GRADS([](const auto& t) { return tx::prod(t, {1}); }, e);
  EXPECT_TENAX_ERROR(tx::prod(Tensor<double>::zeros({3, 4}), {2}), "prod");
}

TEST(Reduce, ProdWithZerosHasExactGradients) {
  // Columns: no zero, one zero, two zeros, all zeros. prod over axis 0.
  const auto x = Tensor<double>::from_col_major({4, 4}, {2, 3, 5, 7, 2, 0, 5, 7, 0, 3, 0, 7, 0, 0, 0, 0});
  const auto w = Tensor<double>::from_col_major({4}, {1, 10, 100, 1000});
  auto f = [&](const auto& t) { return tx::sum(tx::mul(tx::prod(t, {0}), w)); };
  EXPECT_EQ(tx::prod(x, {0}).to_vector(), (std::vector<double>{210, 0, 0, 0}));
  const auto g = tx::grad(f, x);
  // d prod / d x_i = product of the others: exact, no 0/0.
  EXPECT_EQ(g.to_vector(), (std::vector<double>{105, 70, 42, 30, 0, 700, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  // One zero: only the zero's slot is nonzero; two zeros: all vanish.
  const auto d = Tensor<double>::randn({4, 4}, 1);
  const auto [y, t] = tx::jvp([](const auto& v) { return tx::prod(v, {0}); }, x, d);
  const auto tv = t.to_vector();
  EXPECT_DOUBLE_EQ(tv[1], 70 * d.at({1, 1}));
  EXPECT_EQ(tv[2], 0.0);
  EXPECT_EQ(tv[3], 0.0);
  // Full reductions with one and two zeros, real and complex; the AD battery (including the
  // second order, where the product is smooth: it is a polynomial) on each.
  const auto one0 = Tensor<double>::from_col_major({2, 2}, {1.5, 0.0, -2.0, 0.5});
  const auto two0 = Tensor<double>::from_col_major({2, 2}, {1.5, 0.0, -2.0, 0.0});
  EXPECT_EQ(tx::grad([](const auto& v) { return tx::prod(v); }, one0).to_vector(),
            (std::vector<double>{0, -1.5, 0, 0}));
  EXPECT_EQ(tx::grad([](const auto& v) { return tx::prod(v); }, two0).to_vector(), (std::vector<double>{0, 0, 0, 0}));
  auto pall = [](const auto& v) { return tx::prod(v); };
  auto p0 = [](const auto& v) { return tx::prod(v, {0}); };
  TENAX_CHECK_GRADS(pall, one0);
  TENAX_CHECK_GRADS(pall, two0);
  TENAX_CHECK_GRADS(p0, x);
  const auto zc = Tensor<C>::from_col_major({3}, {C(1, 2), C(0, 0), C(0.5, -1)});
  EXPECT_EQ(tx::grad([](const auto& v) { return tx::real(tx::prod(v)); }, zc).to_vector()[1],
            std::conj(C(1, 2) * C(0.5, -1)));
  TENAX_CHECK_GRADS(pall, zc);
  TENAX_CHECK_GRADS(pall, Tensor<C>::from_col_major({3}, {C(1, 2), C(0, 0), C(0, 0)}));
  TENAX_CHECK_GRADS(pall, Tensor<double>::from_col_major({5}, {0.0, 1.5, 0.0, -2.0, 0.0}));  // three zeros
  TENAX_CHECK_GRADS(p0, Tensor<double>::from_col_major({3, 2}, {0.0, 0.0, 0.0, 1.0, 0.0, 0.0}));
}

// The products of the others are formed by multiplications only (no y / x_i), so first and second
// derivatives are exact at tiny, huge and infinite entries, where y / x_i cancels or gives NaN.
TEST(Reduce, ProdDerivativesAtExtremeEntries) {
  const double inf = std::numeric_limits<double>::infinity();
  auto pall = [](const auto& v) { return tx::prod(v); };
  auto rr = [&](const Tensor<double>& x, const Tensor<double>& v) {  // reverse over reverse: H v
    return tx::grad([&](const Tensor<double>& z) { return tx::sum(tx::mul(tx::grad(pall, z), v)); }, x);
  };
  // (H 1)_i = the sum over j != i of the product of all entries but x_i and x_j: [1, 1] at
  // [1e-16, 1] (was [0, 1]) and at [3e-320, 3]; [1e150, 1e150, 2e150] at [1e150, 1e150, 1e-150]
  // (the last was 0, and NaN by reverse over reverse).
  for (const std::vector<double>& c :
       {std::vector<double>{1e-16, 1.0}, std::vector<double>{3e-320, 3.0}, std::vector<double>{1e150, 1e150, 1e-150},
        std::vector<double>{2.0, 3.0, 5.0, 7.0, 11.0}}) {
    const auto n = static_cast<std::int64_t>(c.size());
    const auto x = Tensor<double>::from_col_major({n}, c), ones = Tensor<double>::ones({n});
    std::vector<double> hv;
    for (std::int64_t i = 0; i < n; ++i) {
      double s = 0;
      for (std::int64_t j = 0; j < n; ++j) {
        double p = 1;
        for (std::int64_t k = 0; k < n; ++k) p *= (k == i || k == j) ? 1.0 : c[k];
        s += j == i ? 0.0 : p;
      }
      hv.push_back(s);
    }
    SCOPED_TRACE(::testing::PrintToString(c));
    const auto h = tx::hvp(pall, x, ones).to_vector(), r = rr(x, ones).to_vector();
    for (std::int64_t i = 0; i < n; ++i) {
      EXPECT_DOUBLE_EQ(h[i], hv[i]) << i;
      EXPECT_DOUBLE_EQ(r[i], hv[i]) << i;
    }
  }
  // f32: the Hessian at [1e-8, 1] is [[0, 1], [1, 0]].
  const auto xf = Tensor<float>::from_col_major({2}, {1e-8f, 1.0f});
  EXPECT_EQ(tx::hvp([](const auto& v) { return tx::prod(v); }, xf, Tensor<float>::ones({2})).to_vector(),
            (std::vector<float>{1.0f, 1.0f}));
  // An infinite entry: the others' product is finite (inf / inf was NaN).
  EXPECT_EQ(tx::grad(pall, Tensor<double>::from_col_major({3}, {inf, 2.0, 3.0})).to_vector(),
            (std::vector<double>{6.0, inf, inf}));
  // Several reduced axes, and a group that needs padding (5 x 3 over axes 0 and 2 of 5 x 2 x 3).
  auto p02 = [](const auto& v) { return tx::prod(v, {0, 2}); };
  TENAX_CHECK_GRADS(p02, rand_away<double>({5, 2, 3}, 7, 0.5, 1.5));
  TENAX_CHECK_GRADS(p02, rand_away<C>({5, 2, 3}, 8, 0.5, 1.5));
  TENAX_CHECK_GRADS([](const auto& v) { return tx::prod(v, {1}, true); }, noncontiguous(rand_away<double>({3, 7}, 9)));
}

TEST(Reduce, Max) {
  auto red = [](const auto& t, const Axes& a, bool k) { return tx::max(t, a, k); };
  auto all = [](const auto& t) { return tx::max(t); };
  const double inf = std::numeric_limits<double>::infinity();
  reduce_suite<double>(
      red, all, -inf, [](double a, double b) { return std::max(a, b); }, Tensor<double>::randn({3, 4, 2}, 1));
  EXPECT_EQ(tx::max(Tensor<double>::randn({0, 3}, 2), {1}).shape(), (Shape{0}));
  TENAX_CHECK_GRADS([](const auto& t) { return tx::max(t, {1}); }, Tensor<double>::randn({0, 3}, 2));
  EXPECT_TENAX_ERROR(tx::max(Tensor<double>::zeros({0, 3})), "max");
  EXPECT_TENAX_ERROR(tx::max(Tensor<double>::zeros({0, 3}), {0}), "max");
  EXPECT_TENAX_ERROR(tx::max(Tensor<double>::zeros({3, 4}), {2}), "max");
  EXPECT_TENAX_ERROR(tx::max(Tensor<double>::zeros({3, 4}), {0, 0}), "max");
}

TEST(Reduce, Min) {
  auto red = [](const auto& t, const Axes& a, bool k) { return tx::min(t, a, k); };
  auto all = [](const auto& t) { return tx::min(t); };
  const double inf = std::numeric_limits<double>::infinity();
  reduce_suite<double>(
      red, all, inf, [](double a, double b) { return std::min(a, b); }, Tensor<double>::randn({3, 4, 2}, 1));
  EXPECT_TENAX_ERROR(tx::min(Tensor<double>::zeros({0, 3})), "min");
  EXPECT_TENAX_ERROR(tx::min(Tensor<double>::zeros({3, 4}), {-3}), "min");
}

TEST(Reduce, MaxMinTiesSplitEvenly) {
  // Documented policy: the derivative is shared evenly by all positions attaining the extremum.
  const auto x = Tensor<double>::from_col_major({3, 3}, {1, 3, 3, 2, 2, 2, -1, 5, 0});
  const auto w = Tensor<double>::from_col_major({3}, {6, 30, 1});
  auto gmax = tx::grad([&](const auto& t) { return tx::sum(tx::mul(tx::max(t, {0}), w)); }, x);
  EXPECT_EQ(gmax.to_vector(), (std::vector<double>{0, 3, 3, 10, 10, 10, 0, 1, 0}));
  auto gmin = tx::grad([&](const auto& t) { return tx::sum(tx::mul(tx::min(t, {0}), w)); }, x);
  EXPECT_EQ(gmin.to_vector(), (std::vector<double>{6, 0, 0, 10, 10, 10, 1, 0, 0}));
  auto gall = tx::grad([](const auto& t) { return tx::max(t); }, Tensor<double>::from_col_major({4}, {4, 1, 4, 4}));
  for (double v : gall.to_vector()) EXPECT_TRUE(v == 0 || std::abs(v - 1.0 / 3) < 1e-16);
  const auto d = Tensor<double>::from_col_major({3, 3}, {1, 2, 4, 1, 2, 6, 1, 1, 1});
  const auto [y, t] = tx::jvp([](const auto& v) { return tx::max(v, {0}); }, x, d);
  EXPECT_EQ(y.to_vector(), (std::vector<double>{3, 2, 5}));
  EXPECT_EQ(t.to_vector(), (std::vector<double>{3, 3, 1}));  // mean of the tied directions
}

TEST(Reduce, MaxMinDerivativesFollowTheSelectedNaN) {
  // The forward propagates a NaN; the NaN entries attain the extremum and share the derivative,
  // as in maximum/minimum and PyTorch's max(): finite entries get 0, not 0/0.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto x = Tensor<double>::from_col_major({3}, {1, nan, 3});
  for (bool is_max : {true, false}) {
    auto f = [is_max](const auto& t) { return is_max ? tx::max(t) : tx::min(t); };
    EXPECT_TRUE(std::isnan(f(x).item()));
    EXPECT_EQ(tx::grad(f, x).to_vector(), (std::vector<double>{0, 1, 0}));
    const auto [y, t] = tx::jvp(f, x, Tensor<double>::from_col_major({3}, {5, 2, 7}));
    EXPECT_EQ(t.item(), 2);
    // Two NaNs share it; the reduction over axis 0 keeps the NaN-free column exact.
    const auto x2 = Tensor<double>::from_col_major({3, 2}, {nan, 4, nan, 1, 6, 2});
    auto g = tx::grad([&](const auto& v) { return tx::sum(is_max ? tx::max(v, {0}) : tx::min(v, {0})); }, x2);
    EXPECT_EQ(g.to_vector(), (std::vector<double>{0.5, 0, 0.5, is_max ? 0.0 : 1.0, is_max ? 1.0 : 0.0, 0}));
  }
}

TEST(Reduce, SumTo) {
  auto f = [](const Shape& s) { return [s](const auto& t) { return tx::sum_to(t, s); }; };
  const auto x = Tensor<double>::randn({3, 4, 2}, 1);
  for (const Shape& s : {Shape{3, 4, 2}, Shape{3, 1, 2}, Shape{3, 4}, Shape{3}, Shape{}, Shape{1, 4, 1}, Shape{1}}) {
    SCOPED_TRACE(::testing::Message() << "to " << s);
    const auto y = f(s)(x);
    EXPECT_EQ(y.shape(), s);
    TENAX_CHECK_GRADS(f(s), x);
  }
  EXPECT_NEAR(tx::sum_to(x, {}).item(), tx::sum(x).item(), 1e-14);
  EXPECT_TENAX_ERROR(tx::sum_to(x, {2}), "sum_to");
  EXPECT_TENAX_ERROR(tx::sum_to(x, {3, 4, 2, 2}), "sum_to");
}
