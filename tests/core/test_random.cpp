// The counter-based generator and the random ops: Philox4x32-10 against Random123's known answers,
// reproducibility (element i depends only on seed, offset and i: split calls, thread counts),
// statistics of every distribution, randperm, the default generator, thread safety, the refusal
// to trace, and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <numeric>
#include <thread>
#include <vector>

#include <tenax/tenax.hpp>

#include "support/messages.hpp"

namespace tx = tenax;
using tx::testing::expect_error;

namespace {

using TD = tx::Tensor<double>;

struct BudgetGuard {
  int saved = tx::num_threads();
  ~BudgetGuard() { tx::set_num_threads(saved); }
};

template <class V>
double mean_of(const V& v) {
  double s = 0;
  for (auto x : v) s += static_cast<double>(x);
  return s / static_cast<double>(v.size());
}
template <class V>
double var_of(const V& v) {
  const double m = mean_of(v);
  double s = 0;
  for (auto x : v) s += (static_cast<double>(x) - m) * (static_cast<double>(x) - m);
  return s / static_cast<double>(v.size() - 1);
}

TEST(Philox, KnownAnswers) {
  // Random123's kat_vectors for philox4x32 with 10 rounds.
  const tx::fn::Philox4 a = tx::fn::philox4x32_10({{0, 0, 0, 0}}, 0, 0);
  EXPECT_EQ(std::vector<std::uint32_t>(a.v, a.v + 4),
            (std::vector<std::uint32_t>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  const std::uint32_t f = 0xffffffffu;
  const tx::fn::Philox4 b = tx::fn::philox4x32_10({{f, f, f, f}}, f, f);
  EXPECT_EQ(std::vector<std::uint32_t>(b.v, b.v + 4),
            (std::vector<std::uint32_t>{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  const tx::fn::Philox4 c =
      tx::fn::philox4x32_10({{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}}, 0xa4093822, 0x299f31d0);
  EXPECT_EQ(std::vector<std::uint32_t>(c.v, c.v + 4),
            (std::vector<std::uint32_t>{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(Random, ElementIDependsOnlyOnSeedOffsetAndI) {
  tx::Generator g(42);
  const std::vector<double> all = tx::rand<double>({1000}, g).to_vector();
  EXPECT_EQ(g.offset(), 1000u);
  EXPECT_EQ(g.seed(), 42u);
  // The same numbers in two calls: the second starts where the first stopped.
  tx::Generator h(42);
  std::vector<double> split = tx::rand<double>({10, 40}, h).to_vector();
  const std::vector<double> rest = tx::rand<double>({600}, h).to_vector();
  split.insert(split.end(), rest.begin(), rest.end());
  EXPECT_EQ(split, all);
  // Element i is the block at counter offset + i: the words' top bits, exactly.
  const tx::fn::Philox4 b = tx::fn::philox4x32_10({{7, 0, 0, 0}}, 42, 0);
  EXPECT_EQ(all[7], tx::fn::unit_double(b.v[0], b.v[1]));
  tx::Generator k(42);
  k.set_offset(7);
  EXPECT_EQ(tx::rand<float>({1}, k).item(), static_cast<float>(b.v[0] >> 8) * 0x1p-24f);
  // Restoring the state replays; copies are independent streams at the same state.
  h.set_offset(400);
  EXPECT_EQ(tx::rand<double>({600}, h).to_vector(), rest);
  tx::Generator copy = g;
  EXPECT_EQ(tx::randn<double>({5}, copy).to_vector(), tx::randn<double>({5}, g).to_vector());
  // Another seed, other numbers; manual_seed restarts the stream.
  tx::Generator other(43);
  EXPECT_NE(tx::rand<double>({1000}, other).to_vector(), all);
  other.manual_seed(42);
  EXPECT_EQ(other.offset(), 0u);
  EXPECT_EQ(tx::rand<double>({1000}, other).to_vector(), all);
}

TEST(Random, ValuesDoNotDependOnTheThreadCount) {
  BudgetGuard guard;
  const tx::Shape s{300, 250};  // above the parallel threshold
  std::vector<std::vector<double>> u, n, c;
  std::vector<std::vector<std::int64_t>> r;
  for (int threads : {1, 2, 4}) {
    tx::set_num_threads(threads);
    tx::Generator g(5);
    u.push_back(tx::rand<double>(s, g).to_vector());
    n.push_back(tx::randn<double>(s, g).to_vector());
    const auto z = tx::randn<tx::c64>(s, g);
    c.push_back(tx::cast<double>(tx::real(z)).to_vector());
    r.push_back(tx::randint(-5, 1000, s, g).to_vector());
  }
  for (std::size_t k = 1; k < u.size(); ++k) {
    EXPECT_EQ(u[k], u[0]);
    EXPECT_EQ(n[k], n[0]);
    EXPECT_EQ(c[k], c[0]);
    EXPECT_EQ(r[k], r[0]);
  }
}

TEST(Random, UniformAndNormalStatistics) {
  tx::Generator g(1);
  const tx::Shape s{100000};
  const auto u = tx::rand<double>(s, g).to_vector();
  EXPECT_GE(*std::min_element(u.begin(), u.end()), 0.0);
  EXPECT_LT(*std::max_element(u.begin(), u.end()), 1.0);
  EXPECT_NEAR(mean_of(u), 0.5, 0.005);
  EXPECT_NEAR(var_of(u), 1.0 / 12, 0.002);
  const auto uf = tx::rand<float>(s, g).to_vector();
  EXPECT_LT(*std::max_element(uf.begin(), uf.end()), 1.0f);
  EXPECT_NEAR(mean_of(uf), 0.5, 0.005);
  const auto n = tx::randn<double>(s, g).to_vector();
  EXPECT_NEAR(mean_of(n), 0.0, 0.015);
  EXPECT_NEAR(var_of(n), 1.0, 0.02);
  for (double x : n) ASSERT_TRUE(std::isfinite(x));
  const auto nf = tx::randn<float>(s, g).to_vector();
  EXPECT_NEAR(mean_of(nf), 0.0, 0.015);
  EXPECT_NEAR(var_of(nf), 1.0, 0.02);
  // Complex normal: each part N(0, 1/2), uncorrelated; complex uniform: both parts in [0, 1).
  const auto z = tx::randn<tx::c128>(s, g);
  const auto re = tx::real(z).to_vector(), im = tx::imag(z).to_vector();
  EXPECT_NEAR(var_of(re), 0.5, 0.01);
  EXPECT_NEAR(var_of(im), 0.5, 0.01);
  EXPECT_NEAR(mean_of(tx::mul(tx::real(z), tx::imag(z)).to_vector()), 0.0, 0.01);
  const auto cu = tx::rand<tx::c64>(s, g);
  EXPECT_NEAR(mean_of(tx::imag(cu).to_vector()), 0.5, 0.005);
  EXPECT_NEAR(mean_of(tx::real(cu).to_vector()), 0.5, 0.005);
  // uniform(lo, hi), normal(mean, std).
  const auto a = tx::uniform(-3.0, 5.0, s, g).to_vector();
  EXPECT_GE(*std::min_element(a.begin(), a.end()), -3.0);
  EXPECT_LT(*std::max_element(a.begin(), a.end()), 5.0);
  EXPECT_NEAR(mean_of(a), 1.0, 0.04);
  EXPECT_NEAR(var_of(a), 64.0 / 12, 0.15);
  const auto b = tx::normal(2.0f, 0.5f, s, g).to_vector();
  EXPECT_NEAR(mean_of(b), 2.0, 0.01);
  EXPECT_NEAR(var_of(b), 0.25, 0.005);
  EXPECT_EQ(tx::normal(1.5, 0.0, {3}, g).to_vector(), (std::vector<double>{1.5, 1.5, 1.5}));
}

TEST(Random, RandintRangeAndBuckets) {
  tx::Generator g(2);
  const auto v = tx::randint(-3, 7, {100000}, g).to_vector();
  std::vector<std::int64_t> count(10, 0);
  for (auto x : v) {
    ASSERT_GE(x, -3);
    ASSERT_LT(x, 7);
    ++count[static_cast<std::size_t>(x + 3)];
  }
  // Each bucket: 10000 expected, sd ~95; 6 sd.
  for (auto c : count) EXPECT_NEAR(static_cast<double>(c), 10000.0, 570.0);
  // A range that is not a power of two and close to 2^63 (rejection at rate ~1/4 per draw).
  const std::int64_t big = (std::int64_t{3} << 61);
  const auto w = tx::randint(0, big, {20000}, g).to_vector();
  std::int64_t above = 0;
  for (auto x : w) {
    ASSERT_GE(x, 0);
    ASSERT_LT(x, big);
    above += x >= big / 2;
  }
  EXPECT_NEAR(static_cast<double>(above), 10000.0, 500.0);
  // The whole int64 range and int32.
  const auto all =
      tx::randint(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(), {1000}, g)
          .to_vector();
  EXPECT_LT(std::count_if(all.begin(), all.end(), [](std::int64_t x) { return x < 0; }), 600);
  EXPECT_GT(std::count_if(all.begin(), all.end(), [](std::int64_t x) { return x < 0; }), 400);
  const auto i32 = tx::randint<std::int32_t>(5, 6, {50}, g).to_vector();
  EXPECT_EQ(i32, std::vector<std::int32_t>(50, 5));
  EXPECT_EQ(tx::randint(0, 2, {0, 3}, g).shape(), (tx::Shape{0, 3}));
}

TEST(Random, Bernoulli) {
  tx::Generator g(3);
  const TD p = TD::from_col_major({4}, {0.0, 0.25, 0.9, 1.0});
  const TD ps = tx::broadcast_to(tx::reshape(p, {4, 1}), {4, 20000}).contiguous();
  const TD b = tx::bernoulli(ps, g);
  const auto m = tx::mean(b, {1}).to_vector();
  EXPECT_EQ(m[0], 0.0);
  EXPECT_NEAR(m[1], 0.25, 0.015);
  EXPECT_NEAR(m[2], 0.9, 0.01);
  EXPECT_EQ(m[3], 1.0);
  for (double x : b.to_vector()) ASSERT_TRUE(x == 0.0 || x == 1.0);
  const auto mask = tx::bernoulli<bool>(0.3, {100000}, g).to_vector();
  EXPECT_NEAR(static_cast<double>(std::count(mask.begin(), mask.end(), true)), 30000.0, 900.0);
  EXPECT_NEAR(mean_of(tx::bernoulli<float>(0.7, {100000}, g).to_vector()), 0.7, 0.01);
}

TEST(Random, RandpermIsAPermutation) {
  tx::Generator g(4);
  const auto p = tx::randperm(1000, g).to_vector();
  std::vector<std::int64_t> sorted = p, iota(1000);
  std::sort(sorted.begin(), sorted.end());
  std::iota(iota.begin(), iota.end(), 0);
  EXPECT_EQ(sorted, iota);
  EXPECT_NE(p, iota);
  EXPECT_EQ(g.offset(), 1000u);
  tx::Generator h(4);
  EXPECT_EQ(tx::randperm(1000, h).to_vector(), p);
  EXPECT_EQ(tx::randperm<std::int32_t>(0, g).shape(), (tx::Shape{0}));
  EXPECT_EQ(tx::randperm<std::int32_t>(1, g).to_vector(), (std::vector<std::int32_t>{0}));
  // Every position is uniform: over 3000 permutations of 4, each value lands at position 0 ~750 times.
  std::vector<int> first(4, 0);
  for (int k = 0; k < 3000; ++k) ++first[static_cast<std::size_t>(tx::randperm(4, g).to_vector()[0])];
  for (int c : first) EXPECT_NEAR(c, 750, 120);
}

TEST(Random, DefaultGeneratorAndThreadSafety) {
  tx::manual_seed(5);
  EXPECT_EQ(tx::default_generator().seed(), 5u);
  const auto a = tx::rand<double>({10}).to_vector();
  const auto an = tx::randn<double>({3}).to_vector();
  tx::manual_seed(5);
  EXPECT_EQ(tx::rand<double>({10}).to_vector(), a);
  EXPECT_EQ(tx::randn<double>({3}).to_vector(), an);
  // Concurrent calls reserve disjoint counter ranges: together they draw the stream's first 4000
  // numbers, each once.
  tx::Generator g(9);
  std::vector<std::vector<double>> got(4);
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&, t] {
      for (int k = 0; k < 100; ++k) {
        const auto v = tx::rand<double>({10}, g).to_vector();
        got[static_cast<std::size_t>(t)].insert(got[static_cast<std::size_t>(t)].end(), v.begin(), v.end());
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(g.offset(), 4000u);
  std::vector<double> all;
  for (const auto& v : got) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  tx::Generator h(9);
  auto want = tx::rand<double>({4000}, h).to_vector();
  std::sort(want.begin(), want.end());
  EXPECT_EQ(all, want);
}

TEST(Random, TracingIsRefused) {
  tx::Generator g(6);
  const TD x = TD::ones({3});
  expect_error([&] { (void)tx::trace([&](const TD& v) { return tx::add(v, tx::rand<double>({3}, g)); }, x); },
               "[rand] random ops cannot be traced");
  expect_error([&] { (void)tx::trace([&](const TD& v) { return tx::bernoulli(v, g); }, x); }, "[rand]");
  expect_error([&] { (void)tx::trace([&](const TD& v) { return tx::add(v, tx::randn<double>({3}, g)); }, x); },
               "[randn]");
  EXPECT_EQ(g.offset(), 0u);  // refused calls consume nothing
}

TEST(Random, Errors) {
  tx::Generator g(7);
  expect_error([&] { tx::randint(3, 3, {2}, g); }, "[randint] empty range [3, 3)");
  expect_error([&] { tx::randint<std::int32_t>(0, std::int64_t{1} << 40, {2}, g); }, "[randint]", {"int32"});
  expect_error([&] { tx::uniform(2.0, 1.0, {2}, g); }, "[uniform]", {"low 2", "high 1"});
  expect_error([&] { tx::normal(0.0, -1.0, {2}, g); }, "[normal]", {"std -1"});
  expect_error([&] { tx::bernoulli<bool>(1.5, {2}, g); }, "[bernoulli]", {"1.5"});
  expect_error([&] { tx::randperm(-1, g); }, "[randperm]", {"-1"});
  expect_error([&] { tx::rand<double>({2, -1}, g); }, "[rand]");
  expect_error([&] { tx::bernoulli(TD(), g); }, "[bernoulli]");
#if !TENAX_HAS_CUDA
  expect_error([&] { tx::randn<double>({2}, g, tx::Device::cuda(0)); }, "[randn]", {"cuda"});
#endif
  EXPECT_EQ(g.offset(), 0u);
}

}  // namespace
