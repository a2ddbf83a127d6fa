// The eager AD engine: tape recording, backward, leaf gradients, and the function transforms
// grad / value_and_grad / vjp / jvp / hvp, including higher order and deep graphs.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include <tenax/tenax.hpp>

#include "support/expect.hpp"
#include "support/messages.hpp"

namespace tx = tenax;
using tx::testing::expect_close_elementwise;
using tx::testing::expect_error;

namespace {

using TD = tx::Tensor<double>;
using TZ = tx::Tensor<tx::c128>;

// The same elementwise function of one tensor, evaluated on the host.
template <class F>
TD host_map(const TD& x, F f) {
  std::vector<double> v = x.to_vector();
  for (auto& e : v) e = f(e);
  return TD::from_col_major(x.shape(), v);
}

double dot(const TD& a, const TD& b) { return tx::sum(a * b).item(); }

// A test-only op with two outputs, (2x, x^2), for the engine's multi-output path (no library op
// has several outputs yet).
struct TwoOut {
  static constexpr const char* name = "two_out";
  template <class T>
  std::tuple<tx::Tensor<T>, tx::Tensor<T>> forward(const tx::Tensor<T>& x) const {
    return {tx::mul(x, T(2)), tx::mul(x, x)};
  }
  // y0 = 2x, y1 = x^2: dy0 = 2 dx, dy1 = 2x dx; gx = 2 g0 + 2x g1 (undefined g: zero).
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    return std::tuple{tx::mul(c.dx0(), T(2)), tx::mul(tx::mul(c.x0(), c.dx0()), T(2))};
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    tx::Tensor<T> r;
    if (c.gy0().defined()) r = tx::mul(c.gy0(), T(2));
    if (c.gy1().defined()) {
      auto t = tx::mul(tx::mul(c.x0(), c.gy1()), T(2));
      r = r.defined() ? tx::add(r, t) : t;
    }
    return r;
  }
};
std::tuple<TD, TD> two_out(const TD& x) { return tx::detail::apply(TwoOut{}, x); }

}  // namespace

// ---- tape style -------------------------------------------------------------------------------

TEST(Engine, BackwardOnScalar) {
  auto x = TD::from_col_major({3}, {0.5, -1.0, 2.0}).requires_grad();
  auto y = tx::sum(tx::exp(x) * x);
  EXPECT_TRUE(y.tracks_grad());
  EXPECT_EQ(y.shape(), tx::Shape{});
  y.backward();
  expect_close_elementwise(x.grad(), host_map(x, [](double v) { return std::exp(v) * (1 + v); }));
  // A 0-d input.
  auto s = TD::scalar(3.0).requires_grad();
  (s * s * s).backward();
  EXPECT_DOUBLE_EQ(s.grad().item(), 27.0);
}

TEST(Engine, FanOutAccumulates) {
  auto x = TD::from_col_major({2, 2}, {1, 2, 3, 4}).requires_grad();
  // x used three times: y = sum(x * sin(x) + x).
  auto y = tx::sum(x * tx::sin(x) + x);
  y.backward();
  expect_close_elementwise(x.grad(), host_map(x, [](double v) { return std::sin(v) + v * std::cos(v) + 1; }));
  // The same tensor used three times by one expression node chain.
  auto z = TD::from_col_major({2}, {1.5, -2}).requires_grad();
  tx::sum(z + z + z).backward();
  expect_close_elementwise(z.grad(), TD::full({2}, 3.0));
  // Broadcast inputs receive the sum over the broadcast dimensions.
  auto b = TD::from_col_major({3}, {1, 2, 3}).requires_grad();
  auto m = TD::randn({3, 4}, 1);
  tx::sum(tx::add(b, m) * 2.0).backward();
  expect_close_elementwise(b.grad(), TD::full({3}, 8.0));
}

TEST(Engine, AccumulatesAcrossBackwardCallsAndZeroGrad) {
  auto x = TD::from_col_major({3}, {1, -2, 0.5}).requires_grad();
  auto y = tx::sum(x * x);
  y.backward();
  expect_close_elementwise(x.grad(), x.detach() * 2.0);
  y.backward();  // the same graph again: gradients add up
  expect_close_elementwise(x.grad(), x.detach() * 4.0);
  auto y2 = tx::sum(x * 3.0);
  y2.backward();  // another graph into the same leaf
  expect_close_elementwise(x.grad(), x.detach() * 4.0 + 3.0);
  x.zero_grad();
  EXPECT_FALSE(x.grad().defined());
  y.backward();
  expect_close_elementwise(x.grad(), x.detach() * 2.0);
}

TEST(Engine, NoGradGuardDisablesRecording) {
  auto x = TD::ones({2}).requires_grad();
  EXPECT_TRUE(tx::is_grad_enabled());
  {
    tx::no_grad g;
    EXPECT_FALSE(tx::is_grad_enabled());
    auto y = x * 2.0;
    EXPECT_FALSE(y.tracks_grad());
    EXPECT_TRUE(y.is_leaf());
    expect_error([&] { tx::sum(y).backward(); }, "[backward] tensor does not require grad");
    {
      tx::GradModeGuard on(true);
      EXPECT_TRUE((x * 2.0).tracks_grad());
    }
    EXPECT_FALSE(tx::is_grad_enabled());
    EXPECT_FALSE((x * 2.0).tracks_grad());
  }
  EXPECT_TRUE(tx::is_grad_enabled());
  EXPECT_TRUE((x * 2.0).tracks_grad());
  // Values are computed either way.
  tx::no_grad g;
  expect_close_elementwise(x * 2.0, TD::full({2}, 2.0));
}

