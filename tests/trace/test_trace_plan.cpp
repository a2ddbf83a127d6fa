// The prepared plan of a compiled program (trace/program.hpp): which steps the first run turns into
// captured kernels and views, the static memory plan (slots shared by lifetime, in place), what a
// prepared run still allocates, and the cases that must fall back to running the forwards.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "support/messages.hpp"
#include "tenax/tenax.hpp"
#include "trace/trace_support.hpp"

namespace tx = tenax;
using tx::Tensor;
using tx::testing::has;
using tx::ttest::expect_bitwise;
using tx::ttest::show;

namespace {

TEST(TracePlan, FirstRunPreparesKernelsViewsAndSlots) {
  // A matmul, elementwise ops, reductions, a transpose, a reshape and svdvals: all prepared (svd
  // is one kernel with several outputs, the undefined U and Vh of svdvals among them).
  auto f = [](const Tensor<double>& x, const Tensor<double>& w) {
    const auto h = tx::relu(tx::matmul(x, w) + 0.5);
    const auto s = tx::sum(h * h, {1}, false);
    return tx::sum(tx::exp(tx::transpose(h) * 0.1)) + tx::sum(tx::reshape(s, {2, 4}) * 2.0) +
           tx::sum(tx::linalg::svdvals(h));
  };
  const auto x = Tensor<double>::randn({8, 5}, 1), w = Tensor<double>::randn({5, 6}, 2);
  const auto p = tx::compile(f, x, w);
  EXPECT_TRUE(has(p.str(), "not prepared yet")) << p.str();
  EXPECT_FALSE(p.program().prepared());
  const auto first = p(x, w);
  ASSERT_TRUE(p.program().prepared());
  const std::string dump = p.str();
  show(dump);
  EXPECT_TRUE(has(dump, "[kernel, slot ")) << dump;
  EXPECT_TRUE(has(dump, "[view of %")) << dump;
  const std::size_t at = dump.find("= svd(%4)");
  ASSERT_NE(at, std::string::npos) << dump;
  EXPECT_TRUE(has(dump.substr(at, dump.find('\n', at) - at), "[kernel, slots _ ")) << dump;
  EXPECT_FALSE(has(dump, "[forward]")) << dump;
  // matmul, add, relu, mul, sum, mul_scalar, exp, sum, mul_scalar, sum, sum, add, add; transpose
  // and reshape views.
  EXPECT_GE(p.program().kernel_steps(), 12u) << dump;
  EXPECT_GE(p.program().view_steps(), 2u) << dump;
  // Values with disjoint lifetimes share slots: fewer slots than slot-backed kernel steps.
  EXPECT_GE(p.program().slots(), 1u);
  EXPECT_LT(p.program().slots(), p.program().kernel_steps()) << dump;
  // Prepared runs at new values match eager bit for bit; earlier results stay intact.
  for (int seed = 3; seed < 6; ++seed) {
    const auto x2 = Tensor<double>::randn({8, 5}, seed), w2 = Tensor<double>::randn({5, 6}, seed + 10);
    expect_bitwise(p(x2, w2), f(x2, w2), "prepared run, seed " + std::to_string(seed));
  }
  expect_bitwise(first, f(x, w), "the first run's result after prepared runs");
}

TEST(TracePlan, TriangleEmbedAndBroadcastMatmulAreKernels) {
  // tril (copy, then zero a triangle), embed (zero, then copy into a view: the adjoint of
  // diagonal) and a matmul of a broadcast operand (copied into the batch's scratch first) are each
  // one captured kernel.
  auto f = [](const Tensor<double>& a, const Tensor<double>& s) {
    return tx::grad(
        [](const Tensor<double>& x, const Tensor<double>& c) {
          const auto e = tx::expand(tx::reshape(c, {1, 1}), {4, 4});
          return tx::sum(tx::tril(x, 0) * tx::matmul(x, e)) + tx::sum(tx::diagonal(x) * tx::diagonal(x));
        },
        a, s);
  };
  const auto a = Tensor<double>::randn({4, 4}, 1), s = Tensor<double>::full({}, 0.5);
  const auto p = tx::compile(f, a, s);
  (void)p(a, s);
  const std::string dump = p.str();
  show(dump);
  for (const char* op : {"tril/triu", "embed", "matmul"}) {
    const std::size_t at = dump.find(std::string("= ") + op + "(");
    ASSERT_NE(at, std::string::npos) << op << '\n' << dump;
    const std::string line = dump.substr(at, dump.find('\n', at) - at);
    EXPECT_TRUE(has(line, "[kernel")) << line;
  }
  for (int seed = 2; seed < 4; ++seed) {
    const auto a2 = Tensor<double>::randn({4, 4}, seed), s2 = Tensor<double>::full({}, 0.25 * seed);
    expect_bitwise(p(a2, s2), f(a2, s2), "prepared run, seed " + std::to_string(seed));
  }
}

// The dump line of the step running `op` (its first occurrence).
std::string step_line(const std::string& dump, const std::string& op) {
  const std::size_t at = dump.find("= " + op + "(");
  return at == std::string::npos ? std::string() : dump.substr(at, dump.find('\n', at) - at);
}

TEST(TracePlan, LinalgFactorizationsAreKernels) {
  // Each CPU factorization and solve is one captured kernel writing several outputs (its scratch,
  // such as QR's work copy and tau, kept by the kernel). The gradient of a loss through all of
  // them, compiled: every factorization step is a kernel, prepared runs at other values match
  // eager bit for bit, and after the first runs a run makes no system allocation and no pool miss.
  auto f = [](const Tensor<double>& a0, const Tensor<double>& b0) {
    return tx::grad(
        [](const Tensor<double>& a, const Tensor<double>& b) {
          const auto spd = tx::matmul(a, tx::transpose(a)) + Tensor<double>::eye(4) * 4.0;
          const auto [q, r] = tx::linalg::qr(a);
          const auto [w, v] = tx::linalg::eigh(spd);
          const auto [u, s, vh] = tx::linalg::svd(a);
          const auto l = tx::linalg::cholesky(spd);
          const auto x = tx::linalg::solve(a, b);
          const auto [sg, ld] = tx::linalg::slogdet(a);
          const auto [lu, piv] = tx::linalg::lu_factor(a);
          return tx::sum(q * r) + tx::sum(w * w) + tx::sum(v * v * 0.5) + tx::sum(s) + tx::sum(l * 0.25) + tx::sum(x) +
                 tx::sum(ld) + tx::sum(lu * lu) + tx::linalg::det(a) * 0.01;
        },
        a0, b0);
  };
  const auto a = Tensor<double>::randn({4, 4}, 1) + Tensor<double>::eye(4) * 3.0;
  const auto b = Tensor<double>::randn({4, 2}, 2);
  const auto p = tx::compile(f, a, b);
  (void)p(a, b);
  const std::string dump = p.str();
  show(dump);
  for (const char* op : {"qr", "eigh", "svd", "cholesky", "solve", "slogdet", "lu_factor", "det"})
    EXPECT_TRUE(has(step_line(dump, op), "[kernel, slots")) << op << '\n' << dump;
  EXPECT_TRUE(has(step_line(dump, "lu_solve"), "[kernel")) << dump;  // in the derivatives of solve and slogdet
  EXPECT_FALSE(has(dump, "[forward]")) << dump;
  for (int seed = 3; seed < 6; ++seed) {
    const auto a2 = Tensor<double>::randn({4, 4}, seed) + Tensor<double>::eye(4) * 3.0;
    const auto b2 = Tensor<double>::randn({4, 2}, seed + 10);
    expect_bitwise(p(a2, b2), f(a2, b2), "prepared run, seed " + std::to_string(seed));
  }
  (void)p(a, b);
  tx::reset_allocator_stats();
  const auto g = p(a, b);
  const auto st = tx::allocator_stats();
  EXPECT_EQ(st.system_allocs, 0);
  EXPECT_EQ(st.pool_misses, 0);
  expect_bitwise(g, f(a, b), "after the allocator check");
}

TEST(TracePlan, MatrixExpAndItsFrechetDerivativeAreKernels) {
  // matrix_exp and its Frechet derivative (the rules of both modes) are one CPU kernel each, which
  // chooses the Pade degree and the squarings at run time: compiled at a small norm, run at large
  // ones, bit for bit against eager. The JVP's exp(A) and L(A, dA) are one joined step (the
  // exponential computed once); the VJP's L(A^H, G) reads another matrix and stays a step.
  const auto W = Tensor<double>::randn({4, 4}, 9);
  auto f = [W](const Tensor<double>& a0, const Tensor<double>& d0) {
    const auto [y, dy] = tx::jvp([](const Tensor<double>& a) { return tx::linalg::matrix_exp(a); }, a0, d0);
    const auto g = tx::grad([W](const Tensor<double>& a) { return tx::sum(tx::linalg::matrix_exp(a) * W); }, a0);
    return y + dy + g;
  };
  const auto a = Tensor<double>::randn({4, 4}, 1) * 0.01, d = Tensor<double>::randn({4, 4}, 2);
  const auto p = tx::compile(f, a, d);
  (void)p(a, d);
  const std::string dump = p.str();
  show(dump);
  EXPECT_EQ(p.program().joined(), 1u) << dump;
  EXPECT_TRUE(has(step_line(dump, "matrix_exp_frechet+matrix_exp"), "[kernel")) << dump;
  EXPECT_TRUE(has(step_line(dump, "matrix_exp_frechet"), "[kernel, slot")) << dump;
  EXPECT_FALSE(has(dump, "[forward]")) << dump;
  for (double scale : {0.01, 0.5, 3.0, 40.0}) {
    const auto a2 = Tensor<double>::randn({4, 4}, 3) * scale, d2 = Tensor<double>::randn({4, 4}, 4);
    expect_bitwise(p(a2, d2), f(a2, d2), "prepared run at scale " + std::to_string(scale));
  }
}

TEST(TracePlan, PinvAndLstsqAreKernels) {
  // pinv and lstsq (the SVD, the tolerance and the products) are one CPU kernel each; with their
  // rules' products and the tolerance's choice at run time, prepared runs match eager bit for bit,
  // also where the tolerance drops a value the first run kept.
  const auto B = Tensor<double>::randn({5, 2}, 8);
  auto f = [B](const Tensor<double>& a0) {
    return tx::grad(
        [B](const Tensor<double>& a) {
          return tx::sum(tx::linalg::lstsq(a, B).solution) + tx::sum(tx::linalg::pinv(a, 1e-3) * 0.5);
        },
        a0);
  };
  const auto a = Tensor<double>::randn({5, 3}, 1);
  const auto p = tx::compile(f, a);
  (void)p(a);
  const std::string dump = p.str();
  show(dump);
  EXPECT_TRUE(has(step_line(dump, "lstsq"), "[kernel, slots")) << dump;
  EXPECT_TRUE(has(step_line(dump, "pinv"), "[kernel, slots")) << dump;
  EXPECT_FALSE(has(dump, "[forward]")) << dump;
  for (int seed = 2; seed < 5; ++seed) {
    auto a2 = tx::contiguous(Tensor<double>::randn({5, 3}, seed));
    if (seed == 4)  // rank 2 up to 1e-9: the last column the sum of the others
      for (int i = 0; i < 5; ++i) a2.mutable_data()[10 + i] = a2.mutable_data()[i] + a2.mutable_data()[5 + i] + 1e-9;
    expect_bitwise(p(a2), f(a2), "prepared run, seed " + std::to_string(seed));
  }
}

TEST(TracePlan, LinalgFailuresInPreparedRuns) {
  // A prepared factorization reports failure as eager does: cholesky_ex's info and NaN factor for
  // a matrix that is not positive definite, and qr's LinAlgError for a NaN input, after which the
  // program runs again.
  auto chol = [](const Tensor<double>& a) { return tx::linalg::cholesky_ex(a); };
  const auto spd = Tensor<double>::eye(3) * 2.0;
  const auto pc = tx::compile(chol, spd);
  (void)pc(spd);
  EXPECT_TRUE(has(step_line(pc.str(), "cholesky"), "[kernel, slots")) << pc.str();
  const auto bad = Tensor<double>::eye(3) * -1.0;
  const auto [l, info] = pc(bad);
  const auto [le, infoe] = chol(bad);
  EXPECT_EQ(info.item(), 1);
  expect_bitwise(l, le, "cholesky_ex factor of a matrix that is not positive definite");
  expect_bitwise(info, infoe, "cholesky_ex info");
  expect_bitwise(pc(spd), chol(spd), "cholesky_ex after the failure");

  auto qr = [](const Tensor<double>& a) { return tx::linalg::qr(a); };
  const auto a = Tensor<double>::randn({4, 3}, 1);
  const auto pq = tx::compile(qr, a);
  (void)pq(a);
  EXPECT_TRUE(has(step_line(pq.str(), "qr"), "[kernel, slots")) << pq.str();
  auto nan = a.contiguous();
  nan.mutable_data()[5] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW((void)pq(nan), tx::linalg::LinAlgError);
  const auto a2 = Tensor<double>::randn({4, 3}, 2);
  expect_bitwise(pq(a2), qr(a2), "qr after the failure");

  // The default variants raise in every run of a program, as eager does (the info check is a step
  // of the program), with the same message; the program then runs again.
  const auto sing = Tensor<double>::from_row_major({3, 3}, {1, 2, 0, 3, 5, 0, 4, 1, 0});
  const auto negd = Tensor<double>::eye(3) * -1.0;
  auto nanm = tx::clone(spd);
  nanm.mutable_data()[4] = std::numeric_limits<double>::quiet_NaN();
  const auto rhs = Tensor<double>::randn({3, 2}, 3);
  using Fn = std::function<Tensor<double>(const Tensor<double>&)>;
  const std::vector<std::tuple<std::string, Fn, Tensor<double>>> raising = {
      {"solve", [rhs](const Tensor<double>& x) { return tx::linalg::solve(x, rhs); }, sing},
      {"inv", [](const Tensor<double>& x) { return tx::linalg::inv(x); }, sing},
      {"cholesky", [](const Tensor<double>& x) { return tx::linalg::cholesky(x); }, negd},
      {"eigh", [](const Tensor<double>& x) { return tx::linalg::eigh(x).second; }, nanm},
      {"eigvalsh", [](const Tensor<double>& x) { return tx::linalg::eigvalsh(x); }, nanm},
      {"svd", [](const Tensor<double>& x) { return std::get<0>(tx::linalg::svd(x)); }, nanm},
      {"svdvals", [](const Tensor<double>& x) { return tx::linalg::svdvals(x); }, nanm},
      {"lu", [](const Tensor<double>& x) { return std::get<2>(tx::linalg::lu(x)); }, nanm},
      {"lu_factor", [](const Tensor<double>& x) { return tx::linalg::lu_factor(x).first; }, nanm},
      // only A's derivative is returned: the check must survive dead-code elimination
      {"grad of solve",
       [rhs](const Tensor<double>& x) {
         return tx::grad([&](const Tensor<double>& z) { return tx::sum(tx::linalg::solve(z, rhs)); }, x);
       },
       sing},
  };
  for (const auto& [name, f, bad] : raising) {
    SCOPED_TRACE(name);
    const auto p = tx::compile(f, spd);
    (void)p(spd);
    EXPECT_TRUE(has(p.str(), "info_check")) << p.str();
    std::string eager_what, compiled_what;
    try {
      (void)f(bad);
    } catch (const tx::linalg::LinAlgError& e) {
      eager_what = e.what();
    }
    try {
      (void)p(bad);
    } catch (const tx::linalg::LinAlgError& e) {
      compiled_what = e.what();
    }
    EXPECT_FALSE(eager_what.empty()) << "eager did not raise";
    EXPECT_EQ(compiled_what, eager_what);
    expect_bitwise(p(spd), f(spd), name + " after the failure");
  }
  // A singular matrix is no error for lu (lu_factor_ex reports the zero pivot): no raise there.
  const auto pl = tx::compile([](const Tensor<double>& x) { return std::get<2>(tx::linalg::lu(x)); }, spd);
  EXPECT_NO_THROW((void)pl(sing));

  // slogdet_ex's info is computed in the program (not the value the trace saw): 0, then k for an
  // exactly singular input, then -1 for a NaN one, as eager.
  auto sld = [](const Tensor<double>& x) { return tx::linalg::slogdet_ex(x); };
  const auto ps = tx::compile(sld, spd);
  auto singular = Tensor<double>::from_row_major({3, 3}, {1, 2, 0, 3, 5, 0, 4, 1, 0});
  auto nan3 = tx::clone(spd);
  nan3.mutable_data()[4] = std::numeric_limits<double>::quiet_NaN();
  for (const auto& [x, code] : {std::pair{spd, 0}, std::pair{singular, 3}, std::pair{nan3, -1}}) {
    const auto got = ps(x), want = sld(x);
    EXPECT_EQ(std::get<2>(got).item(), code);
    expect_bitwise(std::get<2>(got), std::get<2>(want), "slogdet_ex info");
    expect_bitwise(std::get<1>(got), std::get<1>(want), "slogdet_ex log|det|");
  }
}

// ---- random programs ------------------------------------------------------------------------------
// A random program over 4 x 4 values: each step applies one of these ops to two earlier values
// (maps, a view, matmul, triangles, a reduction broadcast back, a copy of a transpose, and the
// linalg kernels with inputs kept well conditioned and with separated spectra, so that every
// derivative exists).
constexpr int kRandomOps = 14;

Tensor<double> random_step(int op, const Tensor<double>& a, const Tensor<double>& b) {
  const auto I = Tensor<double>::eye(4);
  const auto D = tx::diag_embed(Tensor<double>::from_col_major({4}, {0.0, 3.0, 6.0, 9.0}));
  const auto t = tx::tanh(a) * 0.25;
  switch (op) {
    case 0:
      return tx::exp(tx::tanh(a)) + b;
    case 1:
      return tx::tanh(a) * b;
    case 2:
      return a - b * 0.5;
    case 3:
      return tx::transpose(a);
    case 4:
      return tx::matmul(tx::tanh(a), tx::tanh(b)) * 0.25;
    case 5:
      return tx::tril(a, 0) + tx::triu(b, 1);
    case 6:
      return tx::expand(tx::sum(a, {0}, true), {4, 4});
    case 7:
      return tx::reshape(tx::transpose(tx::sigmoid(a)), {2, 8}).reshape({4, 4});
    case 8:
      return tx::linalg::qr(t + D + I).first + b;
    case 9:
      return tx::linalg::solve(t + I * 4.0, b);
    case 10:
      return tx::linalg::cholesky(tx::matmul(t, tx::transpose(t)) + I * 4.0);
    case 11:
      return tx::linalg::eigh(t + tx::transpose(t) + D).second * b;
    case 12:
      return std::get<0>(tx::linalg::svd(t + D)) + tx::linalg::slogdet(t + I * 2.0).second;
    default:
      return tx::linalg::lu_factor(t + D + I).first - tx::linalg::det(t + I) * b;
  }
}

struct RandomProgram {
  std::vector<std::array<int, 3>> steps;  // op, operand, operand (indices into the values)
  int out_a, out_b, out_view;             // values returned: two, and the transpose of a third
  std::tuple<Tensor<double>, Tensor<double>, Tensor<double>> operator()(const Tensor<double>& x,
                                                                        const Tensor<double>& y) const {
    std::vector<Tensor<double>> v{x, y};
    for (const auto& s : steps) v.push_back(random_step(s[0], v[s[1]], v[s[2]]));
    return {v[out_a], v[out_b], tx::transpose(v[out_view])};
  }
};

RandomProgram random_program(unsigned seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  RandomProgram p;
  const int n = 8 + pick(10);
  for (int k = 0; k < n; ++k) {
    const int have = 2 + k;
    // Operands mostly recent values (long chains), sometimes any earlier one (long lifetimes).
    auto operand = [&] { return pick(3) == 0 ? pick(have) : std::max(0, have - 1 - pick(3)); };
    p.steps.push_back({pick(kRandomOps), operand(), operand()});
  }
  const int total = 2 + n;
  p.out_a = total - 1;
  p.out_b = 2 + pick(n);
  p.out_view = pick(total);
  return p;
}

TEST(TracePlan, RandomProgramsMatchEager) {
  // Differential test of the plan (kernels, views, slots shared by lifetime, in place): random
  // programs and their gradients, compiled, match eager bit for bit on the first run and on
  // prepared runs at other values, and results handed out earlier are never overwritten.
  const auto x = [](int s) { return Tensor<double>::randn({4, 4}, s); };
  int prepared = 0;
  for (unsigned seed = 1; seed <= 64; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const RandomProgram f = random_program(seed);
    auto g = [f](const Tensor<double>& a, const Tensor<double>& b) {
      return tx::grad(
          [f](const Tensor<double>& u, const Tensor<double>& w) {
            const auto [o1, o2, o3] = f(u, w);
            return tx::sum(o1 * o2) + tx::sum(tx::tanh(o3));
          },
          a, b);
    };
    const auto pf = tx::compile(f, x(1), x(2));
    const auto pg = tx::compile(g, x(1), x(2));
    const auto f0 = pf(x(1), x(2));
    const auto g0 = pg(x(1), x(2));
    prepared += pf.program().prepared() && pg.program().prepared();
    show(pg.str());
    for (int k = 3; k < 7; k += 2) {
      expect_bitwise(pf(x(k), x(k + 1)), f(x(k), x(k + 1)), "function, inputs " + std::to_string(k));
      expect_bitwise(pg(x(k), x(k + 1)), g(x(k), x(k + 1)), "gradient, inputs " + std::to_string(k));
    }
    expect_bitwise(f0, f(x(1), x(2)), "the first run's function result after later runs");
    expect_bitwise(g0, g(x(1), x(2)), "the first run's gradient after later runs");
  }
  EXPECT_EQ(prepared, 64);
}

TEST(TracePlan, ElementwiseChainAllocatesOnlyItsOutput) {
  // Every intermediate of the chain lives in the plan's slots (shared in place), so a prepared run
  // takes from the pool only the output's body and storage. (A chain this short on so few
  // elements is not fused: test_trace_fusion.cpp.)
  auto f = [](const Tensor<double>& x) { return tx::tanh(tx::sigmoid(tx::exp(x * 0.5) + 1.0) * 2.0) - 0.25; };
  const auto x = Tensor<double>::randn({32, 16}, 1);
  const auto p = tx::compile(f, x);
  (void)p(x);  // prepares
  const std::string dump = p.str();
  show(dump);
  EXPECT_EQ(p.program().kernel_steps(), 7u) << dump;
  EXPECT_EQ(p.program().slots(), 1u) << dump;  // each step overwrites the previous intermediate
  EXPECT_EQ(p.program().slot_bytes(), 32 * 16 * 8) << dump;
  const auto held = p(x);  // (a run while the last result is held: see the next test)
  const auto y = tx::ttest::expect_allocates_only_its_output([&] { return p(x); });
  expect_bitwise(y, f(x), "elementwise chain");
}

TEST(TracePlan, AnOutputLetGoIsWrittenAgainByTheNextRun) {
  // A small output a prepared run hands out is kept by the program (with the run's before): a
  // later run writes into it when the caller has let it go (no allocation), and never while
  // anything still refers to it:
  // the result itself, a view of it, or a result the caller marked as requiring grad.
  auto f = [](const Tensor<double>& x) { return std::pair{tx::exp(x) * 2.0, tx::sum(x)}; };
  const auto x = Tensor<double>::randn({3, 4}, 1), x2 = Tensor<double>::randn({3, 4}, 2);
  const auto p = tx::compile(f, x);
  (void)p(x);  // prepares
  const tx::detail::TensorImpl* body = nullptr;
  {
    const auto r = p(x);
    body = r.first.impl().get();
  }
  tx::reset_allocator_stats();
  const auto again = p(x2);
  EXPECT_EQ(again.first.impl().get(), body);
  EXPECT_EQ(tx::allocator_stats().pool_hits + tx::allocator_stats().pool_misses, 0)
      << "outputs let go are written again";
  expect_bitwise(again, f(x2), "a run into the outputs let go");

  // `y = p(x)` in a loop holds the last result while the run makes the next: the one before it
  // is free.
  auto y = p(x);
  y = p(x2);
  tx::reset_allocator_stats();
  for (int k = 0; k < 3; ++k) y = p(k % 2 ? x : x2);
  EXPECT_EQ(tx::allocator_stats().pool_hits + tx::allocator_stats().pool_misses, 0)
      << "the results of the run before the last are written again";
  expect_bitwise(y, f(x2), "y = p(x) in a loop");

  // Still held: the next run makes new outputs and leaves these alone.
  const auto held = p(x);
  const auto next = p(x2);
  EXPECT_NE(next.first.impl().get(), held.first.impl().get());
  expect_bitwise(held, f(x), "a result held across a run");
  expect_bitwise(next, f(x2), "the run after it");

  // A view of a result keeps its storage: not written again either.
  Tensor<double> view;
  {
    const auto r = p(x);
    view = tx::transpose(r.first);
  }
  (void)p(x2);
  expect_bitwise(view, tx::transpose(f(x).first), "a view of a result let go");

  // Nor is a result a leaf that requires grad was made from (it shares the result's data).
  Tensor<double> leaf;
  {
    const auto r = p(x);
    leaf = r.first.requires_grad(true);
  }
  expect_bitwise(p(x2), f(x2), "a run after a leaf was made from a result");
  expect_bitwise(leaf.detach(), f(x).first, "the leaf made from a result let go");
}

TEST(TracePlan, OutputsThatViewIntermediatesAreNotInSlots) {
  // The output is a view of an intermediate and another output reads the same buffer: that buffer
  // is allocated per run, so results handed out earlier are never overwritten.
  auto f = [](const Tensor<double>& x) {
    const auto t = tx::exp(x);
    return std::pair{tx::transpose(t), tx::sum(t * 2.0)};
  };
  const auto x = Tensor<double>::randn({3, 4}, 1);
  const auto p = tx::compile(f, x);
  const auto r1 = p(x);
  const auto x2 = Tensor<double>::randn({3, 4}, 2);
  const auto r2 = p(x2);
  const auto r3 = p(Tensor<double>::randn({3, 4}, 3));
  show(p.str());
  expect_bitwise(r1, f(x), "first result after later runs");
  expect_bitwise(r2, f(x2), "second result after a later run");
  // exp's buffer is shared with an output (through the transpose): a kernel step without a slot.
  const std::string dump = p.str();
  const std::size_t at = dump.find("= exp(%0)");
  ASSERT_NE(at, std::string::npos) << dump;
  const std::string line = dump.substr(at, dump.find('\n', at) - at);
  EXPECT_TRUE(has(line, "[kernel]")) << line;
}

TEST(TracePlan, ViewsOfOtherDtypesAndStridedRawInputs) {
  // real/imag of a complex value are views with another dtype; the plan keeps their offsets in
  // bytes. A raw Program::run with a strided input (other strides than the first run) runs the
  // forwards and still matches eager.
  auto f = [](const Tensor<tx::c128>& z) {
    const auto w = tx::exp(z * tx::c128(0.5, 0.25));
    return tx::sum(tx::real(w) * tx::imag(w));
  };
  const auto z = Tensor<tx::c128>::randn({4, 3}, 1);
  const auto p = tx::compile(f, z);
  (void)p(z);
  show(p.str());
  EXPECT_GE(p.program().view_steps(), 2u) << p.str();
  const auto z2 = Tensor<tx::c128>::randn({4, 3}, 2);
  expect_bitwise(p(z2), f(z2), "complex views");

  auto g = [](const Tensor<double>& a) { return tx::exp(a) * 2.0 + tx::transpose(tx::transpose(a)); };
  const auto a = Tensor<double>::randn({3, 3}, 4);
  tx::ir::Program q(tx::trace(g, a).graph());
  auto run = [&](const Tensor<double>& in) {
    const tx::detail::ImplPtr ins[] = {in.impl()};
    tx::detail::ImplPtr outs[1];
    q.run(ins, 1, outs);
    return Tensor<double>(outs[0]);
  };
  (void)run(a);  // prepares for contiguous inputs
  ASSERT_TRUE(q.prepared());
  const auto at = tx::transpose(Tensor<double>::randn({3, 3}, 5));  // strides {3, 1}
  expect_bitwise(run(at), g(at), "strided raw input");
  expect_bitwise(run(at.contiguous()), g(at), "back on the plan");
}

TEST(TracePlan, AFirstRunWithOneTensorForTwoInputsDoesNotPrepare) {
  // The plan ties a kernel's operands to node inputs by identity in the first run: a first run with
  // the same tensor for x and y (or a constant passed as an input) must not tie them wrongly.
  auto f = [](const Tensor<double>& x, const Tensor<double>& y) { return tx::sub(x, tx::transpose(y)) * 2.0; };
  const auto a = Tensor<double>::randn({3, 3}, 1), b = Tensor<double>::randn({3, 3}, 2);
  const auto p = tx::compile(f, a, b);
  expect_bitwise(p(a, a), f(a, a), "first run, one tensor for both inputs");
  EXPECT_FALSE(p.program().prepared());
  expect_bitwise(p(a, b), f(a, b), "distinct inputs (prepares)");
  EXPECT_TRUE(p.program().prepared());
  expect_bitwise(p(b, a), f(b, a), "prepared run");
  expect_bitwise(p(a, a), f(a, a), "prepared run, one tensor for both inputs");

  const auto w = Tensor<double>::randn({3}, 3);
  auto g = [w](const Tensor<double>& x) { return tx::sub(x, w); };
  const auto q = tx::compile(g, b.slice(1, 0, 1).reshape({3}).contiguous());
  expect_bitwise(q(w), g(w), "first run, the constant as the input");
  EXPECT_FALSE(q.program().prepared());
  const auto z = Tensor<double>::randn({3}, 4);
  expect_bitwise(q(z), g(z), "distinct input (prepares)");
  expect_bitwise(q(Tensor<double>::randn({3}, 5)), g(Tensor<double>::randn({3}, 5)), "prepared run");
}

TEST(TracePlan, ACopyOfAPreparedProgramHasItsOwnPlan) {
  // Copies must not share slots or scratch: two copies run one after the other (or on two
  // threads) each keep their own results.
  auto f = [](const Tensor<double>& x) { return tx::sum(tx::exp(x * 0.5) * 3.0, {0}, false); };
  const auto x = Tensor<double>::randn({4, 5}, 1);
  tx::ir::Program p1(tx::trace(f, x).graph());
  auto run = [](tx::ir::Program& p, const Tensor<double>& in) {
    const tx::detail::ImplPtr ins[] = {in.impl()};
    tx::detail::ImplPtr outs[1];
    p.run(ins, 1, outs);
    return Tensor<double>(outs[0]);
  };
  (void)run(p1, x);
  ASSERT_TRUE(p1.prepared());
  tx::ir::Program p2 = p1;
  EXPECT_FALSE(p2.prepared());
  EXPECT_EQ(p2.slots(), 0u);
  const auto y = Tensor<double>::randn({4, 5}, 2);
  const auto r1 = run(p1, x);
  (void)run(p2, y);  // prepares p2
  const auto r2 = run(p2, y);
  expect_bitwise(r1, f(x), "p1's result after p2 ran");
  expect_bitwise(r2, f(y), "p2's result");
  EXPECT_GE(p2.slots(), 1u);
}

TEST(TracePlan, AnomalyModeRunsTheForwards) {
  auto f = [](const Tensor<double>& x) { return tx::log(tx::exp(x) - 1.0); };
  const auto x = Tensor<double>::full({3}, 1.0);
  const auto p = tx::compile(f, x);
  (void)p(x);
  ASSERT_TRUE(p.program().prepared());
  tx::AnomalyGuard checks(true, false);
  try {
    (void)p(Tensor<double>::full({3}, 0.0));  // log(0): the step is named
    ADD_FAILURE() << "anomaly mode did not check the prepared program's steps";
  } catch (const tx::Error& e) {
    EXPECT_TRUE(has(e.what(), "compiled step")) << e.what();
  }
}

}  // namespace
