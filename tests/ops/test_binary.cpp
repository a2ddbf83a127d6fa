// Elementwise binary ops with broadcasting (shapes align at dimension 0; missing trailing
// dimensions broadcast), scalar overloads and operators, where, and comparisons.
#include <gtest/gtest.h>

#include <complex>
#include <limits>
#include <utility>
#include <vector>

#include "support/gradcheck.hpp"

namespace tx = tenax;
using tx::Shape;
using tx::Tensor;
using tx::testing::expect_layout_invariant;
using tx::testing::lit;
using tx::testing::noncontiguous;
using tx::testing::rand_away;
using C = std::complex<double>;

namespace {

// Element (i, j) of a rank-0, rank-1 or rank-2 tensor broadcast to a matrix (dim 0 aligned).
template <class T>
T bget(const Tensor<T>& t, std::int64_t i, std::int64_t j) {
  if (t.dim() == 0) return t.item();
  if (t.dim() == 1) return t.at({t.size(0) == 1 ? 0 : i});
  return t.at({t.size(0) == 1 ? 0 : i, t.size(1) == 1 ? 0 : j});
}

// f(a, b) equals ref(a_ij, b_ij) elementwise over the broadcast (at most rank-2) shape.
template <class F, class R, class T>
void expect_broadcast_values(F f, R ref, const Tensor<T>& a, const Tensor<T>& b, const Shape& expected) {
  const auto y = f(a, b);
  ASSERT_EQ(y.shape(), expected);
  const std::int64_t m = y.dim() > 0 ? y.size(0) : 1, n = y.dim() > 1 ? y.size(1) : 1;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const auto got = y.dim() == 0 ? y.item() : y.dim() == 1 ? y.at({i}) : y.at({i, j});
      const auto want = ref(bget(a, i, j), bget(b, i, j));
      EXPECT_LE(std::abs(got - want), 1e-15 * std::abs(want)) << "(" << i << ", " << j << ")";
    }
}

// The battery for a broadcasting binary op; make_a/make_b draw inputs of a shape.
template <class T, class F, class R, class MA, class MB>
void binary_suite(F f, R ref, MA make_a, MB make_b) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{3, 4}, {3, 4}}, {{3, 1}, {1, 4}}, {{3, 4}, {3}},          {{3}, {3, 4}},    {{}, {3, 4}},
      {{3, 4}, {}},     {{}, {}},         {{2, 3, 2}, {2, 1, 2}}, {{2, 3, 2}, {2}}, {{1, 4}, {3, 1}}};
  std::uint64_t seed = 10;
  for (const auto& [sa, sb] : cases) {
    SCOPED_TRACE(::testing::Message() << "shapes " << sa << " and " << sb);
    const Tensor<T> a = make_a(sa, ++seed), b = make_b(sb, ++seed);
    if (a.dim() <= 2 && b.dim() <= 2) expect_broadcast_values(f, ref, a, b, tx::broadcast_shapes(sa, sb, "test"));
    TENAX_CHECK_GRADS(f, a, b);
  }
  // Views: non-contiguous inputs and a stride-0 expanded input.
  const Tensor<T> a = make_a({3, 4}, 1), b = make_b({3, 4}, 2), col = make_b({3, 1}, 3);
  TENAX_CHECK_GRADS(f, noncontiguous(a), b.mT().contiguous().mT());
  expect_layout_invariant(f, noncontiguous(a), b.mT().contiguous().mT());
  expect_layout_invariant(f, a, col.expand({3, 4}));
  TENAX_CHECK_GRADS(f, a, col.expand({3, 4}));
  // Empty: results and gradients of the right shape.
  EXPECT_EQ(f(make_a({0, 3}, 4), make_b({1, 3}, 5)).shape(), (Shape{0, 3}));
  TENAX_CHECK_GRADS(f, make_a({0, 3}, 4), make_b({1, 3}, 5));
  TENAX_CHECK_GRADS(f, make_a({0, 3}, 4), make_b({0, 3}, 5));
  TENAX_CHECK_GRADS(f, make_a({2, 0}, 4), make_b({2}, 5));
}

template <class T>
auto normal() {
  return [](const Shape& s, std::uint64_t seed) { return Tensor<T>::randn(s, seed); };
}
template <class T>
auto away() {
  return [](const Shape& s, std::uint64_t seed) { return rand_away<T>(s, seed); };
}

}  // namespace