TEST(Engine, DetachCutsTheGraph) {
  auto x = TD::from_col_major({2}, {3, -1}).requires_grad();
  auto d = x.detach();
  EXPECT_FALSE(d.tracks_grad());
  EXPECT_EQ(d.data(), x.data());  // same data, no copy
  tx::sum(d * x).backward();      // d is a constant: d/dx = d
  expect_close_elementwise(x.grad(), d);
  // Detaching an intermediate result stops gradients at that point.
  auto x2 = TD::from_col_major({2}, {3, -1}).requires_grad();
  auto h = tx::exp(x2);
  tx::sum(h.detach() * x2 + h).backward();
  expect_close_elementwise(x2.grad(), tx::exp(x2.detach()) * 2.0);
}

TEST(Engine, LeafSemantics) {
  auto t = TD::from_col_major({2}, {1, 2});
  EXPECT_FALSE(t.tracks_grad());
  EXPECT_TRUE(t.is_leaf());
  auto x = t.requires_grad();
  EXPECT_TRUE(x.tracks_grad());
  EXPECT_TRUE(x.is_leaf());
  EXPECT_EQ(x.data(), t.data());  // shares t's data
  EXPECT_FALSE(t.tracks_grad());  // t itself is unchanged
  EXPECT_FALSE(x.grad().defined());
  auto y = x * 2.0;
  EXPECT_TRUE(y.tracks_grad());
  EXPECT_FALSE(y.is_leaf());
  auto l = tx::sum(y * y);
  l.backward();
  EXPECT_TRUE(x.grad().defined());
  EXPECT_FALSE(y.grad().defined());  // non-leaf: no .grad
  EXPECT_FALSE(l.grad().defined());
  expect_close_elementwise(x.grad(), t * 8.0);
  // requires_grad(false): a plain handle; requires_grad() again: a separate leaf.
  auto p = x.requires_grad(false);
  EXPECT_FALSE(p.tracks_grad());
  auto x2 = x.requires_grad();
  EXPECT_TRUE(x2.is_leaf());
  EXPECT_FALSE(x2.grad().defined());
  tx::sum(x2).backward();
  expect_close_elementwise(x2.grad(), TD::ones({2}));
  expect_close_elementwise(x.grad(), t * 8.0);  // untouched
  // Undefined handles.
  TD u;
  EXPECT_TRUE(u.is_leaf());
  EXPECT_FALSE(u.grad().defined());
  EXPECT_FALSE(u.tracks_grad());
}

TEST(Engine, BackwardOnNonScalarWithCotangent) {
  auto x = TD::randn({2, 3}, 3).requires_grad();
  auto w = TD::randn({2, 3}, 4);
  auto y = tx::sin(x) * x;
  y.backward(w);
  auto xd = x.detach();
  expect_close_elementwise(x.grad(), w * (tx::cos(xd) * xd + tx::sin(xd)));
  expect_error([&] { y.backward(); }, "[backward] implicit cotangent needs a one-element tensor, got shape [2, 3]");
  expect_error(
      [&] {
        y.backward(TD::ones({3, 2}));
      },
      "[backward] cotangent of shape [3, 2] for a tensor of shape [2, 3]");
  // Matmul with a transposed cotangent layout.
  auto a = TD::randn({3, 4}, 5).requires_grad();
  auto b = TD::randn({4, 2}, 6);
  auto g = TD::randn({2, 3}, 7).mT();
  tx::matmul(a, b).backward(g);
  expect_close_elementwise(a.grad(), tx::matmul(g, b.mT()));
}

TEST(Engine, BackwardWithoutGradThrows) {
  auto t = TD::ones({1});
  expect_error([&] { t.backward(); }, "[backward] tensor does not require grad");
  expect_error([&] { tx::sum(t * 2.0).backward(); }, "[backward] tensor does not require grad");
  expect_error([&] { t.backward(TD::ones({1})); }, "[backward] tensor does not require grad");
  expect_error([] { TD().backward(); }, "[backward]");
}

TEST(Engine, GraphKeptAliveOnlyByTheOutput) {
  TD x = TD::from_col_major({3}, {0.1, 0.2, 0.3}).requires_grad();
  TD y;
  {
    auto a = tx::exp(x);
    auto b = a * x;
    auto c = tx::sin(b) + a;
    y = tx::sum(c * c);
  }  // every intermediate handle is gone; the tape holds what the rules need
  y.backward();
  auto xd = x.detach();
  // y = sum(c^2), c = sin(e^x x) + e^x: dy/dx = 2c (cos(e^x x) e^x (1 + x) + e^x).
  auto e = tx::exp(xd);
  auto c = tx::sin(e * xd) + e;
  expect_close_elementwise(x.grad(), c * 2.0 * (tx::cos(e * xd) * e * (xd + 1.0) + e));
  // The leaf handle may go too: its accumulator lives on in the graph.
  TD z;
  {
    auto leaf = TD::ones({2}).requires_grad();
    z = tx::sum(leaf * leaf);
  }
  EXPECT_NO_THROW(z.backward());
}

