// The worker pool: bit identity for every thread count, exceptions, nesting, re-creation,
// concurrent callers, the thread budget, and the affinity guard (workers and provider threads
// are allowed the whole affinity set of the process).
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "mlp_model.hpp"
#include "support/messages.hpp"
#include "tenax/backend/cpu_provider.hpp"
#include "tenax/kernels/parallel.hpp"
#include "tenax/tenax.hpp"

namespace tx = tenax;
using tx::testing::error_of;
using tx::testing::has;
using T = tx::Tensor<double>;

namespace {

// Restores the thread budget a test changed.
struct BudgetGuard {
  int saved = tx::num_threads();
  ~BudgetGuard() { tx::set_num_threads(saved); }
};

T sample(tx::Shape s, std::uint64_t seed) {
  T t = T::empty(s);
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    t.mutable_data()[i] = static_cast<double>(static_cast<std::int64_t>(x >> 33) % 2001 - 1000) / 997.0;
  }
  return t;
}

// Well-conditioned batch of n x n matrices: sample + n I.
T well_batch(std::int64_t n, std::int64_t nb, std::uint64_t seed) {
  return sample({n, n, nb}, seed) + tx::expand(T::eye(n, n) * static_cast<double>(n), {n, n, nb});
}

template <class X>
std::vector<unsigned char> bits(const tx::Tensor<X>& t) {
  const auto c = tx::contiguous(t);
  const auto* p = reinterpret_cast<const unsigned char*>(c.data());
  return {p, p + c.numel() * static_cast<std::int64_t>(sizeof(X))};
}

// Every tensor the computation returns, as bytes.
using Outputs = std::vector<std::vector<unsigned char>>;

// tenax's pool at `threads` workers; the provider's own thread count held at `provider`
// (set_num_threads sets both).
Outputs run_with(int threads, int provider, const std::function<Outputs()>& f) {
  tx::set_num_threads(threads);
  if (provider > 0) tx::cpu::set_provider_threads(provider);
  return f();
}

// f gives the same bits with 1, 2 and 3 pool threads (3: uneven splits), the provider's thread
// count held fixed. `follow`: also with the provider's count following the budget, except for
// the outputs listed in `provider_sensitive`, which must then agree to 1e-12 relative.
void expect_thread_count_invariant(const char* what, const std::function<Outputs()>& f,
                                   std::vector<std::size_t> provider_sensitive = {}) {
  BudgetGuard g;
  const Outputs one = run_with(1, 1, f);
  for (int threads : {2, 3}) {
    const Outputs pooled = run_with(threads, 1, f);
    ASSERT_EQ(one.size(), pooled.size()) << what;
    for (std::size_t i = 0; i < one.size(); ++i)
      EXPECT_TRUE(one[i] == pooled[i]) << what << ": output " << i << " differs between 1 and " << threads
                                       << " pool threads";
    const Outputs both = run_with(threads, 0, f);
    for (std::size_t i = 0; i < one.size(); ++i) {
      const bool sensitive =
          std::find(provider_sensitive.begin(), provider_sensitive.end(), i) != provider_sensitive.end();
      if (!sensitive) {
        EXPECT_TRUE(one[i] == both[i]) << what << ": output " << i << " differs between 1 and " << threads
                                       << " threads (pool and provider)";
        continue;
      }
      ASSERT_EQ(one[i].size(), both[i].size());
      const auto* a = reinterpret_cast<const double*>(one[i].data());
      const auto* b = reinterpret_cast<const double*>(both[i].data());
      double err = 0, scale = 0;
      for (std::size_t k = 0; k < one[i].size() / sizeof(double); ++k) {
        err = std::max(err, std::abs(a[k] - b[k]));
        scale = std::max(scale, std::abs(a[k]));
      }
      EXPECT_LE(err, 1e-12 * scale) << what << ": output " << i;
    }
  }
}

}  // namespace