TEST(Binary, Add) {
  auto f = [](const auto& a, const auto& b) { return tx::add(a, b); };
  binary_suite<double>(
      f, [](auto a, auto b) { return a + b; }, normal<double>(), normal<double>());
  binary_suite<C>(
      f, [](auto a, auto b) { return a + b; }, normal<C>(), normal<C>());
  EXPECT_TENAX_ERROR(f(Tensor<double>::zeros({3, 4}), Tensor<double>::zeros({4})), "add");
  EXPECT_TENAX_ERROR(f(Tensor<double>::zeros({3, 4, 2}), Tensor<double>::zeros({3, 4, 3})), "add");
}

TEST(Binary, Sub) {
  auto f = [](const auto& a, const auto& b) { return tx::sub(a, b); };
  binary_suite<double>(
      f, [](auto a, auto b) { return a - b; }, normal<double>(), normal<double>());
  binary_suite<C>(
      f, [](auto a, auto b) { return a - b; }, normal<C>(), normal<C>());
  EXPECT_TENAX_ERROR(f(Tensor<double>::zeros({3, 4}), Tensor<double>::zeros({3, 2})), "sub");
}

TEST(Binary, Mul) {
  auto f = [](const auto& a, const auto& b) { return tx::mul(a, b); };
  binary_suite<double>(
      f, [](auto a, auto b) { return a * b; }, normal<double>(), normal<double>());
  binary_suite<C>(
      f, [](auto a, auto b) { return a * b; }, normal<C>(), normal<C>());
  // The same tensor in both slots: d(x^2) = 2x dx (cotangents of both slots accumulate).
  TENAX_CHECK_GRADS([](const auto& a) { return tx::mul(a, a); }, Tensor<C>::randn({3, 2}, 1));
  EXPECT_TENAX_ERROR(f(Tensor<C>::zeros({2, 3}), Tensor<C>::zeros({3, 2})), "mul");
}

TEST(Binary, Div) {
  auto f = [](const auto& a, const auto& b) { return tx::div(a, b); };
  binary_suite<double>(
      f, [](auto a, auto b) { return a / b; }, normal<double>(), away<double>());
  binary_suite<C>(
      f, [](auto a, auto b) { return a / b; }, normal<C>(), away<C>());
  // The same tensor in both slots: a / a = 1, derivative 0 up to rounding (too degenerate for the
  // relative checks, which need a nonzero derivative to scale against).
  const auto x = rand_away<double>({3}, 1);
  const auto g = tx::grad([](const auto& a) { return tx::sum(tx::div(a, a)); }, x);
  for (double v : g.to_vector()) EXPECT_LE(std::abs(v), 1e-15);
  TENAX_CHECK_GRADS([](const auto& a) { return tx::div(tx::square(a), a); }, x);  // = a
  EXPECT_TENAX_ERROR(f(Tensor<double>::zeros({3, 4}), Tensor<double>::ones({4, 3})), "div");
}

TEST(Binary, Maximum) {
  auto f = [](const auto& a, const auto& b) { return tx::maximum(a, b); };
  binary_suite<double>(
      f, [](auto a, auto b) { return std::max(a, b); }, normal<double>(), normal<double>());
  EXPECT_TENAX_ERROR(f(Tensor<double>::zeros({3, 4}), Tensor<double>::zeros({4})), "maximum");
}

TEST(Binary, Minimum) {
  auto f = [](const auto& a, const auto& b) { return tx::minimum(a, b); };
  binary_suite<double>(
      f, [](auto a, auto b) { return std::min(a, b); }, normal<double>(), normal<double>());
  EXPECT_TENAX_ERROR(f(Tensor<double>::zeros({3, 4}), Tensor<double>::zeros({4})), "minimum");
}