TEST(Engine, DeepChainDoesNotOverflowTheStack) {
  constexpr int kDepth = 100000;
  auto x = TD::from_col_major({2}, {1.0, -0.5}).requires_grad();
  const auto live = tx::allocator_stats().bytes_live;
  {
    TD y = x;
    for (int i = 0; i < kDepth; ++i) y = y + x;  // y = (kDepth + 1) x
    auto l = tx::sum(y * 1.0);
    l.backward();
    expect_close_elementwise(x.grad(), TD::full({2}, kDepth + 1.0));
    y = TD();
  }  // l and the whole chain are destroyed here
  x.zero_grad();
  EXPECT_EQ(tx::allocator_stats().bytes_live, live);
  {
    // A chain that is destroyed without ever running backward.
    TD y = x;
    for (int i = 0; i < kDepth; ++i) y = tx::mul(y, 1.0);
  }
  EXPECT_EQ(tx::allocator_stats().bytes_live, live);
  // Second order through a deep chain: f = sum(y^2), y = (n + 1) x, H v = 2 (n + 1)^2 v.
  {
    constexpr int kHalf = kDepth / 5;
    auto v = TD::from_col_major({2}, {0.5, 2.0});
    auto h = tx::hvp(
        [](const TD& z) {
          TD y = z;
          for (int i = 0; i < kHalf; ++i) y = y + z;
          return tx::sum(y * y);
        },
        x.detach(), v);
    expect_close_elementwise(h, v * (2.0 * (kHalf + 1.0) * (kHalf + 1.0)));
  }
  EXPECT_EQ(tx::allocator_stats().bytes_live, live);
  // The same depth through the functional API.
  auto g = tx::grad(
      [](const TD& z) {
        TD y = z;
        for (int i = 0; i < kDepth; ++i) y = y + 1.0;
        return tx::sum(y);
      },
      TD::ones({3}));
  expect_close_elementwise(g, TD::ones({3}));
}

TEST(Engine, MultiOutputOp) {
  auto xv = TD::from_col_major({3}, {1.0, -2.0, 0.5});
  auto w0 = TD::from_col_major({3}, {0.3, 1.0, -2.0});
  auto w1 = TD::from_col_major({3}, {2.0, 0.1, 1.5});
  {  // both outputs used
    auto x = xv.requires_grad();
    auto [y0, y1] = two_out(x);
    expect_close_elementwise(y0, xv * 2.0);
    expect_close_elementwise(y1, xv * xv);
    EXPECT_TRUE(y0.tracks_grad());
    EXPECT_TRUE(y1.tracks_grad());
    EXPECT_TRUE(y0.impl()->grad_fn == y1.impl()->grad_fn);
    tx::sum(y0 * w0 + y1 * w1).backward();
    expect_close_elementwise(x.grad(), w0 * 2.0 + xv * w1 * 2.0);
  }
  {  // only the second output reaches the loss: the first cotangent is a symbolic zero
    auto x = xv.requires_grad();
    auto y1 = std::get<1>(two_out(x));
    tx::sum(y1 * w1).backward();
    expect_close_elementwise(x.grad(), xv * w1 * 2.0);
  }
  {  // forward mode
    auto [y, dy] = tx::jvp([](const TD& z) { return std::get<1>(two_out(z)) + std::get<0>(two_out(z)); }, xv, w0);
    expect_close_elementwise(y, xv * xv + xv * 2.0);
    expect_close_elementwise(dy, (xv * 2.0 + 2.0) * w0);
  }
  {  // forward over reverse through the op: f = sum(y0 * y1) = sum(2 x^3), H v = 12 x v
    auto h = tx::hvp(
        [](const TD& z) {
          auto [a, b] = two_out(z);
          return tx::sum(a * b);
        },
        xv, w0);
    expect_close_elementwise(h, xv * w0 * 12.0);
  }
  {  // reverse over reverse through the op: d/dx sum(grad f) = 12 x for f = sum(2 x^3)
    auto gg = tx::grad(
        [](const TD& z) {
          return tx::sum(tx::grad(
              [](const TD& u) {
                auto [a, b] = two_out(u);
                return tx::sum(a * b);
              },
              z));
        },
        xv);
    expect_close_elementwise(gg, xv * 12.0);
  }
}

// ---- function transforms ----------------------------------------------------------------------

TEST(Transforms, GradOfSeveralInputs) {
  auto x = TD::randn({3}, 1);
  auto y = TD::randn({3}, 2);
  auto z = TZ::randn({3}, 3);
  auto [gx, gy] = tx::grad([](const TD& a, const TD& b) { return tx::sum(a * a * b); }, x, y);
  static_assert(std::is_same_v<decltype(gx), TD>);
  expect_close_elementwise(gx, x * y * 2.0);
  expect_close_elementwise(gy, x * x);
  // Mixed dtypes; an input the function ignores gets a zero gradient.
  auto [g1, g2, g3] = tx::grad(
      [](const TD& a, const TZ& c, const TD& /*unused*/) { return tx::sum(a * tx::real(c) + tx::imag(c)); }, x, z, y);
  static_assert(std::is_same_v<decltype(g2), TZ>);
  expect_close_elementwise(g1, tx::real(z));
  // d/dRe = a, d/dIm = 1: the gradient is a + 1i.
  expect_close_elementwise(g2, tx::complex(x, TD::ones({3})));
  expect_close_elementwise(g3, TD::zeros({3}));
  // The inputs are untouched and do not record.
  EXPECT_FALSE(x.tracks_grad());
  EXPECT_FALSE(x.grad().defined());
}

