// The pooled CPU allocator: live-byte accounting, zero system allocations in steady state,
// alignment, releasing the cache, and concurrent use.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include <tenax/tenax.hpp>

namespace tx = tenax;

namespace {

using TD = tx::Tensor<double>;

// y = exp(x) * x + 1 with a reverse pass into x.grad().
void step(const TD& x) {
  x.zero_grad();
  auto y = tx::sum(tx::exp(x) * x + 1.0);
  y.backward();
}

}  // namespace

TEST(Allocator, BytesLiveReturnsToBaseline) {
  const auto before = tx::allocator_stats();
  {
    auto a = TD::randn({64, 64}, 1);
    auto b = tx::Tensor<tx::c128>::zeros({1000});
    auto c = tx::matmul(a, a.mT()) + 1.0;
    const auto during = tx::allocator_stats();
    EXPECT_GE(during.bytes_live - before.bytes_live,
              static_cast<std::int64_t>(2 * 64 * 64 * sizeof(double) + 1000 * sizeof(tx::c128)));
    EXPECT_GE(during.bytes_peak, during.bytes_live);
  }
  EXPECT_EQ(tx::allocator_stats().bytes_live, before.bytes_live);
  {
    // A recorded graph (tape nodes, saved tensors, the leaf's gradient) is freed with its tensors.
    auto x = TD::randn({10, 10}, 2).requires_grad();
    auto y = tx::sum(tx::sin(x) * tx::exp(x) / (x * x + 1.0));
    y.backward();
    EXPECT_TRUE(x.grad().defined());
    EXPECT_GT(tx::allocator_stats().bytes_live, before.bytes_live);
  }
  EXPECT_EQ(tx::allocator_stats().bytes_live, before.bytes_live);
  {
    auto x = TD::randn({5}, 3);
    auto h = tx::hvp([](const TD& z) { return tx::sum(z * z * z); }, x, TD::ones({5}));
    EXPECT_EQ(h.shape(), (tx::Shape{5}));
  }
  EXPECT_EQ(tx::allocator_stats().bytes_live, before.bytes_live);
}

TEST(Allocator, SteadyStateLoopMakesNoSystemAllocations) {
  auto x = TD::randn({32, 16}, 5).requires_grad();
  step(x);  // one warm-up iteration fills the pool's free lists
  const auto before = tx::allocator_stats();
  for (int i = 0; i < 1000; ++i) step(x);
  const auto after = tx::allocator_stats();
  EXPECT_EQ(after.system_allocs - before.system_allocs, 0);
  EXPECT_EQ(after.pool_misses - before.pool_misses, 0);
  EXPECT_GT(after.pool_hits - before.pool_hits, 1000);
  EXPECT_EQ(after.system_frees - before.system_frees, 0);
  // The loop holds nothing across iterations beyond x's gradient.
  EXPECT_EQ(after.bytes_live, before.bytes_live);
  // And computes the right thing: d/dx (exp(x) x + 1) = exp(x) (1 + x).
  auto g = x.grad();
  ASSERT_TRUE(g.defined());
  for (std::int64_t i = 0; i < 32; i += 7)
    for (std::int64_t j = 0; j < 16; j += 5) {
      const double v = x.at({i, j});
      EXPECT_NEAR(g.at({i, j}), std::exp(v) * (1 + v), 1e-12 * std::max(1.0, std::exp(v)));
    }
}

TEST(Allocator, SteadyStateFunctionalTransforms) {
  auto x = TD::randn({8, 8}, 6);
  auto f = [](const TD& z) { return tx::sum(tx::exp(z) * z + 1.0); };
  tx::grad(f, x);  // warm-up
  const auto before = tx::allocator_stats();
  for (int i = 0; i < 200; ++i) tx::grad(f, x);
  const auto after = tx::allocator_stats();
  EXPECT_EQ(after.system_allocs - before.system_allocs, 0);
  EXPECT_EQ(after.pool_misses - before.pool_misses, 0);
  EXPECT_EQ(after.bytes_live, before.bytes_live);
}

