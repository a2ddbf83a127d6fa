// The persistent CPU worker pool behind kernels/parallel.hpp, and tenax's thread budget
// (core/threads.hpp).
//
// One job runs at a time: the caller publishes it (function, context, a new generation and the
// number of pieces in one atomic word) and works on it too; workers spin briefly on the word, then
// sleep on a condition variable. Every thread claims the next unclaimed piece until none is left.
// Pieces are fixed by the job alone, never by who runs them, so results do not depend on the
// thread count or on scheduling. A second thread that finds the pool busy, and any call made from
// inside a job, runs its loop serially instead of waiting. Workers may run on the process's whole
// affinity set.
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "tenax/backend/cpu_provider.hpp"
#include "tenax/core/error.hpp"
#include "tenax/core/threads.hpp"
#include "tenax/kernels/parallel.hpp"

namespace tenax::cpu {
namespace {

thread_local bool t_in_region = false;

struct RegionFlag {
  RegionFlag() : prev(t_in_region) { t_in_region = true; }
  ~RegionFlag() { t_in_region = prev; }
  bool prev;
};

// How long an idle worker polls for the next job before it sleeps (a pause is ~40-140 cycles: a
// few tens of microseconds), so that back-to-back kernels do not pay a wake-up each.
constexpr int kWorkerSpins = 2000;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// The affinity set of the process (its main thread), not of the calling thread, which may have
// been narrowed by whoever created it.
cpu_set_t process_affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(getpid(), sizeof(set), &set) != 0 || CPU_COUNT(&set) == 0) {
    CPU_ZERO(&set);
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (long i = 0; i < std::max(1L, n) && i < CPU_SETSIZE; ++i) CPU_SET(i, &set);
  }
  return set;
}

std::string cpu_list(const cpu_set_t& set) {
  std::ostringstream o;
  bool first = true;
  for (int i = 0; i < CPU_SETSIZE; ++i) {
    if (!CPU_ISSET(i, &set)) continue;
    int j = i;
    while (j + 1 < CPU_SETSIZE && CPU_ISSET(j + 1, &set)) ++j;
    o << (first ? "" : ",") << i;
    if (j > i) o << '-' << j;
    first = false;
    i = j;
  }
  return o.str();
}

// Sets the provider's thread count with the calling thread allowed the whole affinity set for the
// duration: OpenBLAS starts its threads inside openblas_set_num_threads, and a thread inherits
// the mask of the thread that creates it (the field problem: a caller pinned to one CPU would
// confine every provider thread to that CPU).
void set_provider_threads_widely(int n) {
  cpu_set_t mine;
  const bool saved = pthread_getaffinity_np(pthread_self(), sizeof(mine), &mine) == 0;
  const cpu_set_t whole = process_affinity();
  const bool widened =
      saved && !CPU_EQUAL(&mine, &whole) && pthread_setaffinity_np(pthread_self(), sizeof(whole), &whole) == 0;
  set_provider_threads(n);
  if (widened) pthread_setaffinity_np(pthread_self(), sizeof(mine), &mine);
}

// The job word: generation (20 bits) | piece count (22 bits) | next unclaimed piece (22 bits).
// Claiming a piece is one compare-and-swap on it, which fails when a new job was published.
constexpr int kIdxBits = 22;
constexpr std::uint64_t kIdxMask = (std::uint64_t{1} << kIdxBits) - 1;
constexpr std::int64_t kMaxPieces = static_cast<std::int64_t>(kIdxMask);
inline std::uint64_t pack(std::uint64_t gen, std::uint64_t n, std::uint64_t idx) {
  return (gen << (2 * kIdxBits)) | (n << kIdxBits) | idx;
}
inline std::uint64_t gen_of(std::uint64_t v) { return v >> (2 * kIdxBits); }
inline std::int64_t n_of(std::uint64_t v) { return static_cast<std::int64_t>((v >> kIdxBits) & kIdxMask); }
inline std::int64_t idx_of(std::uint64_t v) { return static_cast<std::int64_t>(v & kIdxMask); }

class Pool {
 public:
  Pool(int threads, const cpu_set_t& mask) : size_(threads) {
    workers_.reserve(static_cast<std::size_t>(threads - 1));
    try {
      for (int w = 1; w < threads; ++w) {
        workers_.emplace_back([this] { loop(); });
        // The whole set: a provider thread created from a worker inherits the worker's mask.
        pthread_setaffinity_np(workers_.back().native_handle(), sizeof(mask), &mask);
        const std::string name = "tenax-w" + std::to_string(w);  // as seen in /proc/self/task/*/comm
        pthread_setname_np(workers_.back().native_handle(), name.c_str());
      }
    } catch (const std::system_error& e) {  // the system refused a thread: stop the ones started
      const std::size_t started = workers_.size();
      stop_all();
      TENAX_CHECK(false, "threads", "could not start ", threads - 1, " worker threads (", e.what(), "); ", started,
                  " had started and were stopped");
    }
  }
  ~Pool() { stop_all(); }
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  int size() const { return size_; }