TEST(Transforms, NonContiguousAndEmptyInputs) {
  auto f = [](const TD& a) { return tx::sum(tx::exp(a) * a); };
  auto base = TD::randn({3, 4}, 30);
  auto view = base.mT();  // 4 x 3, not contiguous
  auto g = tx::grad(f, view);
  EXPECT_EQ(g.shape(), (tx::Shape{4, 3}));
  expect_close_elementwise(g, tx::grad(f, view.contiguous()));
  auto [y, dy] = tx::jvp(f, view, TD::ones({4, 3}));
  EXPECT_NEAR(dy.item(), tx::sum(tx::exp(view) * (view + 1.0)).item(), 1e-12);
  // Empty input: an empty gradient of the same shape, a zero value.
  auto e = TD::zeros({0, 3});
  auto [v, ge] = tx::value_and_grad(f, e);
  EXPECT_EQ(v.item(), 0.0);
  EXPECT_EQ(ge.shape(), (tx::Shape{0, 3}));
  auto [ye, dye] = tx::jvp([](const TD& a) { return tx::sin(a); }, e, e);
  EXPECT_EQ(dye.shape(), (tx::Shape{0, 3}));
  auto xe = e.requires_grad();
  tx::sum(xe * xe).backward();
  EXPECT_EQ(xe.grad().shape(), (tx::Shape{0, 3}));
}

TEST(Transforms, GradWorksInsideNoGrad) {
  auto x = TD::from_col_major({2}, {0.5, 1.5});
  tx::no_grad guard;
  auto g = tx::grad([](const TD& a) { return tx::sum(a * a * a); }, x);
  expect_close_elementwise(g, x * x * 3.0);
  EXPECT_FALSE(g.tracks_grad());
  EXPECT_FALSE(tx::is_grad_enabled());  // restored
  expect_close_elementwise(tx::hvp([](const TD& a) { return tx::sum(a * a * a); }, x, TD::ones({2})), x * 6.0);
}

TEST(Transforms, ValueAndGrad) {
  auto x = TD::from_col_major({2, 2}, {0.1, 0.2, 0.3, 0.4});
  auto [v, g] = tx::value_and_grad([](const TD& a) { return tx::sum(tx::exp(a)); }, x);
  EXPECT_NEAR(v.item(), std::exp(0.1) + std::exp(0.2) + std::exp(0.3) + std::exp(0.4), 1e-14);
  EXPECT_FALSE(v.tracks_grad());
  expect_close_elementwise(g, tx::exp(x));
  auto [v2, gs] = tx::value_and_grad([](const TD& a, const TD& b) { return tx::sum(a * b); }, x, x * 2.0);
  EXPECT_NEAR(v2.item(), 2 * (0.01 + 0.04 + 0.09 + 0.16), 1e-14);
  expect_close_elementwise(std::get<0>(gs), x * 2.0);
  expect_close_elementwise(std::get<1>(gs), x);
  // A loss that does not depend on the input.
  auto [v3, g3] = tx::value_and_grad([](const TD&) { return TD::scalar(5.0); }, x);
  EXPECT_EQ(v3.item(), 5.0);
  expect_close_elementwise(g3, TD::zeros({2, 2}));
}

TEST(Transforms, VjpPullbackIsReusableAndLinear) {
  auto x = TD::randn({4}, 8);
  const auto vp = tx::vjp([](const TD& a) { return tx::sin(a) * a; }, x);
  const auto& y = vp.first;
  const auto& pb = vp.second;  // named, not a structured binding: a lambda below captures it
  expect_close_elementwise(y, tx::sin(x) * x);
  EXPECT_FALSE(y.tracks_grad());
  auto w = TD::randn({4}, 9), w2 = TD::randn({4}, 10);
  auto g1 = pb(w);
  auto g2 = pb(w);
  EXPECT_EQ(g1.to_vector(), g2.to_vector());
  expect_close_elementwise(g1, w * (tx::cos(x) * x + tx::sin(x)));
  expect_close_elementwise(pb(w + w2), g1 + pb(w2));
  expect_error([&] { pb(TD::ones({3})); }, "[vjp] cotangent of shape [3] for an output of shape [4]");
  // VJP against JVP: <w, J v> == <J^T w, v>.
  auto v = TD::randn({4}, 11);
  auto f = [](const TD& a) { return tx::exp(a) * tx::sum(a * a); };
  auto [y2, pb2] = tx::vjp(f, x);
  auto [y3, jv] = tx::jvp(f, x, v);
  EXPECT_NEAR(dot(w, jv), dot(pb2(w), v), 1e-12 * std::abs(dot(w, jv)));
}

TEST(Transforms, JvpOfCompositeMatchesAnalytic) {
  auto x = TD::randn({5}, 12);
  auto v = TD::randn({5}, 13);
  auto [y, dy] = tx::jvp([](const TD& a) { return tx::sin(a) * tx::exp(a) + a * a; }, x, v);
  expect_close_elementwise(y, tx::sin(x) * tx::exp(x) + x * x);
  expect_close_elementwise(dy, (tx::cos(x) * tx::exp(x) + tx::sin(x) * tx::exp(x) + x * 2.0) * v);
  EXPECT_FALSE(x.tangent().defined());  // the input is untouched
  // Matrix function: f(A) = A A, df = dA A + A dA.
  auto a = TD::randn({3, 3}, 14);
  auto da = TD::randn({3, 3}, 15);
  auto [p, dp] = tx::jvp([](const TD& m) { return tx::matmul(m, m); }, a, da);
  expect_close_elementwise(dp, tx::matmul(da, a) + tx::matmul(a, da));
  // A function that ignores its input has a zero tangent.
  auto [c, dc] = tx::jvp([](const TD&) { return TD::ones({2}); }, x, v);
  expect_close_elementwise(dc, TD::zeros({2}));
}

TEST(Transforms, HvpCubic) {
  // f = sum(x^3): H = diag(6x), H v = 6 x v.
  auto x = TD::randn({6}, 16);
  auto v = TD::randn({6}, 17);
  auto h = tx::hvp([](const TD& a) { return tx::sum(a * a * a); }, x, v);
  expect_close_elementwise(h, x * v * 6.0);
  auto h2 = tx::hvp([](const TD& a) { return tx::sum(tx::pow(a, 3.0)); }, x, v);
  expect_close_elementwise(h2, x * v * 6.0);
}

