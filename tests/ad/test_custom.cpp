// Custom rules (custom_op, custom_vjp, custom_jvp) and checkpoint: the gradient harness on each
// (including a deliberately wrong rule, which it must catch), rules derived by transposition,
// several inputs and outputs, traced == compiled == eager, checkpoint == no checkpoint bit for bit,
// its peak-memory saving, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include <tenax/tenax.hpp>

#include "support/expect.hpp"
#include "support/failures.hpp"
#include "support/gradcheck.hpp"
#include "support/messages.hpp"
#include "trace/trace_support.hpp"

namespace tx = tenax;
using tx::testing::expect_ad;
using tx::testing::expect_close;
using tx::testing::expect_error;
using tx::testing::failures_of;

namespace {

using TD = tx::Tensor<double>;

// Stable log-sum-exp of all elements: m + log(sum(exp(x - m))); its derivative is softmax(x).
auto lse_forward = [](const auto& x) { return tx::add(tx::max(x), tx::log(tx::sum(tx::exp(tx::sub(x, tx::max(x)))))); };
auto lse_jvp = [](const auto& x, const auto& y, const auto& dx) {
  return tx::sum(tx::mul(tx::exp(tx::sub(x, y)), dx));
};
auto lse_vjp = [](const auto& x, const auto& y, const auto& g) { return tx::mul(tx::exp(tx::sub(x, y)), g); };

const auto lse = tx::custom_op("logsumexp", lse_forward, lse_jvp, lse_vjp);
const auto lse_v = tx::custom_vjp("logsumexp_v", lse_forward, lse_vjp);
const auto lse_j = tx::custom_jvp("logsumexp_j", lse_forward, lse_jvp);

TEST(Custom, LogSumExpIsStableAndPassesTheHarness) {
  const TD big = TD::from_col_major({2}, {1000.0, 1000.0});
  EXPECT_NEAR(lse(big).item(), 1000.0 + std::log(2.0), 1e-12);
  const TD g = tx::grad([](const TD& x) { return lse(x); }, big);
  EXPECT_NEAR(g.to_vector()[0], 0.5, 1e-12);
  EXPECT_NEAR(g.to_vector()[1], 0.5, 1e-12);
  const TD x = TD::randn({3, 2}, 1);
  EXPECT_NEAR(lse(x).item(), std::log(tx::sum(tx::exp(x)).item()), 1e-14);
  expect_ad([](const auto& v) { return lse(v); }, x);
}

TEST(Custom, OneRuleGivenTheOtherTransposed) {
  const TD x = TD::randn({4}, 2);
  expect_ad([](const auto& v) { return lse_v(v); }, x);  // jvp, hvp: the vjp rule transposed
  expect_ad([](const auto& v) { return lse_j(v); }, x);  // vjp, grad: the jvp rule transposed
  // Each agrees with the full custom op to rounding.
  const TD d = TD::randn({4}, 3);
  auto f = [](const auto& op) { return [&op](const TD& v) { return tx::mul(op(v), op(tx::mul(v, v))); }; };
  expect_close(tx::jvp(f(lse_v), x, d).second, tx::jvp(f(lse), x, d).second, 1e-14, "custom_vjp's jvp");
  expect_close(tx::grad(f(lse_j), x), tx::grad(f(lse), x), 1e-14, "custom_jvp's grad");
  expect_close(tx::hvp(f(lse_j), x, d), tx::hvp(f(lse), x, d), 1e-13, "custom_jvp's hvp");
  expect_close(tx::hvp(f(lse_v), x, d), tx::hvp(f(lse), x, d), 1e-13, "custom_vjp's hvp");
}

TEST(Custom, ComplexRulesAndTheirTranspositions) {
  // exp with its rules in tenax's complex convention (the VJP conjugates the derivative), and each
  // rule alone with the other transposed: the harness checks all three on complex input.
  auto fwd = [](const auto& z) { return tx::exp(z); };
  auto jvp = [](const auto&, const auto& y, const auto& dz) { return tx::mul(dz, y); };
  auto vjp = [](const auto&, const auto& y, const auto& g) { return tx::mul(g, tx::conj(y)); };
  const auto both = tx::custom_op("cexp", fwd, jvp, vjp);
  const auto from_vjp = tx::custom_vjp("cexp_v", fwd, vjp);
  const auto from_jvp = tx::custom_jvp("cexp_j", fwd, jvp);
  const auto z = tx::Tensor<tx::c128>::randn({3}, 26);
  expect_ad([&](const auto& v) { return both(v); }, z);
  expect_ad([&](const auto& v) { return from_vjp(v); }, z);
  expect_ad([&](const auto& v) { return from_jvp(v); }, z);
}

TEST(Custom, TheHarnessCatchesAWrongRule) {
  const auto bad =
      tx::custom_op("logsumexp_bad_vjp", lse_forward, lse_jvp, [](const auto& x, const auto& y, const auto& g) {
        return tx::mul(tx::mul(tx::exp(tx::sub(x, y)), g), tx::testing::lit(x, 2.0));
      });
  const std::string f = failures_of([&] { expect_ad([&](const auto& v) { return bad(v); }, TD::randn({3}, 4)); });
  EXPECT_NE(f.find("(b) Re<W, J dx>"), std::string::npos) << f;
}

TEST(Custom, ImplicitFunctionDerivative) {
  // y solves y^3 + y = a elementwise (Newton's iterations, not differentiated); dy/da = 1 / (3 y^2 + 1).
  const auto solve_cubic = tx::custom_vjp(
      "solve_cubic",
      [](const auto& a) {
        auto y = a;
        for (int i = 0; i < 60; ++i) {
          const auto r = tx::sub(tx::add(tx::mul(tx::mul(y, y), y), y), a);
          y = tx::sub(y,
                      tx::div(r, tx::add(tx::mul(tx::mul(y, y), tx::testing::lit(y, 3.0)), tx::testing::lit(y, 1.0))));
        }
        return y;
      },
      [](const auto&, const auto& y, const auto& g) {
        return tx::div(g, tx::add(tx::mul(tx::mul(y, y), tx::testing::lit(y, 3.0)), tx::testing::lit(y, 1.0)));
      });
  const TD a = TD::randn({5}, 5);
  const TD y = solve_cubic(a);
  expect_close(tx::add(tx::mul(tx::mul(y, y), y), y), a, 1e-14, "residual");
  expect_ad([&](const auto& v) { return solve_cubic(v); }, a);
}

TEST(Custom, StraightThroughEstimator) {
  const auto ste = tx::custom_vjp(
      "sign_ste", [](const auto& x) { return tx::sign(x); }, [](const auto&, const auto&, const auto& g) { return g; });
  const TD x = TD::randn({4}, 6);
  EXPECT_EQ(tx::grad([&](const TD& v) { return tx::sum(ste(v)); }, x).to_vector(), std::vector<double>(4, 1.0));
}

TEST(Custom, SeveralInputsAndOutputs) {
  // (a b, a + b) with its rules, against the same function built from ops.
  const auto two = tx::custom_op(
      "two",
      [](const TD& a, const TD& b) {
        return std::tuple{tx::mul(a, b), tx::add(a, b)};
      },
      [](const TD& a, const TD& b, const std::tuple<TD, TD>&, const TD& da, const TD& db) {
        return std::tuple{tx::add(tx::mul(da, b), tx::mul(a, db)), tx::add(da, db)};
      },
      [](const TD& a, const TD& b, const std::tuple<TD, TD>&, const std::tuple<TD, TD>& g) {
        const auto& [g0, g1] = g;
        return std::tuple{tx::add(tx::mul(g0, b), g1), tx::add(tx::mul(g0, a), g1)};
      });
  auto built = [](const TD& a, const TD& b) { return std::tuple{tx::mul(a, b), tx::add(a, b)}; };
  const TD a = TD::randn({3}, 7), b = TD::randn({3}, 8), g0 = TD::randn({3}, 9), g1 = TD::randn({3}, 10);
  const auto p = tx::vjp(two, a, b).second(std::tuple{g0, g1});
  const auto q = tx::vjp(built, a, b).second(std::tuple{g0, g1});
  tx::ttest::expect_bitwise(p, q, "vjp");
  const auto t = tx::jvp(two, std::tuple{a, b}, std::tuple{g0, TD()}).second;
  const auto u = tx::jvp(built, std::tuple{a, b}, std::tuple{g0, TD()}).second;
  expect_close(std::get<0>(t), std::get<0>(u), 1e-15, "jvp 0");
  expect_close(std::get<1>(t), std::get<1>(u), 1e-15, "jvp 1");
  // Only one output used: the other's cotangent reaches the rule as zeros.
  const TD ga = tx::grad([&](const TD& v) { return tx::sum(std::get<1>(two(v, b))); }, a);
  EXPECT_EQ(ga.to_vector(), std::vector<double>(3, 1.0));
}

// A JVP rule that returns the output it read as that output's tangent (here exp's, for the
// tangent of ones): the rule reads the outputs themselves in a plain JVP (no copies), so the
// tangent must be a copy of the output, not the output's own body (a reference cycle).
TEST(Custom, AJvpRuleReturningItsOutput) {
  const auto exp_y = tx::custom_jvp(
      "exp_y", [](const auto& x) { return tx::exp(x); }, [](const auto&, const auto& y, const auto&) { return y; });
  const TD x = TD::randn({3}, 7);
  const TD ones = TD::ones({3});
  const auto [y, t] = tx::jvp([&](const TD& v) { return exp_y(v); }, x, ones);
  EXPECT_EQ(t.to_vector(), tx::exp(x).to_vector());
  EXPECT_EQ(y.to_vector(), tx::exp(x).to_vector());
  // Inside the function: the output's tangent is not the output itself.
  bool checked = false;
  (void)tx::jvp(
      [&](const TD& v) {
        TD o = exp_y(v);
        EXPECT_TRUE(o.impl()->tangent);
        EXPECT_NE(o.impl()->tangent.get(), o.impl().get());
        checked = true;
        return o;
      },
      x, ones);
  EXPECT_TRUE(checked);
}

TEST(Custom, TracedAndCompiled) {
  const TD x0 = TD::randn({3, 2}, 11), x1 = TD::randn({3, 2}, 12);
  auto loss = [](const TD& v) { return tx::mul(lse(tx::sin(v)), 2.0); };
  EXPECT_NE(tx::trace(loss, x0).str().find("logsumexp"), std::string::npos) << tx::trace(loss, x0).str();
  tx::ttest::expect_compiled_matches_eager(
      "grad through a custom op", [&](const TD& v) { return tx::grad(loss, v); }, std::tuple{x0}, std::tuple{x1});
  auto loss_j = [](const TD& v) { return tx::mul(lse_j(tx::sin(v)), 2.0); };
  tx::ttest::expect_compiled_matches_eager(
      "grad through a transposed jvp rule", [&](const TD& v) { return tx::grad(loss_j, v); }, std::tuple{x0},
      std::tuple{x1});
  const auto p = tx::compile(tx::grad(tx::trace(loss, x0)));
  tx::ttest::expect_bitwise(p(x1), tx::grad(loss, x1), "compile(grad(trace))");
}

// ---- checkpoint ----

TD layer(const TD& W, const TD& x) { return tx::tanh(tx::matmul(W, x)); }

TEST(Checkpoint, SameGradientsBitForBit) {
  const TD W0 = TD::randn({4, 4}, 13), W1 = TD::randn({4, 4}, 14), W2 = TD::randn({4, 4}, 15),
           W3 = TD::randn({4, 4}, 16), x = TD::randn({4, 3}, 17);
  auto plain = [](const TD& a, const TD& b, const TD& c, const TD& d, const TD& v) {
    return tx::sum(tx::square(layer(d, layer(c, layer(b, layer(a, v))))));
  };
  auto seg = [](const TD& p, const TD& q, const TD& v) { return layer(q, layer(p, v)); };
  auto ckpt = [&](const TD& a, const TD& b, const TD& c, const TD& d, const TD& v) {
    return tx::sum(tx::square(tx::checkpoint(seg, c, d, tx::checkpoint(seg, a, b, v))));
  };
  tx::ttest::expect_bitwise(tx::grad(ckpt, W0, W1, W2, W3, x), tx::grad(plain, W0, W1, W2, W3, x), "grad");
  // Forward mode and second order through it.
  auto f1 = [&](const TD& v) { return ckpt(W0, W1, W2, W3, v); };
  auto f0 = [&](const TD& v) { return plain(W0, W1, W2, W3, v); };
  const TD d = TD::randn({4, 3}, 18);
  tx::ttest::expect_bitwise(tx::jvp(f1, x, d).second, tx::jvp(f0, x, d).second, "jvp");
  expect_close(tx::hvp(f1, x, d), tx::hvp(f0, x, d), 1e-14, "hvp");
  const TD H1 = tx::hessian(f1, x), H0 = tx::hessian(f0, x);
  expect_close(H1, H0, 1e-14, "hessian");
  expect_ad([&](const auto& v) { return tx::checkpoint([](const auto& u) { return tx::sin(tx::mul(u, u)); }, v); },
            TD::randn({3}, 19));
}

TEST(Checkpoint, LowersPeakMemory) {
  // 16 layers of 128 x 128 on a 128 x 64 input; checkpointed in segments of 4.
  std::vector<TD> Ws;
  for (int i = 0; i < 16; ++i) Ws.push_back(tx::mul(TD::randn({128, 128}, 100 + static_cast<std::uint64_t>(i)), 0.1));
  auto chain = [&](const TD& x, int from, int to) {
    TD h = x;
    for (int i = from; i < to; ++i) h = layer(Ws[static_cast<std::size_t>(i)], h);
    return h;
  };
  auto plain = [&](const TD& x) { return tx::sum(tx::square(chain(x, 0, 16))); };
  auto ckpt = [&](const TD& x) {
    TD h = x;
    for (int s = 0; s < 16; s += 4) h = tx::checkpoint([&, s](const TD& v) { return chain(v, s, s + 4); }, h);
    return tx::sum(tx::square(h));
  };
  const TD x = TD::randn({128, 64}, 20);
  auto peak_of = [&](auto f) {
    tx::reset_allocator_stats();
    const std::int64_t before = tx::allocator_stats().bytes_live;
    const TD g = tx::grad(f, x);
    return std::pair{tx::allocator_stats().bytes_peak - before, g};
  };
  const auto [p0, g0] = peak_of(plain);
  const auto [p1, g1] = peak_of(ckpt);
  tx::ttest::expect_bitwise(g1, g0, "gradient");
  std::printf("peak bytes of grad: without checkpoint %lld, with %lld (%.2f)\n", static_cast<long long>(p0),
              static_cast<long long>(p1), static_cast<double>(p1) / static_cast<double>(p0));
  EXPECT_LT(static_cast<double>(p1), 0.6 * static_cast<double>(p0));
}

TEST(Checkpoint, TracedAndCompiled) {
  const TD W = TD::randn({3, 3}, 21), x0 = TD::randn({3, 2}, 22), x1 = TD::randn({3, 2}, 23);
  auto loss = [&](const TD& v) {
    return tx::sum(tx::square(tx::checkpoint([&](const TD& u) { return layer(W, layer(W, u)); }, v)));
  };
  tx::ttest::expect_compiled_matches_eager(
      "grad through checkpoint", [&](const TD& v) { return tx::grad(loss, v); }, std::tuple{x0}, std::tuple{x1});
  EXPECT_NE(tx::trace(loss, x0).str().find("checkpoint"), std::string::npos);
}

TEST(Checkpoint, ClosureOverATrackedTensorRaises) {
  const TD W = TD::randn({3, 3}, 24).requires_grad(), x = TD::randn({3, 2}, 25);
  auto loss = [&](const TD& v) { return tx::sum(tx::checkpoint([&](const TD& u) { return layer(W, u); }, v)); };
  expect_error([&] { tx::grad(loss, x); },
               "[checkpoint] the function reads a tensor that requires grad and is not one of its arguments");
}

}  // namespace