// Run by CTest once more with TENAX_NUM_THREADS=3 (test_threads_env): the budget follows the
// variable; without it, the size of the affinity set.
TEST(ThreadsEnv, BudgetFromEnvironmentOrAffinity) {
  const char* env = std::getenv("TENAX_NUM_THREADS");
  const tx::ThreadInfo info = tx::thread_info();
  if (env != nullptr && *env != '\0') {
    EXPECT_EQ(info.threads, std::atoi(env));
    EXPECT_EQ(info.source, "TENAX_NUM_THREADS");
    if (info.provider_threads >= 0) EXPECT_EQ(info.provider_threads, info.threads);
  } else {
    cpu_set_t set;
    ASSERT_EQ(sched_getaffinity(getpid(), sizeof(set), &set), 0);
    EXPECT_EQ(info.threads, CPU_COUNT(&set));
    EXPECT_EQ(info.source, "affinity");
  }
  const std::string s = tx::config().str();
  EXPECT_TRUE(has(s, "threads: ")) << s;
  EXPECT_TRUE(has(s, "affinity: CPUs ")) << s;
  std::cout << s << '\n';
}

TEST(Threads, BudgetIsPositiveAndSettable) {
  BudgetGuard g;
  EXPECT_GE(tx::num_threads(), 1);
  tx::set_num_threads(3);
  EXPECT_EQ(tx::num_threads(), 3);
  EXPECT_EQ(tx::thread_info().source, "set_num_threads");
  EXPECT_TRUE(has(error_of([] { tx::set_num_threads(0); }), "[set_num_threads] the thread count must be from 1"));
  EXPECT_EQ(tx::num_threads(), 3);
}

TEST(Threads, ProviderThreadsFollowEachCallsSize) {
  // With OpenBLAS, a small call runs on one provider thread and a large one on the budget's; the
  // budget is what thread_info reports. Other providers keep one count (-1 here).
  BudgetGuard g;
  tx::set_num_threads(2);
  const T small = sample({16, 16}, 1), large = sample({192, 192}, 2);
  const T ys = tx::matmul(small, small);
  const int after_small = tx::cpu::provider_call_threads();
  const T yl = tx::matmul(large, large);
  const int after_large = tx::cpu::provider_call_threads();
  if (tx::thread_info().provider_pinned || after_small < 0) {
    EXPECT_EQ(after_small, -1);
    EXPECT_EQ(after_large, -1);
  } else {
    EXPECT_EQ(after_small, 1);
    EXPECT_EQ(after_large, 2);
    EXPECT_EQ(tx::thread_info().provider_threads, 2);
  }
  // Both agree with one thread, bit for bit.
  tx::set_num_threads(1);
  EXPECT_EQ(bits(tx::matmul(small, small)), bits(ys));
  EXPECT_EQ(bits(tx::matmul(large, large)), bits(yl));
}

TEST(Threads, ElementwiseAndCopiesAreThreadCountInvariant) {
  const T a = sample({301, 257}, 1), b = sample({301, 1}, 2), c = sample({1, 257}, 3);
  expect_thread_count_invariant("elementwise", [&] {
    return Outputs{bits(tx::exp(a)),
                   bits(a * b + c),                         // broadcast
                   bits(tx::tanh(tx::transpose(a, 0, 1))),  // strided input
                   bits(tx::contiguous(tx::transpose(a, 0, 1))),
                   bits(tx::where(tx::gt(a, b), a, c)),
                   bits(tx::abs(tx::complex(a, tx::sin(a))))};
  });
}

TEST(Threads, ReductionsAreThreadCountInvariant) {
  const T a = sample({301, 257, 3}, 4), big = sample({1 << 18}, 5);
  expect_thread_count_invariant("reductions", [&] {
    return Outputs{bits(tx::sum(a)),          // blocked
                   bits(tx::sum(big)),        // blocked, one dimension
                   bits(tx::sum(a, {0})),     // split along kept dimensions
                   bits(tx::sum(a, {1, 2})),  // outputs along dimension 0
                   bits(tx::sum(a, {0, 1})),  // 3 outputs: blocked
                   bits(tx::mean(a, {2})),   bits(tx::max(a)), bits(tx::min(a, {0})), bits(tx::prod(big * 1e-3 + 1.0))};
  });
}

TEST(Threads, BlockedFullSumIsAccurate) {
  // 2^20 copies of 0.1: a sequential float64 sum is off by 1.6e-6, blocks of 8192 by 1.5e-8.
  const T x = T::full({1 << 20}, 0.1);
  EXPECT_NEAR(tx::sum(x).item(), 0.1 * (1 << 20), 1e-7);
}