TEST(Transforms, HvpMixed) {
  // f = s t with s = sum(x^2), t = sum(sin x): grad = 2x t + s cos x,
  // H = 2t I + 2 x cos(x)^T + 2 cos(x) x^T - s diag(sin x).
  auto x = TD::randn({5}, 18);
  auto v = TD::randn({5}, 19);
  auto h = tx::hvp([](const TD& a) { return tx::sum(a * a) * tx::sum(tx::sin(a)); }, x, v);
  const double s = dot(x, x), t = tx::sum(tx::sin(x)).item();
  auto ref = v * (2 * t) + x * (2 * dot(tx::cos(x), v)) + tx::cos(x) * (2 * dot(x, v)) - tx::sin(x) * v * s;
  expect_close_elementwise(h, ref, 1e-11);
  // Quadratic form f = x^T A x: H v = (A + A^T) v.
  auto A = TD::randn({5, 5}, 20);
  auto hq = tx::hvp(
      [&](const TD& a) {
        auto col = a.reshape({5, 1});
        return tx::sum(tx::matmul(col.mT(), tx::matmul(A, col)));
      },
      x, v);
  expect_close_elementwise(hq, tx::matmul(A + A.mT(), v.reshape({5, 1})).reshape({5}), 1e-11);
  // Against central differences of the gradient.
  auto f = [](const TD& a) { return tx::sum(tx::exp(a) * tx::sin(a * a)); };
  auto hf = tx::hvp(f, x, v);
  const double eps = 1e-5;
  auto fd = (tx::grad(f, x + v * eps) - tx::grad(f, x - v * eps)) / (2 * eps);
  expect_close_elementwise(hf, fd, 1e-6);
}

TEST(Transforms, GradOfGrad) {
  // f = sum(sin(x) x): grad f = cos(x) x + sin(x); d/dx sum(grad f) = -sin(x) x + 2 cos(x).
  auto f = [](const TD& a) { return tx::sum(tx::sin(a) * a); };
  auto x = TD::randn({4}, 21);
  auto gg = tx::grad([&](const TD& z) { return tx::sum(tx::grad(f, z)); }, x);
  expect_close_elementwise(gg, tx::cos(x) * 2.0 - tx::sin(x) * x);
  // Third order: f = sum(x^4) -> 4x^3 -> 12x^2 -> 24x.
  auto f4 = [](const TD& a) { return tx::sum(a * a * a * a); };
  auto g3 = tx::grad(
      [&](const TD& z) { return tx::sum(tx::grad([&](const TD& u) { return tx::sum(tx::grad(f4, u)); }, z)); }, x);
  expect_close_elementwise(g3, x * 24.0, 1e-11);
  // vjp of the gradient: H^T w, H = diag(2 cos x - x sin x).
  auto w = TD::randn({4}, 22);
  auto [gx, pb] = tx::vjp([&](const TD& z) { return tx::grad(f, z); }, x);
  expect_close_elementwise(gx, tx::cos(x) * x + tx::sin(x));
  expect_close_elementwise(pb(w), (tx::cos(x) * 2.0 - tx::sin(x) * x) * w);
  // Reverse over forward: grad of sum(J v) for f = sum(sin x) is -sin(x) v.
  auto v = TD::randn({4}, 23);
  auto rf =
      tx::grad([&](const TD& z) { return tx::jvp([](const TD& a) { return tx::sum(tx::sin(a)); }, z, v).second; }, x);
  expect_close_elementwise(rf, -tx::sin(x) * v);
}

TEST(Transforms, InnerTransformOverAClosureIsDifferentiated) {
  // The inner grad is taken with respect to y, but its function closes over the outer variable x:
  // h(x) = sum(d/dy sum(x y^2 sin(x)) at y0) = sum(2 x y0 sin(x)), so
  // dh/dx = 2 y0 (sin(x) + x cos(x)). (This was 0 while the inner backward was not recorded.)
  const auto y0 = TD::randn({3}, 31);
  auto h = [&](const TD& x) {
    return tx::sum(tx::grad([&](const TD& y) { return tx::sum(x * y * y * tx::sin(x)); }, y0));
  };
  const auto x = TD::randn({3}, 32);
  expect_close_elementwise(tx::grad(h, x), y0 * 2.0 * (tx::sin(x) + x * tx::cos(x)));
  // The same through vjp and value_and_grad as the inner transform.
  auto hv = [&](const TD& xx) {
    auto [val, pb] = tx::vjp([&](const TD& y) { return y * y * xx; }, y0);
    return tx::sum(pb(TD::ones({3})));
  };
  expect_close_elementwise(tx::grad(hv, x), y0 * 2.0);
  auto hg = [&](const TD& xx) {
    return tx::value_and_grad([&](const TD& y) { return tx::sum(y * xx * xx); }, y0).first;
  };
  expect_close_elementwise(tx::grad(hg, x), y0 * x * 2.0);
  // At top level the inner transform still detaches (no tape is kept).
  const auto g = tx::grad([&](const TD& y) { return tx::sum(x * y * y); }, y0);
  EXPECT_FALSE(g.tracks_grad());
}