TEST(Binary, MaximumMinimumTiesSplitEvenly) {
  // Documented policy: at a == b the derivative is split evenly between the two inputs.
  const auto a = Tensor<double>::from_col_major({3}, {1.0, 2.0, 3.0});
  const auto b = Tensor<double>::from_col_major({3}, {0.0, 2.0, 4.0});
  const auto w = Tensor<double>::from_col_major({3}, {1.0, 10.0, 100.0});
  auto gmax = tx::grad([&](const auto& x, const auto& y) { return tx::sum(tx::mul(w, tx::maximum(x, y))); }, a, b);
  EXPECT_EQ(std::get<0>(gmax).to_vector(), (std::vector<double>{1, 5, 0}));
  EXPECT_EQ(std::get<1>(gmax).to_vector(), (std::vector<double>{0, 5, 100}));
  auto gmin = tx::grad([&](const auto& x, const auto& y) { return tx::sum(tx::mul(w, tx::minimum(x, y))); }, a, b);
  EXPECT_EQ(std::get<0>(gmin).to_vector(), (std::vector<double>{0, 5, 100}));
  EXPECT_EQ(std::get<1>(gmin).to_vector(), (std::vector<double>{1, 5, 0}));
  // maximum(x, x) = x: the two halves add up to the identity.
  auto g = tx::grad([&](const auto& x) { return tx::sum(tx::mul(w, tx::maximum(x, x))); }, a);
  EXPECT_EQ(g.to_vector(), w.to_vector());
  const auto [y, t] = tx::jvp([&](const auto& x) { return tx::minimum(x, b); }, a, w);
  EXPECT_EQ(t.to_vector(), (std::vector<double>{0, 5, 100}));
  // NaN propagates from either side.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto n =
      tx::maximum(Tensor<double>::from_col_major({2}, {nan, 1.0}), Tensor<double>::from_col_major({2}, {1.0, nan}));
  EXPECT_TRUE(std::isnan(n.to_vector()[0]));
  EXPECT_TRUE(std::isnan(n.to_vector()[1]));
  // ... and the derivative follows the NaN that was selected (a NaN a is, for both ops).
  const auto an = Tensor<double>::from_col_major({3}, {nan, 1.0, nan}),
             bn = Tensor<double>::from_col_major({3}, {1.0, nan, nan});
  for (const bool is_max : {true, false}) {
    SCOPED_TRACE(is_max ? "maximum" : "minimum");
    const auto [ga, gb] =
        tx::grad([&](const auto& x,
                     const auto& y) { return tx::sum(tx::mul(w, is_max ? tx::maximum(x, y) : tx::minimum(x, y))); },
                 an, bn);
    EXPECT_EQ(ga.to_vector(), (std::vector<double>{1, 0, 100}));
    EXPECT_EQ(gb.to_vector(), (std::vector<double>{0, 10, 0}));
  }
}

TEST(Binary, ScalarOverloads) {
  const C s(0.7, -1.3);
  auto add_s = [](const auto& a) { return tx::add(a, lit(a, 1.5)); };
  auto mul_s = [](const auto& a) { return tx::mul(a, lit(a, -2.5)); };
  auto rsub_s = [](const auto& a) { return tx::rsub(a, lit(a, 0.5)); };
  auto rdiv_s = [](const auto& a) { return tx::rdiv(a, lit(a, 3.0)); };
  auto div_s = [](const auto& a) { return tx::div(a, lit(a, -1.7)); };
  for (const auto& x : {rand_away<double>({3, 4}, 1), rand_away<double>({}, 2), rand_away<double>({0, 2}, 3)}) {
    TENAX_CHECK_GRADS(add_s, x);
    TENAX_CHECK_GRADS(mul_s, x);
    TENAX_CHECK_GRADS(rsub_s, x);
    TENAX_CHECK_GRADS(rdiv_s, x);
    TENAX_CHECK_GRADS(div_s, x);
  }
  const auto x = rand_away<double>({3, 4}, 4);
  const auto xv = x.to_vector();
  auto expect_map = [&](const Tensor<double>& y, auto ref) {
    ASSERT_EQ(y.shape(), x.shape());
    const auto yv = y.to_vector();
    for (std::size_t i = 0; i < xv.size(); ++i) EXPECT_DOUBLE_EQ(yv[i], ref(xv[i]));
  };
  expect_map(add_s(x), [](double v) { return v + 1.5; });
  expect_map(mul_s(x), [](double v) { return v * -2.5; });
  expect_map(rsub_s(x), [](double v) { return 0.5 - v; });
  expect_map(rdiv_s(x), [](double v) { return 3.0 / v; });
  expect_map(div_s(x), [](double v) { return v / -1.7; });
  expect_layout_invariant(rdiv_s, noncontiguous(x));
  // Complex scalars: the VJP of s * a is conj(s) gy.
  auto cmul = [s](const auto& a) { return tx::mul(a, tx::testing::scalar_of<decltype(a)>(s)); };
  auto cadd = [s](const auto& a) { return tx::add(a, tx::testing::scalar_of<decltype(a)>(s)); };
  auto crsub = [s](const auto& a) { return tx::rsub(a, tx::testing::scalar_of<decltype(a)>(s)); };
  auto crdiv = [s](const auto& a) { return tx::rdiv(a, tx::testing::scalar_of<decltype(a)>(s)); };
  auto cdiv = [s](const auto& a) { return tx::div(a, tx::testing::scalar_of<decltype(a)>(s)); };
  const auto z = rand_away<C>({3, 2}, 5);
  TENAX_CHECK_GRADS(cmul, z);
  TENAX_CHECK_GRADS(cadd, z);
  TENAX_CHECK_GRADS(crsub, z);
  TENAX_CHECK_GRADS(crdiv, z);
  TENAX_CHECK_GRADS(cdiv, z);
  EXPECT_EQ(cdiv(z).at({0, 1}), z.at({0, 1}) / s);
  EXPECT_EQ(cmul(z).at({1, 1}), z.at({1, 1}) * s);
  EXPECT_EQ(crdiv(z).at({2, 0}), s / z.at({2, 0}));
}

