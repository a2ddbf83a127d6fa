// trace -> compile -> run: the graph, its passes, the signature checks, the allocation-free
// prepared run and the shape-keyed cache.
#include <gtest/gtest.h>

#include <atomic>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include <string>

#include "support/messages.hpp"
#include "tenax/tenax.hpp"
#include "trace/trace_support.hpp"

namespace tx = tenax;
using tx::Tensor;
using tx::ttest::expect_bitwise;
using tx::ttest::expect_compiled_matches_eager;

namespace {

using tx::testing::has;

TEST(Trace, GraphRecordsOpsInputsAndConstants) {
  const auto c = Tensor<double>::full({3}, 2.0);
  auto f = [&](const Tensor<double>& x, const Tensor<double>& y) { return tx::sum(tx::exp(x) * y + c); };
  const auto g = tx::trace(f, Tensor<double>::randn({3}, 1), Tensor<double>::randn({3}, 2));
  const std::string s = g.str();
  EXPECT_TRUE(has(s, "%0 = input 0 : f64[3]")) << s;
  EXPECT_TRUE(has(s, "%1 = input 1 : f64[3]")) << s;
  EXPECT_TRUE(has(s, "= constant : f64[3]")) << s;
  EXPECT_TRUE(has(s, "= exp(%0)")) << s;
  EXPECT_TRUE(has(s, "= sum(")) << s;
  EXPECT_EQ(g.graph().nodes.size(), 4u) << s;  // exp, mul, add, sum
  EXPECT_EQ(g.graph().outputs.size(), 1u);
}

TEST(Trace, ConstantFoldingDeadCodeAndCommonSubexpressions) {
  const auto a = Tensor<double>::full({4}, 0.5), b = Tensor<double>::full({4}, 0.25);
  auto f = [&](const Tensor<double>& x) {
    const auto unused = tx::sin(x) * 3.0;  // dead
    (void)unused;
    const auto k = tx::exp(a + b);       // input-independent: folded while tracing
    return tx::exp(x) * k + tx::exp(x);  // exp(x) twice: one after CSE
  };
  const auto x0 = Tensor<double>::randn({4}, 3);
  const auto g = tx::trace(f, x0);
  EXPECT_EQ(g.graph().constants.size(), 1u) << g.str();  // exp(a + b), computed once
  const auto p = tx::compile(g);
  EXPECT_EQ(p.program().cse_merged(), 1u) << p.str();
  EXPECT_GE(p.program().dce_removed(), 2u) << p.str();         // sin and its product
  EXPECT_EQ(p.program().graph().nodes.size(), 3u) << p.str();  // exp, mul, add
  expect_bitwise(p(Tensor<double>::randn({4}, 5)), f(Tensor<double>::randn({4}, 5)), "folded program");
  const std::string s = p.str();
  EXPECT_TRUE(has(s, "merged by CSE")) << s;
  EXPECT_TRUE(has(s, "plan peak")) << s;
}

TEST(Trace, SignatureMismatchIsAClearError) {
  auto f = [](const Tensor<double>& x) { return tx::sum(x * x); };
  const auto p = tx::compile(f, Tensor<double>::randn({2, 3}, 1));
  try {
    p(Tensor<double>::randn({3, 2}, 1));
    FAIL() << "no error";
  } catch (const tx::Error& e) {
    const std::string m = e.what();
    EXPECT_TRUE(has(m, "[compiled]")) << m;
    EXPECT_TRUE(has(m, "[2, 3]")) << m;
    EXPECT_TRUE(has(m, "[3, 2]")) << m;
    EXPECT_TRUE(has(m, "f64")) << m;
  }
  const auto g = tx::trace(f, Tensor<double>::randn({2, 3}, 1));
  EXPECT_THROW(g(Tensor<double>::randn({2, 2}, 1)), tx::Error);
}

TEST(Trace, PreparedRunMakesNoSystemAllocationAfterTheFirst) {
  auto f = [](const Tensor<double>& A, const Tensor<double>& b) {
    return tx::grad(
        [](const Tensor<double>& a, const Tensor<double>& v) {
          return tx::sum(tx::linalg::solve(a, v) * tx::tanh(tx::matmul(a, v)));
        },
        A, b);
  };
  const auto A = Tensor<double>::randn({6, 6}, 1) + Tensor<double>::eye(6, 6) * 6.0;
  const auto b = Tensor<double>::randn({6, 2}, 2);
  const auto p = tx::compile(f, A, b);
  (void)p(A, b);  // warms the pool
  tx::reset_allocator_stats();
  for (int i = 0; i < 10; ++i) (void)p(A, b);
  const auto st = tx::allocator_stats();
  EXPECT_EQ(st.system_allocs, 0);
  EXPECT_EQ(st.pool_misses, 0);
  EXPECT_GT(st.pool_hits, 0);
}

TEST(Trace, ElementwiseStepsRunInPlaceOfDyingInputs) {
  // A chain of elementwise ops: every intermediate dies at its reader, so each step after the
  // first writes into its input's buffer; the program's inputs and a value still read later (u,
  // read by the last step) and the output are never overwritten.
  auto f = [](const Tensor<double>& x, const Tensor<double>& y) {
    const auto u = tx::exp(x * 0.5);
    return tx::tanh(tx::sigmoid(u + y) * 2.0 - 1.0) + u;
  };
  const auto x = Tensor<double>::randn({64, 32}, 1), y = Tensor<double>::randn({64, 32}, 2);
  const auto p = tx::compile(f, x, y);
  const std::string dump = p.str();
  int in_place = 0;
  for (std::size_t at = dump.find("in place of"); at != std::string::npos; at = dump.find("in place of", at + 1))
    ++in_place;
  EXPECT_GE(in_place, 3) << dump;
  const auto x2 = Tensor<double>::randn({64, 32}, 3), y2 = Tensor<double>::randn({64, 32}, 4);
  const auto x2_before = x2.contiguous().to_vector(), y2_before = y2.contiguous().to_vector();
  const auto eager = f(x2, y2).contiguous().to_vector();
  // Peak bytes of one run above what was live before it.
  auto run_peak = [&] {
    tx::reset_allocator_stats();
    const std::int64_t before = tx::allocator_stats().bytes_live;
    const auto out = p(x2, y2);
    return std::pair{tx::allocator_stats().bytes_peak - before, out.contiguous().to_vector()};
  };
  (void)p(x2, y2);  // warms the pool
  const auto [peak, compiled] = run_peak();
  ASSERT_EQ(eager.size(), compiled.size());
  EXPECT_EQ(std::memcmp(eager.data(), compiled.data(), eager.size() * sizeof(double)), 0);
  EXPECT_EQ(x2.contiguous().to_vector(), x2_before);  // inputs untouched
  EXPECT_EQ(y2.contiguous().to_vector(), y2_before);
  // Anomaly mode runs every step out of place: the same bits, a higher peak.
  std::int64_t peak_out_of_place = 0;
  {
    tx::AnomalyGuard checks(true, false);
    const auto [peak2, values2] = run_peak();
    peak_out_of_place = peak2;
    EXPECT_EQ(values2, compiled);
  }
  EXPECT_LT(peak, peak_out_of_place) << dump;
  if (std::getenv("TENAX_TEST_VERBOSE"))
    std::cout << "peak " << peak << " B in place, " << peak_out_of_place << " B out of place\n";
  // A view of a dying value keeps its storage shared: no step may overwrite it.
  auto g = [](const Tensor<double>& x) {
    const auto t = tx::exp(x);
    const auto v = tx::transpose(t);  // shares t's storage
    return std::tuple{tx::tanh(t), v};
  };
  const auto pg = tx::compile(g, x);
  const auto [a, b] = pg(x2);
  const auto [ea, eb] = g(x2);
  EXPECT_EQ(a.contiguous().to_vector(), ea.contiguous().to_vector());
  EXPECT_EQ(b.contiguous().to_vector(), eb.contiguous().to_vector()) << pg.str();
}

TEST(Trace, RunsAtOtherValuesThanTheExamples) {
  auto f = [](const Tensor<double>& x, const Tensor<double>& y) {
    return std::tuple{tx::matmul(x, y), tx::sum(tx::relu(x - 0.1), {1}), tx::max(y)};
  };
  expect_compiled_matches_eager("matmul/relu/max", f,
                                std::tuple{Tensor<double>::randn({3, 4}, 1), Tensor<double>::randn({4, 2}, 2)},
                                std::tuple{Tensor<double>::randn({3, 4}, 3), Tensor<double>::randn({4, 2}, 4)});
}

TEST(Trace, NonContiguousInputsRunAsContiguous) {
  auto f = [](const Tensor<double>& x) { return tx::exp(x) * 2.0; };
  const auto p = tx::compile(f, Tensor<double>::randn({3, 4}, 1));
  const auto big = Tensor<double>::randn({4, 3}, 2);
  const auto view = big.mT();  // 3 x 4, transposed strides
  expect_bitwise(p(view), f(view.contiguous()), "transposed input");
}

TEST(Trace, JitCompilesOncePerSignature) {
  auto j = tx::jit([](const auto& x) { return tx::sum(tx::square(x)); });
  const auto a = Tensor<double>::randn({3}, 1), b = Tensor<double>::randn({3}, 2), c = Tensor<double>::randn({5}, 3);
  expect_bitwise(j(a), tx::sum(tx::square(a)), "jit a");
  expect_bitwise(j(b), tx::sum(tx::square(b)), "jit b");
  EXPECT_EQ(j.compilations(), 1u);
  expect_bitwise(j(c), tx::sum(tx::square(c)), "jit c");
  EXPECT_EQ(j.compilations(), 2u);
  (void)j(a);
  (void)j(Tensor<float>::randn({3}, 4));  // another dtype: another program
  EXPECT_EQ(j.compilations(), 3u);
}

// Several threads may call one Jit: each call runs a program no other call is running (a copy
// compiled from the same trace when all are busy), so results are right and nothing crashes.
TEST(Trace, JitFromSeveralThreads) {
  auto f = [](const Tensor<double>& x, const Tensor<double>& y) {
    const Tensor<double> t = tx::exp(x * 0.1);
    return tx::sum(tx::sin(tx::matmul(t, y)) + t, {0});
  };
  auto j = tx::jit(f);
  std::vector<Tensor<double>> xs, ys, want;
  for (int i = 0; i < 6; ++i) {
    xs.push_back(Tensor<double>::randn({8, 8}, 10 + i));
    ys.push_back(Tensor<double>::randn({8, 8}, 20 + i));
    want.push_back(f(xs.back(), ys.back()));
  }
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int id = 0; id < 4; ++id)
    threads.emplace_back([&, id] {
      for (int it = 0; it < 200; ++it) {
        const int i = (it + id) % 6;
        const auto r = j(xs[i], ys[i]).to_vector();
        if (r != want[i].to_vector()) ++wrong;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(j.compilations(), 1u);
  EXPECT_GE(j.programs(), 1u);
  EXPECT_LE(j.programs(), 4u);
}

// One Compiled shared by threads: a run that finds the program running raises (it used to crash).
TEST(Trace, SharedCompiledRaisesInsteadOfRacing) {
  auto f = [](const Tensor<double>& x) { return tx::sum(tx::tanh(tx::matmul(x, x)), {0}); };
  const auto x = Tensor<double>::randn({64, 64}, 1);
  const auto p = tx::compile(f, x);
  const auto want = f(x).to_vector();
  std::atomic<int> wrong{0}, busy{0};
  std::vector<std::thread> threads;
  for (int id = 0; id < 2; ++id)
    threads.emplace_back([&] {
      for (int it = 0; it < 300; ++it) {
        try {
          if (p(x).to_vector() != want) ++wrong;
        } catch (const tx::Error& e) {
          if (has(e.what(), "already running on another thread"))
            ++busy;
          else
            ++wrong;
        }
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(p(x).to_vector(), want);  // and the program still works
}

// A compiled result is the caller's to write into, as an eager one is: outputs that are graph
// constants (input-independent, here the gradient of an unused input and a folded c * 3) or that
// are the same value twice (merged subexpressions) are copies, so no write changes another result
// or a later run's.
TEST(Trace, SharedOutputsAreFreshTensors) {
  const auto c = Tensor<double>::randn({3}, 5);
  auto loss = [](const Tensor<double>& a, const Tensor<double>&) { return tx::sum(a * a); };
  auto f = [&](const Tensor<double>& a, const Tensor<double>& b) {
    auto [ga, gb] = tx::grad(loss, a, b);
    return std::tuple{ga, gb, c * 3.0, tx::exp(a), tx::exp(a)};
  };
  const auto x = Tensor<double>::randn({3}, 6), y = Tensor<double>::randn({3}, 7);
  const auto p = tx::compile(f, x, y);
  EXPECT_TRUE(p.program().output_shared(1));
  EXPECT_TRUE(p.program().output_shared(2));
  EXPECT_FALSE(p.program().output_shared(3));
  EXPECT_TRUE(p.program().output_shared(4));
  auto r1 = p(x, y);
  std::get<1>(r1).mutable_data()[0] = 5.0;
  std::get<2>(r1).mutable_data()[0] = 5.0;
  std::get<3>(r1).mutable_data()[0] = 5.0;
  EXPECT_NE(std::get<4>(r1).to_vector()[0], 5.0);
  const auto r2 = p(x, y);
  EXPECT_EQ(std::get<1>(r2).to_vector(), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(std::get<2>(r2).to_vector(), (c * 3.0).to_vector());
  EXPECT_NE(std::get<1>(r1).impl(), std::get<1>(r2).impl());
  expect_bitwise(std::get<4>(r2), tx::exp(x), "second exp(x)");
}

TEST(Trace, CompiledIsNeitherDifferentiableNorTraceable) {
  // A prepared run records nothing: its results would silently be constants to a trace or a
  // transform, so each of those calls raises instead.
  auto f = [](const Tensor<double>& x) { return tx::sum(tx::sin(x) * x); };
  const auto x = Tensor<double>::randn({3}, 1);
  const auto p = tx::compile(f, x);
  auto expect_raise = [](auto&& call, const char* what) {
    try {
      call();
      ADD_FAILURE() << "no error";
    } catch (const tx::Error& e) {
      const std::string m = e.what();
      EXPECT_TRUE(has(m, "[compiled]")) << m;
      EXPECT_TRUE(has(m, what)) << m;
    }
  };
  expect_raise([&] { (void)tx::grad([&](const Tensor<double>& y) { return p(y); }, x); }, "requires grad");
  expect_raise([&] { (void)tx::jvp([&](const Tensor<double>& y) { return p(y); }, x, x); }, "tangent");
  expect_raise([&] { (void)tx::trace([&](const Tensor<double>& y) { return p(y) * 2.0; }, x); }, "trace()");
  // Without a transform, a leaf input is fine when recording is off; the Traced differentiates.
  {
    tx::NoGradGuard off;
    EXPECT_NO_THROW((void)p(x.requires_grad()));
  }
  const auto g = tx::trace(f, x);
  expect_bitwise(tx::grad([&](const Tensor<double>& y) { return g(y); }, x), tx::grad(f, x), "grad of the Traced");
}

// Graph transforms honour what the traced function cut off from differentiation: detach() is a
// node of its own (a shallow copy would stand for its input), ops run under no_grad re-run with
// recording off (a traced backward pass, which also runs with recording off, stays differentiable).
TEST(Trace, DetachAndNoGradStopGraphTransforms) {
  using D = Tensor<double>;
  const D x0 = D::randn({3}, 1), x1 = D::randn({3}, 2), v = D::randn({3}, 3);
  const auto f_detach = [](const D& x) { return tx::sum(x.detach() * x); };
  const auto f_no_grad = [](const D& x) {
    D c;
    {
      tx::no_grad off;
      c = tx::exp(x);
    }
    return tx::sum(c * x);
  };
  const auto f_tangent = [](const D& x) { return tx::sin(x.detach()) * x; };
  for (const auto& case_ :
       {std::pair<std::string, std::function<D(const D&)>>{"detach", f_detach}, {"no_grad", f_no_grad}}) {
    const std::string& name = case_.first;
    const auto f = case_.second;  // (a copy: clang 14 lambdas cannot capture structured bindings)
    const auto g = tx::trace(f, x0);
    const D want = tx::grad(f, x1);
    expect_bitwise(tx::compile(tx::grad(g))(x1), want, name + ": compile(grad(trace))");
    expect_bitwise(tx::grad([&](const D& a) { return g(a); }, x1), want, name + ": grad of the Traced");
    expect_bitwise(tx::compile(tx::trace([&](const D& a) { return tx::grad(f, a); }, x0))(x1), want,
                   name + ": compile(trace(grad))");
  }
  EXPECT_TRUE(has(tx::trace(f_detach, x0).str(), "detach(%0)")) << tx::trace(f_detach, x0).str();
  // detach drops the tangent; no_grad keeps it (as in eager mode).
  const auto g = tx::trace(f_tangent, x0);
  expect_bitwise(std::get<1>(tx::compile(tx::jvp(g))(x1, v)), tx::jvp(f_tangent, x1, v).second, "jvp through detach");
  const auto h = tx::trace(f_no_grad, x0);
  expect_bitwise(std::get<1>(tx::compile(tx::jvp(h))(x1, v)), tx::jvp(f_no_grad, x1, v).second, "jvp through no_grad");
  // A traced gradient stays differentiable: the hvp of the Traced gradient equals eager's.
  const auto q = [](const D& x) { return tx::sum(tx::exp(x) * x); };
  const auto tg = tx::trace([&](const D& a) { return tx::grad(q, a); }, x0);
  expect_bitwise(tx::jvp([&](const D& a) { return tg(a); }, x1, v).second, tx::hvp(q, x1, v),
                 "jvp of the traced gradient");
  // The value value_and_grad returns is the function's, not cut off, when its graph is differentiated.
  const auto vg = tx::trace([&](const D& a) { return tx::value_and_grad(q, a).first; }, x0);
  expect_bitwise(tx::grad([&](const D& a) { return vg(a); }, x1), tx::grad(q, x1), "grad of a traced value_and_grad");
  // A graph with a detach node re-traced (a transform of a transform), and a trace taken inside
  // the caller's no_grad (which cuts nothing off inside the function).
  const auto gd = tx::trace(f_detach, x0);
  expect_bitwise(std::get<1>(tx::jvp(tx::grad(gd))(x1, v)), tx::hvp(f_detach, x1, v), "jvp of grad through detach");
  ::std::optional<tx::Traced<D, double>> off;
  {
    tx::no_grad ng;
    off.emplace(tx::trace(q, x0));
  }
  expect_bitwise(tx::grad(*off)(x1), tx::grad(q, x1), "trace taken under no_grad");
}

// real() of a complex value whose view geometry is unchanged (0-d, or all strides 0) is another
// value of another dtype, not an alias of its input.
TEST(Trace, RealOfAComplexScalarIsANewValue) {
  using Z = Tensor<std::complex<double>>;
  const auto f = [](const Z& z) {
    const Z s = tx::sum(z);
    return tx::real(s) + tx::real(s * s);
  };
  expect_compiled_matches_eager("real of a 0-d complex", f, std::tuple{Z::randn({3}, 1)}, std::tuple{Z::randn({3}, 2)});
  const auto g = [](const Z& z) { return tx::real(z) * 2.0 + tx::imag(z); };
  expect_compiled_matches_eager("real of a broadcast complex", g, std::tuple{tx::broadcast_to(Z::randn({}, 3), {4})},
                                std::tuple{tx::broadcast_to(Z::randn({}, 4), {4})});
}

// A view op whose output has its input's layout (an identity permute, a reshape or expand to the
// same shape, a full slice) gives that same value: the node defines nothing new, and prepared runs
// read the input (before, the node redefined its own input and the second run read a released body).
TEST(Trace, IdentityViewsAreTheirInputs) {
  using TD = Tensor<double>;
  const auto f = [](const TD& x) {
    const TD y = tx::exp(x);
    const TD v = tx::permute(tx::expand(tx::reshape(tx::slice(y, 0, 0, 3), {3, 2, 1}), {3, 2, 1}), {0, 1, 2});
    return tx::add(tx::transpose(tx::permute(v, {0, 1, 2}), 0, 0), v);
  };
  expect_compiled_matches_eager("identity views", f, std::tuple{TD::randn({3, 2, 1}, 5)},
                                std::tuple{TD::randn({3, 2, 1}, 6)});
}

TEST(Trace, NestedTraceIsAnError) {
  auto inner = [](const Tensor<double>& x) { return x * 2.0; };
  auto outer = [&](const Tensor<double>& x) { return tx::trace(inner, x)(x); };
  EXPECT_THROW(tx::trace(outer, Tensor<double>::randn({2}, 1)), tx::Error);
}

}  // namespace