TEST(Transforms, InnerTransformOverTheVariableItClosesOver) {
  // The inner transform's argument and the closure are the same outer variable. The inner
  // derivative counts only the argument: h(x) = d/dy [x y] at y = x = x, so dh/dx = 1 (not 2,
  // which counting the closure's use too would give).
  const auto x = TD::scalar(3.0);
  auto h = [](const TD& xo) { return tx::grad([&](const TD& y) { return xo * y; }, xo); };
  EXPECT_DOUBLE_EQ(h(x).item(), 3.0);
  EXPECT_DOUBLE_EQ(tx::grad(h, x).item(), 1.0);
  auto hv = [](const TD& xo) {
    auto [val, pb] = tx::vjp([&](const TD& y) { return xo * y; }, xo);
    return pb(TD::scalar(1.0));
  };
  EXPECT_DOUBLE_EQ(tx::grad(hv, x).item(), 1.0);
  auto hj = [](const TD& xo) { return tx::jvp([&](const TD& y) { return xo * y; }, xo, TD::scalar(1.0)).second; };
  EXPECT_DOUBLE_EQ(tx::grad(hj, x).item(), 1.0);
  // h2(x) = d/dy [sum(sin(x) y^2)] at y = x = 2 sin(x) x: dh2/dx = 2 (cos(x) x + sin(x)).
  const auto v = TD::randn({3}, 41);
  auto h2 = [](const TD& xo) {
    return tx::sum(tx::grad([&](const TD& y) { return tx::sum(tx::sin(xo) * y * y); }, xo));
  };
  expect_close_elementwise(tx::grad(h2, v), 2.0 * (tx::cos(v) * v + tx::sin(v)));
  // A tape leaf as the argument and in the closure: d/dy [x y] = x, also at top level.
  const auto xl = x.requires_grad();
  const auto inner = tx::grad([&](const TD& y) { return xl * y; }, xl);
  EXPECT_DOUBLE_EQ(inner.item(), 3.0);
  // That result is recorded: differentiating it by x gives 1.
  inner.backward();
  EXPECT_DOUBLE_EQ(xl.grad().item(), 1.0);
}

TEST(Engine, BackwardWithCreateGraph) {
  // Tape style second order: backward(create_graph) records the backward pass, so the gradient
  // can be differentiated again.
  auto x = TD::randn({4}, 24);
  auto xl = x.requires_grad();
  auto y = tx::sum(tx::sin(xl) * xl);
  y.backward(TD::ones({}), /*create_graph=*/true);
  auto g = xl.grad();
  ASSERT_TRUE(g.defined());
  EXPECT_TRUE(g.tracks_grad());
  expect_close_elementwise(g, tx::cos(x) * x + tx::sin(x));
  xl.zero_grad();
  tx::sum(g).backward();
  expect_close_elementwise(xl.grad(), tx::cos(x) * 2.0 - tx::sin(x) * x);
  // Without create_graph the gradient is a constant.
  auto xm = x.requires_grad();
  tx::sum(tx::sin(xm) * xm).backward();
  EXPECT_FALSE(xm.grad().tracks_grad());
}

TEST(Engine, BackwardFromALeaf) {
  auto x = TD::scalar(2.0).requires_grad();
  x.backward();
  EXPECT_EQ(x.grad().item(), 1.0);
  x.backward(TD::scalar(3.0));
  EXPECT_EQ(x.grad().item(), 4.0);
  // grad of the identity.
  expect_close_elementwise(tx::grad([](const TD& a) { return a; }, TD::ones({1})), TD::ones({1}));
}

TEST(Engine, GradientsThroughViews) {
  auto base = TD::randn({4, 3}, 25);
  auto w = TD::randn({3, 2}, 26);
  auto x = base.requires_grad();
  // Slice rows 1..2, transpose, weight, and add a broadcast column of x.
  auto y = tx::sum(x.slice(0, 1, 3).mT() * w) + tx::sum(x.slice(1, 0, 1).expand({4, 5}));
  y.backward();
  auto ref = TD::zeros({4, 3});
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::int64_t j = 0; j < 3; ++j) ref.mutable_data()[(i + 1) + 4 * j] += w.at({j, i});
  for (std::int64_t i = 0; i < 4; ++i) ref.mutable_data()[i] += 5;
  expect_close_elementwise(x.grad(), ref);
  // reshape of a transposed (non-viewable) layout.
  auto x2 = base.requires_grad();
  auto v = TD::randn({12}, 27);
  tx::sum(x2.mT().reshape({12}) * v).backward();
  expect_close_elementwise(x2.grad(), v.reshape({3, 4}).mT());
}

TEST(Transforms, ComplexGradientConvention) {
  auto z = TZ::from_col_major({3}, {{1, 2}, {-0.5, 0.25}, {0, -3}});
  // L = sum |z|^2: dL/dRe + i dL/dIm = 2 Re z + 2i Im z = 2z.
  expect_close_elementwise(tx::grad([](const TZ& a) { return tx::sum(tx::square(tx::abs(a))); }, z), z * tx::c128(2));
  expect_close_elementwise(tx::grad([](const TZ& a) { return tx::sum(tx::abs(a) * tx::abs(a)); }, z), z * tx::c128(2));
  expect_close_elementwise(tx::grad([](const TZ& a) { return tx::sum(tx::real(a * tx::conj(a))); }, z),
                           z * tx::c128(2));
  // L = sum Re z -> 1; L = sum Im z -> i.
  expect_close_elementwise(tx::grad([](const TZ& a) { return tx::sum(tx::real(a)); }, z),
                           TZ::full({3}, tx::c128(1, 0)));
  expect_close_elementwise(tx::grad([](const TZ& a) { return tx::sum(tx::imag(a)); }, z),
                           TZ::full({3}, tx::c128(0, 1)));
  // L = sum Re(c z) for a complex constant c: dL/dRe = Re c, dL/dIm = -Im c, so grad = conj(c).
  const tx::c128 c(0.5, -2);
  expect_close_elementwise(tx::grad([&](const TZ& a) { return tx::sum(tx::real(a * c)); }, z),
                           TZ::full({3}, std::conj(c)));
}