  // Runs fn over [0, items) cut into `pieces` contiguous ranges (piece p: [p items / pieces,
  // (p + 1) items / pieces)), each claimed by whichever thread is free, the caller included, so a
  // worker the OS has not scheduled yet never holds the caller up. Which thread runs a piece does
  // not matter to the result: pieces write disjoint outputs. False when another thread holds the
  // pool (the caller then runs serially).
  bool try_run(std::int64_t items, std::int64_t pieces, detail::ChunkFn fn, void* ctx) {
    std::unique_lock<std::mutex> busy(run_mu_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    items_ = items;
    fn_ = fn;
    ctx_ = ctx;
    error_ = nullptr;
    error_piece_ = pieces;
    done_.store(0, std::memory_order_relaxed);
    ++gen_;
    job_.store(pack(gen_, static_cast<std::uint64_t>(pieces), 0), std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
      { std::lock_guard<std::mutex> g(mu_); }  // a sleeper between its check and its wait
      cv_.notify_all();
    }
    work(job_.load(std::memory_order_acquire));
    for (int spins = 0; done_.load(std::memory_order_acquire) != pieces; ++spins) {
      if (spins < 4096)
        cpu_relax();
      else
        std::this_thread::yield();
    }
    if (error_) std::rethrow_exception(error_);
    return true;
  }

 private:
  void stop_all() {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
    workers_.clear();
  }

  // Claims and runs pieces of the job described by v until none is left or a new job replaced it.
  void work(std::uint64_t v) {
    const std::uint64_t gen = gen_of(v);
    for (;;) {
      if (gen_of(v) != gen || idx_of(v) >= n_of(v)) return;
      if (!job_.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
      run_piece(idx_of(v), n_of(v));
      done_.fetch_add(1, std::memory_order_release);
      v = job_.load(std::memory_order_acquire);
    }
  }

  void run_piece(std::int64_t p, std::int64_t pieces) {
    RegionFlag region;
    try {
      fn_(ctx_, items_ * p / pieces, items_ * (p + 1) / pieces);
    } catch (...) {
      std::lock_guard<std::mutex> g(error_mu_);  // keep the lowest piece's, as a serial loop would
      if (p < error_piece_) {
        error_piece_ = p;
        error_ = std::current_exception();
      }
    }
  }

  void loop() {
    std::uint64_t seen = 0;
    for (;;) {
      std::uint64_t v = job_.load(std::memory_order_acquire);
      for (int spins = 0; gen_of(v) == seen && spins < kWorkerSpins; ++spins) {
        cpu_relax();
        v = job_.load(std::memory_order_acquire);
      }
      if (gen_of(v) == seen) {
        std::unique_lock<std::mutex> lk(mu_);
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        cv_.wait(lk, [&] { return stop_ || gen_of(job_.load(std::memory_order_seq_cst)) != seen; });
        sleepers_.fetch_sub(1, std::memory_order_relaxed);
        if (stop_) return;
        v = job_.load(std::memory_order_acquire);
      }
      seen = gen_of(v);
      work(v);
    }
  }

  const int size_;
  std::vector<std::thread> workers_;
  std::mutex run_mu_;  // one job at a time
  std::mutex mu_;      // sleeping workers
  std::condition_variable cv_;
  bool stop_ = false;
  std::atomic<int> sleepers_{0};
  std::atomic<std::uint64_t> job_{0};
  std::atomic<std::int64_t> done_{0};
  std::uint64_t gen_ = 0;  // the caller's count (job_ keeps its low 20 bits)
  // The job; written by the caller before job_ is published, read by a thread after it claimed a
  // piece (the caller waits for every claimed piece before it writes the next job).
  std::int64_t items_ = 0;
  detail::ChunkFn fn_ = nullptr;
  void* ctx_ = nullptr;
  std::mutex error_mu_;
  std::exception_ptr error_;
  std::int64_t error_piece_ = 0;
};

// The budget and the pool. `budget` is read on every kernel call (one atomic load); the pool is
// created on the first parallel loop.
struct State {
  std::mutex mu;
  std::atomic<int> budget{0};  // 0: not initialised yet
  std::shared_ptr<Pool> pool;  // guarded by mu; loops take a reference under mu
  std::string source;
  bool provider_pinned = false;
};

State& state() {
  static State s;
  return s;
}

bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0';
}

int budget_from_env(std::string& source) {
  if (const char* v = std::getenv("TENAX_NUM_THREADS"); v != nullptr && *v != '\0') {
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    TENAX_CHECK(end != v && *end == '\0' && n >= 1 && n <= 4096, "threads",
                "TENAX_NUM_THREADS must be a whole number from 1 to 4096, got '", v, "'");
    source = "TENAX_NUM_THREADS";
    return static_cast<int>(n);
  }
  source = "affinity";
  cpu_set_t set = process_affinity();
  return std::max(1, CPU_COUNT(&set));
}

// Initialises the budget on first use: from the environment, and the provider's thread count to
// match, unless the user pinned the provider through its own variables (and not TENAX_NUM_THREADS).
int ensure_budget() {
  State& s = state();
  int b = s.budget.load(std::memory_order_acquire);
  if (b > 0) return b;
  std::lock_guard<std::mutex> g(s.mu);
  b = s.budget.load(std::memory_order_relaxed);
  if (b > 0) return b;
  b = budget_from_env(s.source);
  s.provider_pinned =
      !env_set("TENAX_NUM_THREADS") && (env_set("OPENBLAS_NUM_THREADS") || env_set("GOTO_NUM_THREADS") ||
                                        env_set("OMP_NUM_THREADS") || env_set("MKL_NUM_THREADS"));
  if (!s.provider_pinned) set_provider_threads_widely(b);
  s.budget.store(b, std::memory_order_release);
  return b;
}

// In a child made by fork() the workers do not exist: joining them (at exit, or when the pool is
// replaced) would wait forever. The child forgets the parent's pool without joining it (a small,
// deliberate leak, kept reachable from a global so that leak checkers do not report it) and
// starts its own on its next parallel loop.
std::vector<std::shared_ptr<Pool>>* forgotten_pools = nullptr;

void forget_pool_after_fork() {
  State& s = state();
  new (&s.mu) std::mutex();  // a parent thread may have held it
  if (forgotten_pools == nullptr) forgotten_pools = new std::vector<std::shared_ptr<Pool>>();
  forgotten_pools->push_back(std::move(s.pool));  // never destroyed: no join
}

std::shared_ptr<Pool> pool_for(int budget) {
  State& s = state();
  static const int registered = pthread_atfork(nullptr, nullptr, forget_pool_after_fork);
  (void)registered;
  std::lock_guard<std::mutex> g(s.mu);
  if (!s.pool || s.pool->size() != budget) {
    s.pool.reset();  // joins the old workers first
    s.pool = std::make_shared<Pool>(budget, process_affinity());
  }
  return s.pool;
}

}  // namespace

