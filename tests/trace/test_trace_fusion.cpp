// Fused chains of maps in a prepared program (trace/program.hpp, Program::Fusion): consecutive
// elementwise steps of one shape run as one loop over blocks, with the values only the chain reads
// kept in block registers. Checked: which steps fuse and what they keep in memory, results
// bit-identical to eager at every size (one block, several, a partial last block, a split over
// threads), dtypes of every width, broadcast scalars, values the chain shares with later steps or
// hands out, chains longer than the registers allow, a full sum that ends a chain, what a fused
// prepared run allocates, and that short chains of small values stay kernel steps
// (Program::kFuseMinSteps, kFuseMinElements).
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <tuple>

#include "support/messages.hpp"
#include "tenax/tenax.hpp"
#include "trace/trace_support.hpp"

namespace tx = tenax;
using tx::Tensor;
using tx::testing::has;
using tx::ttest::expect_bitwise;
using tx::ttest::show;

namespace {

// Restores the thread budget at scope exit.
struct Threads {
  int saved = tx::num_threads();
  explicit Threads(int n) { tx::set_num_threads(n); }
  ~Threads() { tx::set_num_threads(saved); }
};

// Compiles f at x0..., then checks runs at other inputs of the same signature against eager f.
template <class F, class... T>
std::string check_runs(F f, const Tensor<T>&... x0) {
  const auto p = tx::compile(f, x0...);
  expect_bitwise(p(x0...), f(x0...), "first run");
  for (int k = 1; k <= 3; ++k) {
    const auto shift = [k](const auto& x) {
      return x * static_cast<typename std::decay_t<decltype(x)>::value_type>(k);
    };
    expect_bitwise(p(shift(x0)...), f(shift(x0)...), "run " + std::to_string(k));
  }
  return p.str();
}

// A chain with a broadcast scalar tensor, a comparison (bool), where, a cast and unary maps; `a`
// is also read after the chain (by the sum), so it stays in memory.
auto chain = [](const Tensor<double>& x, const Tensor<double>& y, const Tensor<double>& s) {
  const auto a = tx::exp(x * 0.5) + y;
  const auto b = tx::where(tx::gt(a, Tensor<double>::ones({})), a, -a);
  const auto c = tx::cast<double>(tx::cast<float>(tx::tanh(b) * s));
  return std::make_tuple(c - 0.25, tx::sum(a));
};

TEST(TraceFusion, AChainOfMapsIsOneFusedLoop) {
  const auto x = Tensor<double>::randn({37, 11}, 1), y = Tensor<double>::randn({37, 11}, 2);
  const auto s = Tensor<double>::full({}, 1.5);
  const std::string dump = check_runs(chain, x, y, s);
  show(dump);
  EXPECT_TRUE(has(dump, "fused 0..")) << dump;
  EXPECT_TRUE(has(dump, "register")) << dump;
  // The value the sum reads after the chain is written to memory (a slot), not kept in a register.
  const auto p = tx::compile(chain, x, y, s);
  (void)p(x, y, s);
  const std::string prepared = p.str();
  bool a_in_memory = false;
  std::size_t pos = 0;
  while ((pos = prepared.find("= add(", pos)) != std::string::npos) {
    const std::string line = prepared.substr(pos, prepared.find('\n', pos) - pos);
    a_in_memory = a_in_memory || has(line, "slot");
    ++pos;
  }
  EXPECT_TRUE(a_in_memory) << prepared;
}

TEST(TraceFusion, EverySizeAndThreadSplitIsBitIdentical) {
  // One element, a partial block, exact blocks, many blocks, and sizes the pool splits (2 threads).
  for (int threads : {1, 2}) {
    Threads t(threads);
    for (std::int64_t n : {1, 255, 256, 257, 1000, 20000, 70001}) {
      SCOPED_TRACE("n = " + std::to_string(n) + ", threads " + std::to_string(threads));
      const auto x = Tensor<double>::randn({n}, 3), y = Tensor<double>::randn({n}, 4);
      const auto s = Tensor<double>::full({1}, -0.75);
      check_runs(chain, x, y, s);
    }
  }
}

// The line of a dump defining the first value made by `op(`.
std::string line_of(const std::string& dump, const std::string& op) {
  const std::size_t at = dump.find("= " + op + "(");
  return at == std::string::npos ? "" : dump.substr(at, dump.find('\n', at) - at);
}

TEST(TraceFusion, AFullSumEndsTheChain) {
  // A sum of the chain's last value is fed block by block: summed alone (fewer than 16 inputs),
  // in lanes with and without a tail, and from 16384 inputs on in runs of 8192 with partial sums,
  // the last run short or under 16 inputs; over 1 and 2 threads. Its input stays in a register
  // when only the sum reads it (`reg`), in memory when the program also returns it (`mem`), and
  // mean (a sum, then a division) ends a chain the same way. Every result as eager's, bit for bit.
  auto chain8 = [](const auto& x, const auto& y) {
    using T = typename std::decay_t<decltype(x)>::value_type;
    return tx::tanh((tx::exp(x * T(0.5)) + y) * T(1.5) - y) * x + T(0.25);
  };
  auto reg = [&](const auto& x, const auto& y) { return tx::sum(chain8(x, y)); };
  auto mem = [&](const auto& x, const auto& y) {
    const auto c = chain8(x, y);
    return std::make_tuple(tx::sum(c), c);
  };
  auto mean = [&](const auto& x, const auto& y) { return tx::mean(chain8(x, y)); };
  for (int threads : {1, 2}) {
    Threads t(threads);
    for (std::int64_t n : {5, 16, 21, 256, 1000, 16383, 16384, 16389, 8192 * 6 + 7, 8192 * 6 + 300, 70001}) {
      SCOPED_TRACE("n = " + std::to_string(n) + ", threads " + std::to_string(threads));
      const auto x = Tensor<double>::randn({n}, 13), y = Tensor<double>::randn({n}, 14);
      const std::string dump = check_runs(reg, x, y);
      EXPECT_TRUE(has(line_of(dump, "sum"), "fused")) << dump;
      EXPECT_TRUE(has(dump, "static plan 0 slot(s)")) << dump;  // the last value, read only by the sum: a register
      const std::string dm = check_runs(mem, x, y);
      EXPECT_TRUE(has(line_of(dm, "sum"), "fused")) << dm;
      check_runs(mean, x, y);
    }
  }
  // Other dtypes, a 2-D value (its elements in memory order), and sums that do not end a chain
  // this way (over one axis, of a value other than the last) still match.
  check_runs(reg, Tensor<float>::randn({130, 170}, 15), Tensor<float>::randn({130, 170}, 16));
  check_runs(reg, Tensor<std::complex<double>>::randn({21, 3}, 17), Tensor<std::complex<double>>::randn({21, 3}, 18));
  auto by_rows = [&](const Tensor<double>& x, const Tensor<double>& y) { return tx::sum(chain8(x, y), {1}); };
  auto earlier = [&](const Tensor<double>& x, const Tensor<double>& y) {
    const auto a = tx::exp(x * 0.5) + y;
    return std::make_tuple(tx::sum(a), chain8(a, y));
  };
  const auto x2 = Tensor<double>::randn({300, 200}, 19), y2 = Tensor<double>::randn({300, 200}, 20);
  const std::string rows_sum = line_of(check_runs(by_rows, x2, y2), "sum");
  ASSERT_FALSE(rows_sum.empty());
  EXPECT_FALSE(has(rows_sum, "fused")) << rows_sum;
  check_runs(earlier, x2, y2);
}

TEST(TraceFusion, DtypesOfEveryWidth) {
  auto fc = [](const Tensor<std::complex<double>>& z) { return tx::exp(z * std::complex<double>(0.5, 0.25)) - z * z; };
  auto ff = [](const Tensor<float>& x) { return tx::sqrt(tx::abs(x) + 1.0f) * x - 2.0f; };
  auto fi = [](const Tensor<double>& x) { return tx::cast<double>(tx::cast<std::int32_t>(x * 10.0)) * 0.5; };
  check_runs(fc, Tensor<std::complex<double>>::randn({40000}, 5));
  check_runs(ff, Tensor<float>::randn({330, 110}, 6));
  check_runs(fi, Tensor<double>::randn({40000}, 12));
}

TEST(TraceFusion, ChainsLongerThanTheRegistersAreSplit) {
  // Twelve values live at once: more than the eight registers, so the chain is cut where they run
  // out and continues as another chain; the result is the same.
  auto f = [](const Tensor<double>& x) {
    std::vector<Tensor<double>> v;
    for (int k = 1; k <= 12; ++k) v.push_back(x * static_cast<double>(k) + 0.125);
    Tensor<double> acc = v[0];
    for (int k = 1; k < 12; ++k) acc = acc * 0.5 + v[static_cast<std::size_t>(k)];
    return acc;
  };
  const std::string dump = check_runs(f, Tensor<double>::randn({700}, 7));
  show(dump);
  EXPECT_TRUE(has(dump, "fused")) << dump;
}

TEST(TraceFusion, OutputsAndValuesReadElsewhereStayInMemory) {
  // b is an output and also read inside the chain; a transpose (a view) of c is read after it.
  auto f = [](const Tensor<double>& x) {
    const auto b = tx::sin(x) * 2.0;
    const auto c = tx::cos(b) + b;
    return std::make_tuple(b, tx::transpose(c) * 3.0, c * c - 1.0);
  };
  const std::string dump = check_runs(f, Tensor<double>::randn({400, 90}, 8));
  show(dump);
}

TEST(TraceFusion, APreparedFusedRunAllocatesOnlyItsOutput) {
  auto f = [](const Tensor<double>& x) { return tx::tanh(tx::sigmoid(tx::exp(x * 0.5) + 1.0) * 2.0) - 0.25; };
  const auto x = Tensor<double>::randn({300, 120}, 9);
  const auto p = tx::compile(f, x);
  (void)p(x);
  (void)p(x);
  EXPECT_EQ(p.program().slots(), 0u) << p.str();  // every intermediate is in a register
  const auto y = tx::ttest::expect_allocates_only_its_output([&] { return p(x); });
  expect_bitwise(y, f(x), "fused chain");
}

TEST(TraceFusion, OperandsOfAnyLayoutAreGathered) {
  // A row broadcast over columns, a column broadcast over rows, a transposed input and a complex
  // row (16-byte elements) are not read in element order: each block gathers them into a register
  // first, and the whole chain is one loop.
  auto f = [](const Tensor<double>& x, const Tensor<double>& r, const Tensor<double>& c, const Tensor<double>& t) {
    return tx::relu(tx::exp(x * 0.5) * 2.0 + r) * c - tx::transpose(t);
  };
  const auto x = Tensor<double>::randn({4000, 9}, 10), r = Tensor<double>::randn({1, 9}, 11);
  const auto c = Tensor<double>::randn({4000, 1}, 12), t = Tensor<double>::randn({9, 4000}, 13);
  const std::string dump = check_runs(f, x, r, c, t);
  show(dump);
  EXPECT_TRUE(has(dump, "fused 1..7")) << dump;  // step 0 is the transpose (a view)
  auto fc = [](const Tensor<std::complex<double>>& z, const Tensor<std::complex<double>>& row) {
    return tx::exp(z + row) * z;
  };
  check_runs(fc, Tensor<std::complex<double>>::randn({70, 5, 3}, 14),
             Tensor<std::complex<double>>::randn({1, 5, 1}, 15));
  // A chain of one element per block row: broadcasting in the middle of three dimensions.
  auto fm = [](const Tensor<double>& a, const Tensor<double>& m) { return tx::sin(a) * m + a; };
  check_runs(fm, Tensor<double>::randn({4, 3000, 3}, 16), Tensor<double>::randn({4, 1, 3}, 17));
}

TEST(TraceFusion, ShortChainsOfSmallValuesStayKernelSteps) {
  // Three maps on 600 elements: fewer than kFuseMinSteps maps on fewer than kFuseMinElements
  // elements, which ran faster as separate kernel steps; the same three on 40000 elements fuse.
  auto f = [](const Tensor<double>& x) { return tx::exp(x * 0.5) - 1.0; };
  const std::string small = check_runs(f, Tensor<double>::randn({600}, 18));
  EXPECT_FALSE(has(small, "fused")) << small;
  const std::string large = check_runs(f, Tensor<double>::randn({40000}, 19));
  EXPECT_TRUE(has(large, "fused 0..2")) << large;
}

}  // namespace