TEST(Transforms, BadInputToGrad) {
  auto x = TD::ones({3});
  expect_error([&] { tx::grad([](const TD& a) { return a * 2.0; }, x); },
               "[grad] the function must return a one-element tensor, got shape [3]");
  expect_error([&] { tx::value_and_grad([](const TD& a) { return a; }, x); }, "[grad] the function must return");
  expect_error([&] { tx::grad([](const TD& a) { return tx::sum(tx::complex(a, a)); }, x); },
               "[grad] the function must return a real scalar, got c128");
  expect_error([&] { tx::grad([](const TZ& a) { return tx::sum(a); }, TZ::ones({2})); },
               "[grad] the function must return a real scalar, got c128");
  expect_error([&] { tx::grad([](const TD& a) { return tx::sum(a); }, TD()); }, "[grad] undefined input");
  // A one-element non-0-d result is accepted.
  expect_close_elementwise(tx::grad([](const TD& a) { return tx::sum(a, {0}, true); }, x), TD::ones({3}));
}

TEST(Transforms, BadInputToJvp) {
  auto x = TD::ones({2});
  auto f = [](const TD& a) { return tx::sin(a); };
  expect_error([&] { tx::jvp(f, x, TD::ones({3})); }, "[jvp] tangent of shape [3] on cpu for a primal of shape [2]");
  expect_error([&] { tx::jvp(f, x, TD::ones({2, 1})); }, "[jvp] tangent of shape [2, 1]");
  expect_error([&] { tx::jvp(f, x, TD()); }, "[jvp] tangent of shape undefined");
  // The nested path checks its tangent too.
  expect_error([&] { tx::jvp([&](const TD& a) { return tx::jvp(f, a, TD::ones({3})).second; }, x, TD::ones({2})); },
               "[jvp] tangent of shape [3]");
}

// Forward over forward: d2f[v, w] = d/de (J(x + e w) v).
TEST(Transforms, JvpOfJvp) {
  const auto x = TD::randn({5}, 40), v = TD::randn({5}, 41), w = TD::randn({5}, 42), u = TD::randn({5}, 43);
  // f = sin(x) x^2 elementwise: f'' = (2 - x^2) sin x + 4 x cos x.
  auto f = [](const TD& a) { return tx::sin(a) * a * a; };
  auto inner = [&](const TD& a) { return tx::jvp(f, a, v).second; };
  const auto [d1, d2] = tx::jvp(inner, x, w);
  expect_close_elementwise(d1, (tx::cos(x) * x * x + tx::sin(x) * x * 2.0) * v);
  expect_close_elementwise(d2, (tx::sin(x) * (2.0 - x * x) + tx::cos(x) * x * 4.0) * v * w, 1e-11);
  // Third order: f = exp: f''' = exp, so d3f[v, w, u] = exp(x) v w u.
  auto g2 = [&](const TD& a) {
    return tx::jvp([&](const TD& b) { return tx::jvp([](const TD& c) { return tx::exp(c); }, b, v).second; }, a, w)
        .second;
  };
  expect_close_elementwise(tx::jvp(g2, x, u).second, tx::exp(x) * v * w * u, 1e-11);
  // A scalar f: jvp of jvp is w^T H v, the same as the Hessian-vector product.
  auto h = [](const TD& a) { return tx::sum(a * a) * tx::sum(tx::sin(a)); };
  const double whv = tx::jvp([&](const TD& a) { return tx::jvp(h, a, v).second; }, x, w).second.item();
  EXPECT_NEAR(whv, dot(tx::hvp(h, x, v), w), 1e-11 * std::max(1.0, std::abs(whv)));
  // The inner function closes over the outer variable: the inner tangent must not see the outer
  // one (no perturbation confusion). d/da [jvp(z -> z a, z0, v)] = d/da (v a) = v.
  const auto z0 = TD::randn({5}, 44);
  const auto [va, dva] =
      tx::jvp([&](const TD& a) { return tx::jvp([&](const TD& z) { return z * a; }, z0, v).second; }, x, w);
  expect_close_elementwise(va, v * x);
  expect_close_elementwise(dva, v * w);
  // A result that does not depend on the inner input: zero inner tangent, and so zero outer one.
  const auto [c, dc] =
      tx::jvp([&](const TD& a) { return tx::jvp([&](const TD&) { return a * 2.0; }, a, v).second; }, x, w);
  expect_close_elementwise(c, TD::zeros({5}));
  expect_close_elementwise(dc, TD::zeros({5}));
  // The results hold values, not the inner passes' graphs, when nothing asks for a gradient; a
  // direction that requires grad gets one through the inner J dx.
  const auto [q, dq] = tx::jvp([&](const TD& a) { return tx::jvp(f, a, v).first; }, x, w);
  EXPECT_FALSE(q.tracks_grad());
  EXPECT_FALSE(dq.tracks_grad());
  const TD vr = v.requires_grad();
  const TD inner_dy = tx::jvp([&](const TD& a) { return tx::jvp(f, a, vr).second; }, x, w).first;
  ASSERT_TRUE(inner_dy.tracks_grad());
  tx::sum(inner_dy).backward();
  expect_close_elementwise(vr.grad(), tx::cos(x) * x * x + tx::sin(x) * x * 2.0);  // d/dv sum(f'(x) v) = f'(x)
}