int parallel_threads() { return t_in_region ? 1 : ensure_budget(); }

bool in_parallel_region() { return t_in_region; }

void detail::run_chunks(std::int64_t n, ChunkFn fn, void* ctx) {
  const int budget = parallel_threads();
  if (budget > 1 && n > 1) {
    std::shared_ptr<Pool> p = pool_for(budget);
    // A few pieces per thread, so that a thread the OS delays leaves its share to the others.
    const std::int64_t pieces = std::min<std::int64_t>({n, std::int64_t{4} * budget, kMaxPieces});
    if (p->try_run(n, pieces, fn, ctx)) return;
  }
  RegionFlag region;  // serial, but nested loops behave as inside a parallel region
  fn(ctx, 0, n);
}

}  // namespace tenax::cpu

namespace tenax {

int num_threads() { return cpu::ensure_budget(); }

void set_num_threads(int n) {
  TENAX_CHECK(n >= 1 && n <= 4096, "set_num_threads", "the thread count must be from 1 to 4096, got ", n);
  TENAX_CHECK(!cpu::in_parallel_region(), "set_num_threads", "called from inside a parallel region");
  cpu::ensure_budget();
  cpu::State& s = cpu::state();
  std::lock_guard<std::mutex> g(s.mu);
  s.pool.reset();  // waits for nothing: a running job holds its own reference
  s.budget.store(n, std::memory_order_release);
  s.source = "set_num_threads";
  s.provider_pinned = false;
  cpu::set_provider_threads_widely(n);
}

ThreadInfo thread_info() {
  ThreadInfo t;
  t.threads = cpu::ensure_budget();
  t.provider_threads = cpu::provider_threads();
  t.affinity = cpu::cpu_list(cpu::process_affinity());
  cpu::State& s = cpu::state();
  std::lock_guard<std::mutex> g(s.mu);
  t.source = s.source;
  t.provider_pinned = s.provider_pinned;
  return t;
}

}  // namespace tenax