// a / s is a true division, as div(a, b): 1 / s would overflow for a subnormal s (and round twice
// for any s).
TEST(Binary, DivisionByAScalarIsExact) {
  const auto a = Tensor<double>::from_col_major({2}, {1e-300, 3.0});
  EXPECT_EQ((a / 1e-310).to_vector(), tx::div(a, Tensor<double>::scalar(1e-310)).to_vector());
  EXPECT_EQ((a / 1e-310).to_vector()[0], 1e-300 / 1e-310);
  const auto b = Tensor<double>::from_col_major({1}, {1.5e308});
  EXPECT_EQ((b / 1.5e308).item(), 1.0);
  EXPECT_EQ((Tensor<float>::from_col_major({1}, {1e-30f}) / 1e-39f).item(), 1e-30f / 1e-39f);
  const auto z = Tensor<C>::from_col_major({1}, {C(1e-300, 0)});
  EXPECT_EQ((z / C(1e-310, 0)).item(), C(1e-300, 0) / C(1e-310, 0));
}

TEST(Binary, Operators) {
  const auto a = rand_away<double>({3, 4}, 1), b = rand_away<double>({3}, 2);
  auto ops2 = [](const auto& x, const auto& y) { return (x + y) * (x - y) / y + (-x); };
  TENAX_CHECK_GRADS(ops2, a, b);
  TENAX_CHECK_GRADS(ops2, rand_away<C>({3, 4}, 3), rand_away<C>({3}, 4));
  auto opss = [](const auto& x) {
    const auto two = lit(x, 2.0), half = lit(x, 0.5);
    return (x + two) * half - (two - x) / two + (two * x) + (half / x) - (x - half) + (x * two) / (x / two);
  };
  TENAX_CHECK_GRADS(opss, a);
  TENAX_CHECK_GRADS(opss, rand_away<C>({2, 2}, 5));
  const double v = a.at({1, 2}), w = b.at({1});
  EXPECT_DOUBLE_EQ(ops2(a, b).at({1, 2}), (v + w) * (v - w) / w + (-v));
  EXPECT_DOUBLE_EQ((a - 2.0).at({1, 2}), v - 2.0);
  EXPECT_DOUBLE_EQ((2.0 - a).at({1, 2}), 2.0 - v);
  EXPECT_DOUBLE_EQ((a / 4.0).at({1, 2}), v / 4.0);
  EXPECT_DOUBLE_EQ((4.0 / a).at({1, 2}), 4.0 / v);
  EXPECT_DOUBLE_EQ((3.0 * a).at({1, 2}), 3.0 * v);
  EXPECT_DOUBLE_EQ((a + 3.0).at({1, 2}), v + 3.0);
  EXPECT_DOUBLE_EQ((3.0 + a).at({1, 2}), v + 3.0);
}