TEST(Transforms, JvpOfJvpComplexAndLinalg) {
  // z z (holomorphic): d2 = 2 v w. z conj(z) (not holomorphic): d2 = v conj(w) + w conj(v).
  const auto z = TZ::randn({4}, 50), v = TZ::randn({4}, 51), w = TZ::randn({4}, 52);
  auto second = [&](auto&& f) { return tx::jvp([&](const TZ& a) { return tx::jvp(f, a, v).second; }, z, w).second; };
  expect_close_elementwise(second([](const TZ& a) { return a * a; }), v * w * tx::c128(2));
  expect_close_elementwise(second([](const TZ& a) { return a * tx::conj(a); }), v * tx::conj(w) + w * tx::conj(v));
  // det, eigvalsh and solve: the second directional derivative against central differences of
  // the first (computed by the one-level jvp). eigvalsh's derivative is defined for Hermitian
  // directions only (its rules assume them), so it gets symmetric ones.
  const auto A = TD::randn({4, 4}, 53) + TD::eye(4) * 4.0, V = TD::randn({4, 4}, 54), W = TD::randn({4, 4}, 55);
  const double h = 1e-5;
  auto check = [&](auto&& f, const TD& X, const TD& dv, const TD& dw) {
    auto first = [&](const TD& a) { return tx::jvp(f, a, dv).second; };
    const TD d2 = tx::jvp(first, X, dw).second;
    const TD fd = (first(X + dw * h) - first(X - dw * h)) * (0.5 / h);
    expect_close_elementwise(d2, fd, 1e-6);
  };
  check([](const TD& a) { return tx::linalg::det(a); }, A, V, W);
  check([](const TD& a) { return tx::linalg::eigvalsh(a); }, A + A.mT(), V + V.mT(), W + W.mT());
  check([](const TD& a) { return tx::linalg::solve(a, a.mT()); }, A, V, W);
}

TEST(Transforms, ReverseOverForward) {
  // g(x) = sum(J_f(x) v) for f(a) = exp(a) a, whose derivative is exp(a) (1 + a):
  // dg/dx = exp(x) (2 + x) v. The JVP rules run on tape-connected copies of the outputs, so the
  // dependence of the tangent on y = f(x) reaches x.
  const auto x = TD::from_col_major({3}, {0.1, 0.2, -0.3});
  const auto v = TD::from_col_major({3}, {1.0, -2.0, 0.5});
  const auto base = tx::allocator_stats().bytes_live;
  {
    auto g = tx::grad(
        [&](const TD& z) { return tx::sum(tx::jvp([](const TD& a) { return tx::exp(a) * a; }, z, v).second); }, x);
    for (int i = 0; i < 3; ++i) {
      const double xi = x.at({i}), vi = v.at({i});
      EXPECT_NEAR(g.at({i}), std::exp(xi) * (2 + xi) * vi, 1e-13);
    }
    // A rule that reads a recorded input and the output (rdiv: dy = -(y / a) da).
    auto h = tx::grad(
        [&](const TD& z) { return tx::sum(tx::jvp([](const TD& a) { return tx::rdiv(a, 3.0); }, z, v).second); }, x);
    for (int i = 0; i < 3; ++i) {
      const double xi = x.at({i}), vi = v.at({i});
      EXPECT_NEAR(h.at({i}), 6.0 * vi / (xi * xi * xi), 1e-10);
    }
  }
  // No reference cycle between a tangent's graph and the output holding it: everything is freed.
  EXPECT_EQ(tx::allocator_stats().bytes_live, base);
}

// Reverse over forward over reverse: the gradient of a function of Hessian-vector products, for
// ops whose rules read their own outputs (exp, tanh, sqrt, sigmoid, inv, eigvalsh) against
// central differences of that function. The outermost pass reaches the input through the tangent
// of each saved output. Nothing stays alive afterwards (no reference cycle).
TEST(Transforms, GradOfHvpThroughRulesThatReadOutputs) {
  const auto base = tx::allocator_stats().bytes_live;
  {
    auto check = [](auto&& f, const TD& x, std::uint64_t seed, double tol) {
      const auto v = TD::randn(x.shape(), seed), w = TD::randn(x.shape(), seed + 1);
      auto g = [&](const TD& z) { return tx::sum(tx::hvp(f, z, v) * w); };
      const TD gx = tx::grad(g, x);
      const auto dx = TD::randn(x.shape(), seed + 2);
      const double h = 1e-5;
      const double fd = (g(x + dx * h).item() - g(x - dx * h).item()) / (2 * h);
      const double an = tx::sum(gx * dx).item();
      EXPECT_NEAR(an, fd, tol * std::max(1.0, std::abs(fd)));
    };
    const auto x = TD::from_col_major({3}, {0.3, -0.7, 1.1});
    const auto xp = TD::from_col_major({3}, {0.6, 1.7, 2.3});
    check([](const TD& a) { return tx::sum(tx::exp(a)); }, x, 60, 1e-7);
    check([](const TD& a) { return tx::sum(tx::tanh(a) * a); }, x, 63, 1e-7);
    check([](const TD& a) { return tx::sum(tx::sigmoid(a * a)); }, x, 66, 1e-7);
    check([](const TD& a) { return tx::sum(tx::sqrt(a) * tx::exp(a)); }, xp, 69, 1e-7);
    const auto A = TD::randn({3, 3}, 72) + TD::eye(3) * 3.0, C = TD::randn({3, 3}, 73);
    check([&](const TD& a) { return tx::sum(tx::linalg::inv(a) * C); }, A, 74, 1e-6);
    check(
        [](const TD& a) {
          const TD e = tx::linalg::eigvalsh(a + a.mT());
          return tx::sum(e * e * e);
        },
        A, 77, 1e-6);
  }
  EXPECT_EQ(tx::allocator_stats().bytes_live, base);
}