TEST(Allocator, DataIs64ByteAligned) {
  auto check = [](const void* p) { EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 64, 0u) << p; };
  for (std::int64_t n : {0, 1, 3, 7, 8, 63, 64, 65, 1000, 4096, 100003}) {
    check(TD::empty({n}).data());
    check(tx::Tensor<float>::zeros({n}).data());
    check(tx::Tensor<tx::c128>::ones({n, 1}).data());
    check(tx::Tensor<tx::c64>::empty({1, n}).data());
  }
  // Results of ops are fresh pooled storage too.
  auto a = TD::randn({17, 5}, 1);
  check((a + a).data());
  check(tx::exp(a).data());
  check(tx::sum(a, {0}).data());
  check(tx::matmul(a, a.mT()).data());
  check(a.mT().contiguous().data());
}

TEST(Allocator, ReleaseCachedMemoryReturnsBlocksToTheSystem) {
  {
    std::vector<TD> ts;
    for (int i = 0; i < 20; ++i) ts.push_back(TD::zeros({1000 + 100 * i}));
  }
  const auto cached = tx::allocator_stats();
  EXPECT_GE(cached.bytes_cached, static_cast<std::int64_t>(20 * 1000 * sizeof(double)));
  tx::release_cached_memory();
  const auto released = tx::allocator_stats();
  EXPECT_EQ(released.bytes_cached, 0);
  EXPECT_GT(released.system_frees, cached.system_frees);
  EXPECT_EQ(released.bytes_live, cached.bytes_live);
  // The next tensor goes to the system again: for its storage and for its metadata (TensorImpl),
  // which comes from the same pool.
  {
    auto t = TD::zeros({5000});
    const auto s = tx::allocator_stats();
    EXPECT_EQ(s.system_allocs - released.system_allocs, 2);
    EXPECT_EQ(s.pool_misses - released.pool_misses, 2);
    EXPECT_EQ(s.pool_hits - released.pool_hits, 0);
  }
}

TEST(Allocator, ResetStats) {
  { auto t = TD::zeros({10000}); }
  tx::reset_allocator_stats();
  const auto s = tx::allocator_stats();
  EXPECT_EQ(s.system_allocs, 0);
  EXPECT_EQ(s.system_frees, 0);
  EXPECT_EQ(s.pool_hits, 0);
  EXPECT_EQ(s.pool_misses, 0);
  EXPECT_EQ(s.bytes_peak, s.bytes_live);
}

TEST(Allocator, ConcurrentUseAndStatsFromSeveralThreads) {
  const auto before = tx::allocator_stats();
  std::atomic<bool> go{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();
      for (int i = 0; i < 200; ++i) {
        auto x = TD::randn({16 + t, 8}, static_cast<std::uint64_t>(i)).requires_grad();
        auto y = tx::sum(tx::exp(x) * x);
        y.backward();
        const double v = x.at({0, 0});
        if (std::abs(x.grad().at({0, 0}) - std::exp(v) * (1 + v)) > 1e-12 * std::max(1.0, std::exp(v)))
          failures.fetch_add(1);
        const auto s = tx::allocator_stats();
        if (s.bytes_live < 0 || s.bytes_peak < s.bytes_live || s.bytes_cached < 0) failures.fetch_add(1);
      }
    });
  threads.emplace_back([&] {  // a reader of the stats only
    while (!go.load()) std::this_thread::yield();
    for (int i = 0; i < 2000; ++i) {
      const auto s = tx::allocator_stats();
      if (s.bytes_live < 0 || s.bytes_cached < 0) failures.fetch_add(1);
    }
  });
  go = true;
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  // Every thread's blocks came back: the exited threads' caches went to the shared pool.
  const auto after = tx::allocator_stats();
  EXPECT_EQ(after.bytes_live, before.bytes_live);
  tx::release_cached_memory();
  EXPECT_EQ(tx::allocator_stats().bytes_cached, 0);
}