TEST(Threads, BatchedSmallLinalgIsThreadCountInvariant) {
  const T A = well_batch(4, 1024, 6), B = sample({4, 2, 1024}, 7), S = tx::matmul(tx::transpose(A), A);
  expect_thread_count_invariant(
      "batched linalg",
      [&] {
        auto [Q, R] = tx::linalg::qr(A);
        auto [w, V] = tx::linalg::eigh(S);
        auto [U, s, Vh] = tx::linalg::svd(A);
        auto [P, L, Uu] = tx::linalg::lu(A);
        return Outputs{bits(tx::linalg::solve(A, B)),
                       bits(tx::linalg::inv(A)),
                       bits(Q),
                       bits(R),
                       bits(w),
                       bits(V),
                       bits(s),
                       bits(U),
                       bits(L),
                       bits(Uu),
                       bits(tx::linalg::cholesky(S)),
                       bits(tx::linalg::det(A)),
                       bits(tx::matmul(A, B)),
                       bits(tx::linalg::solve_triangular(R, B, true))};
      },
      /*provider_sensitive=*/{4, 5});  // OpenBLAS 0.3.21 threads dsymv (in syevd) at every size
}

TEST(Threads, GradientsAreThreadCountInvariant) {
  const T A = well_batch(4, 512, 8), x = sample({300, 200}, 9);
  expect_thread_count_invariant("gradients",
                                [&] {
                                  auto f = [](const T& a) {
                                    return tx::sum(tx::linalg::inv(a)) +
                                           tx::sum(tx::linalg::eigvalsh(tx::matmul(a, tx::transpose(a))));
                                  };
                                  auto g = [](const T& v) { return tx::mean(tx::square(tx::tanh(v) * v)); };
                                  return Outputs{bits(tx::grad(f, A)), bits(tx::grad(g, x)), bits(tx::hvp(g, x, x))};
                                },
                                /*provider_sensitive=*/{0});  // eigvalsh
}

TEST(Threads, MlpTrainingIsThreadCountInvariant) {
  namespace mlp = tenax_workloads::mlp;
  for (const mlp::Case& c : mlp::kCases) {
    const mlp::Data d = mlp::make_data(c);
    // Every output goes through gemm, which OpenBLAS 0.3.21 does not keep bit-identical across its
    // own thread counts on every CPU: with its Haswell/Zen kernels (an AMD EPYC without AVX-512)
    // an uneven split over 3 threads sends some rows through the edge kernels, which sum in
    // another order (dgemm 64x64x256: 216 of 4096 entries differ from 1 thread; 2 threads agree).
    expect_thread_count_invariant(c.name,
                                  [&] {
                                    auto [loss, W, b] = mlp::train(c, d, mlp::sgd_step);
                                    EXPECT_EQ(mlp::check_loss(c, loss), "") << c.name;
                                    return Outputs{bits(T::full({1}, loss)), bits(W), bits(b)};
                                  },
                                  /*provider_sensitive=*/{0, 1, 2});
  }
}

TEST(Threads, ExceptionOfTheFirstFailingChunkPropagates) {
  BudgetGuard g;
  for (int threads : {1, 2, 3}) {
    tx::set_num_threads(threads);
    // A linalg error from inside the batch loop names the first failing matrix, as a serial loop.
    T A = well_batch(4, 1024, 10);
    A.mutable_data()[16 * 900] = std::nan("");
    A.mutable_data()[16 * 300 + 5] = std::nan("");
    const std::string e = error_of([&] { tx::linalg::qr(A); });
    EXPECT_TRUE(has(e, "batch element [300]")) << threads << " threads: " << e;
    // A plain exception thrown in several chunks: the lowest chunk's, and the pool is usable after.
    std::atomic<int> ran{0};
    try {
      tx::cpu::parallel_for(64, [&](std::int64_t c) {
        ++ran;
        if (c % 10 == 7) throw std::runtime_error("chunk " + std::to_string(c));
      });
      ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error& err) {
      EXPECT_STREQ(err.what(), "chunk 7") << threads << " threads";
    }
    EXPECT_GE(ran.load(), 8);
    EXPECT_EQ(tx::sum(T::ones({1 << 16})).item(), 65536.0);
  }
}

TEST(Threads, NestedLoopsRunOnTheirWorker) {
  BudgetGuard g;
  tx::set_num_threads(2);
  std::vector<int> inner(8, 0), nested(8, 0);
  tx::cpu::parallel_for(8, [&](std::int64_t c) {
    nested[static_cast<std::size_t>(c)] = tx::cpu::in_parallel_region() && tx::cpu::parallel_threads() == 1;
    tx::cpu::parallel_for(4, [&](std::int64_t) { ++inner[static_cast<std::size_t>(c)]; });
  });
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(inner[static_cast<std::size_t>(i)], 4);
    EXPECT_EQ(nested[static_cast<std::size_t>(i)], 1);
  }
  EXPECT_FALSE(tx::cpu::in_parallel_region());
}

