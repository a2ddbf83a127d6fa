#pragma once
// Shared helpers of the trace tests: bitwise comparison of tensors and results, and what a
// prepared run allocates.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <tuple>
#include <utility>

#include "tenax/tenax.hpp"

namespace tenax::ttest {

// Prints a program dump when TENAX_TEST_VERBOSE is set.
inline void show(const std::string& s) {
  if (std::getenv("TENAX_TEST_VERBOSE")) std::cout << s;
}

template <class T>
void expect_bitwise(const Tensor<T>& a, const Tensor<T>& b, const std::string& what) {
  ASSERT_TRUE(a.defined() && b.defined()) << what;
  ASSERT_EQ(a.shape(), b.shape()) << what;
  const auto va = a.contiguous().to_vector(), vb = b.contiguous().to_vector();
  EXPECT_EQ(std::memcmp(va.data(), vb.data(), va.size() * sizeof(T)), 0) << what << ": not bit-identical";
}
template <class... X>
void expect_bitwise(const std::tuple<X...>& a, const std::tuple<X...>& b, const std::string& what) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (expect_bitwise(std::get<I>(a), std::get<I>(b), what + " [" + std::to_string(I) + "]"), ...);
  }
  (std::index_sequence_for<X...>{});
}
template <class A, class B>
void expect_bitwise(const std::pair<A, B>& a, const std::pair<A, B>& b, const std::string& what) {
  expect_bitwise(a.first, b.first, what + ".first");
  expect_bitwise(a.second, b.second, what + ".second");
}

// Compiles f at the examples x0..., then checks the prepared run at the inputs x... (other values,
// same signature) against eager f(x...), bit for bit; also the re-executed graph.
template <class F, class... T>
void expect_compiled_matches_eager(const std::string& what, F f, std::tuple<Tensor<T>...> examples,
                                   std::tuple<Tensor<T>...> inputs) {
  const auto traced = std::apply([&](const auto&... e) { return trace(f, e...); }, examples);
  const auto prog = compile(traced);
  const auto eager = std::apply(f, inputs);
  // The first run runs every op's forward and prepares the program (trace/program.hpp).
  const auto compiled = std::apply(prog, inputs);
  expect_bitwise(compiled, eager, what + ": compiled vs eager");
  expect_bitwise(std::apply(traced, inputs), eager, what + ": re-executed graph vs eager");
  // Prepared runs (captured kernels, views, the static plan), at other values and then at the
  // inputs again, give the same bits; the first run's result is not overwritten by them (outputs
  // never share the plan's buffers).
  (void)std::apply(prog, examples);
  expect_bitwise(std::apply(prog, inputs), eager, what + ": prepared run");
  expect_bitwise(std::apply(prog, inputs), eager, what + ": second prepared run");
  expect_bitwise(compiled, eager, what + ": the first run's result after later runs");
}

// Runs a prepared program once with the allocator's statistics reset; checks that it made no
// system allocation and no pool miss and took from the pool only its output (body and storage).
template <class Run>
auto expect_allocates_only_its_output(Run&& run) {
  reset_allocator_stats();
  auto y = run();
  const auto st = allocator_stats();
  EXPECT_EQ(st.system_allocs, 0);
  EXPECT_EQ(st.pool_misses, 0);
  EXPECT_LE(st.pool_hits, 2) << "a prepared run should allocate only its output (body and storage)";
  return y;
}

}  // namespace tenax::ttest