TEST(Binary, Where) {
  const auto cond = tx::gt(Tensor<double>::randn({3, 4}, 1), Tensor<double>::zeros({}));
  const auto cond_col = tx::gt(Tensor<double>::randn({3, 1}, 2), Tensor<double>::zeros({}));
  auto f = [&](const auto& a, const auto& b) { return tx::where(cond, a, b); };
  auto fc = [&](const auto& a, const auto& b) { return tx::where(cond_col, a, b); };
  TENAX_CHECK_GRADS(f, Tensor<double>::randn({3, 4}, 3), Tensor<double>::randn({3, 4}, 4));
  TENAX_CHECK_GRADS(f, Tensor<double>::randn({3, 1}, 3), Tensor<double>::randn({1, 4}, 4));
  TENAX_CHECK_GRADS(f, Tensor<double>::randn({}, 3), Tensor<double>::randn({3}, 4));
  TENAX_CHECK_GRADS(fc, Tensor<double>::randn({1, 4}, 3), Tensor<double>::randn({3, 4}, 4));
  TENAX_CHECK_GRADS(f, Tensor<C>::randn({3, 4}, 5), Tensor<C>::randn({3}, 6));
  TENAX_CHECK_GRADS(fc, Tensor<C>::randn({3, 4}, 5), Tensor<C>::randn({}, 6));
  expect_layout_invariant(f, noncontiguous(Tensor<double>::randn({3, 4}, 7)), Tensor<double>::randn({4, 3}, 8).mT());
  // Values follow the condition, with broadcasting of all three operands.
  const auto a = Tensor<double>::randn({3, 1}, 9), b = Tensor<double>::randn({1, 4}, 10);
  const auto y = f(a, b);
  ASSERT_EQ(y.shape(), (Shape{3, 4}));
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 4; ++j) EXPECT_EQ(y.at({i, j}), cond.at({i, j}) ? a.at({i, 0}) : b.at({0, j}));
  // The branch not taken never leaks into the derivative, even when it is inf or NaN.
  const double inf = std::numeric_limits<double>::infinity();
  const auto bad = Tensor<double>::from_col_major({3}, {inf, -inf, std::numeric_limits<double>::quiet_NaN()});
  const auto good = Tensor<double>::from_col_major({3}, {1.0, 2.0, 3.0});
  const auto pick = tx::Tensor<bool>::from_col_major({3}, {false, false, false});
  auto g = tx::grad([&](const auto& p, const auto& q) { return tx::sum(tx::where(pick, p, q)); }, bad, good);
  EXPECT_EQ(std::get<0>(g).to_vector(), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(std::get<1>(g).to_vector(), (std::vector<double>{1, 1, 1}));
  // Empty.
  const auto ce = tx::Tensor<bool>::zeros({0, 2});
  TENAX_CHECK_GRADS([&](const auto& p, const auto& q) { return tx::where(ce, p, q); }, Tensor<double>::randn({0, 2}, 1),
                    Tensor<double>::randn({1, 2}, 2));
  EXPECT_TENAX_ERROR(f(Tensor<double>::zeros({4}), Tensor<double>::zeros({3, 4})), "where");
}

TEST(Binary, Comparisons) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto a = Tensor<double>::from_col_major({4, 1}, {1.0, 2.0, nan, -0.0});
  const auto b = Tensor<double>::from_col_major({1, 3}, {2.0, 0.0, nan});
  using V = std::vector<bool>;
  auto rows = [](const Tensor<bool>& t) {  // all elements, column-major
    auto v = t.to_vector();
    return V(v.begin(), v.end());
  };
  // a (4x1) against b (1x3): columns b = 2, 0, nan.
  EXPECT_EQ(rows(tx::eq(a, b)), (V{0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0}));
  EXPECT_EQ(rows(tx::ne(a, b)), (V{1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1}));
  EXPECT_EQ(rows(tx::lt(a, b)), (V{1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(rows(tx::le(a, b)), (V{1, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0}));
  EXPECT_EQ(rows(tx::gt(a, b)), (V{0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(rows(tx::ge(a, b)), (V{0, 1, 0, 0, 1, 1, 0, 1, 0, 0, 0, 0}));
  EXPECT_EQ(tx::lt(a, b).shape(), (Shape{4, 3}));
  // Complex equality, rank-0 against a vector, views, empty.
  const auto z = Tensor<C>::from_col_major({3}, {C(1, 2), C(1, -2), C(0, 0)});
  EXPECT_EQ(rows(tx::eq(z, Tensor<C>::scalar(C(1, 2)))), (V{1, 0, 0}));
  EXPECT_EQ(rows(tx::ne(z, tx::conj(z))), (V{1, 1, 0}));
  const auto m = Tensor<double>::randn({3, 4}, 1);
  EXPECT_EQ(rows(tx::gt(noncontiguous(m), Tensor<double>::zeros({3}))), rows(tx::gt(m, Tensor<double>::zeros({3}))));
  EXPECT_EQ(tx::eq(Tensor<double>::zeros({0, 3}), Tensor<double>::zeros({1, 3})).shape(), (Shape{0, 3}));
  // Integer and bool tensors compare too.
  const auto i = Tensor<std::int64_t>::arange(4);
  EXPECT_EQ(rows(tx::ge(i, Tensor<std::int64_t>::scalar(2))), (V{0, 0, 1, 1}));
  EXPECT_TENAX_ERROR(tx::eq(Tensor<double>::zeros({3}), Tensor<double>::zeros({4})), "eq");
  EXPECT_TENAX_ERROR(tx::lt(Tensor<double>::zeros({3}), Tensor<double>::zeros({4})), "lt");
}