TEST(Threads, PoolShutdownAndRecreation) {
  BudgetGuard g;
  const T a = sample({1 << 17}, 11);
  const auto ref = bits(tx::exp(a));
  for (int threads : {2, 1, 4, 2, 3, 1, 2}) {
    tx::set_num_threads(threads);
    EXPECT_EQ(bits(tx::exp(a)), ref) << threads;
  }
}

TEST(Threads, ConcurrentCallersShareThePool) {
  BudgetGuard g;
  tx::set_num_threads(2);
  const T a = sample({1 << 17}, 12);
  const auto ref = bits(tx::sin(a) * a);
  std::atomic<int> bad{0};
  std::vector<std::thread> users;
  for (int u = 0; u < 3; ++u)
    users.emplace_back([&] {
      for (int i = 0; i < 20; ++i)
        if (bits(tx::sin(a) * a) != ref) ++bad;
    });
  for (auto& t : users) t.join();
  EXPECT_EQ(bad.load(), 0);
}

// Backward passes from several threads over graphs that share a leaf (and, in the second part,
// over one graph): the engine runs one pass at a time, so every pass sees its own cotangents and
// the leaf's .grad is the exact sum. The second part is sequential: a node visited by one
// thread's pass must look unvisited to another thread's first pass.
TEST(Threads, BackwardFromSeveralThreadsOverASharedLeaf) {
  const T x = T::from_col_major({3}, {0.25, -0.5, 1.0}).requires_grad();
  constexpr int kThreads = 3, kIters = 40;
  std::vector<std::thread> users;
  std::atomic<int> bad{0};
  for (int u = 0; u < kThreads; ++u)
    users.emplace_back([&, u] {
      for (int i = 0; i < kIters; ++i) {
        // d/dx sum(exp(x) * (u + 1)) = exp(x) * (u + 1); a transform over the shared leaf too.
        tx::sum(tx::exp(x) * static_cast<double>(u + 1)).backward();
        const T g = tx::grad([](const T& z) { return tx::sum(z * z); }, x);
        for (int k = 0; k < 3; ++k)
          if (g.at({k}) != 2 * x.at({k})) ++bad;
      }
    });
  // A reader (an optimizer, say) reads the shared gradient while the passes accumulate into it.
  std::atomic<bool> done{false};
  std::thread reader([&] {
    while (!done.load()) {
      const T g = x.grad();
      if (g.defined() && !(g.at({0}) > 0)) ++bad;  // exp(x) > 0: every partial sum is positive
    }
  });
  for (auto& t : users) t.join();
  done = true;
  reader.join();
  EXPECT_EQ(bad.load(), 0);
  // sum over threads and iterations of (u + 1) exp(x) = kIters * (1 + 2 + 3) exp(x).
  for (int k = 0; k < 3; ++k)
    EXPECT_NEAR(x.grad().at({k}), kIters * 6.0 * std::exp(x.at({k})), 1e-12 * kIters * 6.0 * std::exp(x.at({k})));

  const T w = T::from_col_major({2}, {0.5, 2.0}).requires_grad();
  const T y = tx::sum(tx::sin(w) * w);
  for (int u = 0; u < 2; ++u) std::thread([&] { y.backward(); }).join();
  for (int k = 0; k < 2; ++k) {
    const double wk = w.at({k});
    EXPECT_NEAR(w.grad().at({k}), 2 * (std::cos(wk) * wk + std::sin(wk)), 1e-14);
  }
}

TEST(Threads, NestedRegionFlagSurvivesInnerLoops) {
  BudgetGuard g;
  tx::set_num_threads(2);
  std::atomic<int> still_inside{0};
  tx::cpu::parallel_for(4, [&](std::int64_t) {
    tx::cpu::parallel_for(3, [](std::int64_t) {});
    still_inside += tx::cpu::in_parallel_region() ? 1 : 0;
  });
  EXPECT_EQ(still_inside.load(), 4);
}

// A child made by fork() after the pool ran has no workers: it must run parallel kernels and
// exit without waiting for them (SIGALRM kills it if it hangs).
TEST(Threads, ForkedChildRunsAndExits) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "ThreadSanitizer does not support starting threads after a multi-threaded fork";
#endif
  BudgetGuard g;
  tx::set_num_threads(2);
  const T a = sample({1 << 17}, 14);
  const auto ref = bits(tx::exp(a));
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(20);
    const bool same = bits(tx::exp(a)) == ref;
    tx::set_num_threads(3);  // replaces the (forgotten) pool
    const bool same3 = bits(tx::exp(a)) == ref;
    std::exit(same && same3 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status)) << "child killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  if (WIFEXITED(status)) EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(bits(tx::exp(a)), ref);  // the parent's pool still works
}

TEST(Threads, InPlaceStepsOverThePoolAreThreadCountInvariant) {
  // Large enough for the maps to be split across threads; the dying input is the first or the
  // second operand, used twice, or next to a broadcast partner.
  auto f = [](const T& x, const T& bias) {
    const auto u = tx::exp(x * 0.25);
    const auto v = bias - tx::sigmoid(u);  // donated: the second operand, partner broadcast
    const auto w = v * v;                  // the same dying value twice
    return tx::tanh(w + bias) - x;         // broadcast partner again
  };
  const T x = sample({256, 96}, 15), bias = sample({256, 1}, 16);
  const auto p = tx::compile(f, x, bias);
  EXPECT_NE(p.str().find("in place of"), std::string::npos) << p.str();
  const auto eager = bits(f(x, bias));
  expect_thread_count_invariant("in-place program", [&] { return Outputs{bits(p(x, bias))}; });
  EXPECT_EQ(bits(p(x, bias)), eager);
}

namespace {

// Cpus_allowed_list and name of every thread of the process.
std::map<std::string, std::pair<std::string, std::string>> task_affinities() {
  std::map<std::string, std::pair<std::string, std::string>> r;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream status(e.path() / "status");
    std::string line, name, allowed;
    while (std::getline(status, line)) {
      if (line.rfind("Name:", 0) == 0) name = line.substr(line.find_first_not_of(" \t", 5));
      if (line.rfind("Cpus_allowed_list:", 0) == 0) allowed = line.substr(line.find_first_not_of(" \t", 18));
    }
    r[e.path().filename().string()] = {name, allowed};
  }
  return r;
}

}  // namespace

// Under `taskset -c 0-1` (CTest runs it so when taskset exists): while a parallel run executes,
// every tenax worker and every provider thread is allowed the whole set given to the process, also
// when the pool was created by a thread that had narrowed itself to one CPU.
TEST(Threads, AffinityGuard) {
  BudgetGuard g;
  const std::string whole = tx::thread_info().affinity;
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  const int cpus = CPU_COUNT(&set);
  std::cout << "process affinity: CPUs " << whole << " (" << cpus << ")\n";

  auto check_during_run = [&](const char* when, pid_t narrowed_tid) {
    std::atomic<bool> seen{false};
    std::map<std::string, std::pair<std::string, std::string>> tasks;
    const T A = sample({192, 192}, 13);
    tx::cpu::parallel_for(tx::num_threads(), [&](std::int64_t c) {
      (void)tx::matmul(A, A);  // the provider's threads work (and are created) inside the run
      if (c == 0 && !seen.exchange(true)) tasks = task_affinities();
    });
    int workers = 0;
    for (const auto& [tid, na] : tasks) {
      std::cout << when << ": task " << tid << " '" << na.first << "' Cpus_allowed_list " << na.second << '\n';
      if (na.first.rfind("tenax-w", 0) == 0) ++workers;
      if (std::stoi(tid) == narrowed_tid) continue;  // the caller chose to narrow itself
      EXPECT_EQ(na.second, whole) << when << ": thread " << tid << " '" << na.first << "'";
    }
    EXPECT_EQ(workers, tx::num_threads() - 1) << when;
  };

  tx::set_num_threads(std::max(2, cpus));
  check_during_run("pool created by the main thread", -1);

  if (cpus < 2) GTEST_SKIP() << "one CPU in the affinity set: the narrowed-creator case needs two";
  // A user thread pinned to one CPU creates the pool and calls the provider.
  std::thread user([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int i = 0; i < CPU_SETSIZE; ++i)
      if (CPU_ISSET(i, &set)) {
        CPU_SET(i, &one);
        break;
      }
    ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof(one), &one), 0);
    tx::set_num_threads(cpus == 2 ? 3 : cpus);  // new workers, created from this thread
    check_during_run("pool created by a thread pinned to one CPU", static_cast<pid_t>(gettid()));
  });
  user.join();
}
