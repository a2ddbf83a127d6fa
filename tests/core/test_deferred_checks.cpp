// The pending failure checks of a device (core/deferred_checks.hpp): kept in order, run together,
// the first failure raising and the rest dropped, and bounded. On the CPU nothing defers (a check
// runs at once), so the registry is driven directly here with CPU codes; tests/cuda checks the
// device hooks (a read of a result, cuda::synchronize) and the linalg variants that use them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tenax/core/deferred_checks.hpp"
#include "tenax/tenax.hpp"

namespace tx = tenax;
using tx::Tensor;

namespace {

const tx::Device cpu = tx::Device::cpu();

// A check that raises "[test] code <c> at <i> of check <k>" for the first nonzero code.
tx::detail::CodeCheck raising(int k, std::vector<int>* ran) {
  return [k, ran](const std::int32_t* codes, std::int64_t n) {
    ran->push_back(k);
    for (std::int64_t i = 0; i < n; ++i)
      if (codes[i] != 0)
        throw tx::Error("[test] code " + std::to_string(codes[i]) + " at " + std::to_string(i) + " of check " +
                        std::to_string(k));
  };
}

tx::detail::ImplPtr codes(std::vector<std::int32_t> v) {
  const auto n = static_cast<std::int64_t>(v.size());
  return Tensor<std::int32_t>::from_row_major(tx::Shape{n}, v).impl();
}

TEST(DeferredChecks, RunInOrderAndTheFirstFailureRaises) {
  std::vector<int> ran;
  tx::detail::defer_check(codes({0, 0}), raising(1, &ran));
  tx::detail::defer_check(codes({0, 3, 4}), raising(2, &ran));
  tx::detail::defer_check(codes({5}), raising(3, &ran));
  EXPECT_EQ(tx::detail::deferred_checks(cpu), 3u);
  try {
    tx::detail::run_deferred_checks(cpu);
    ADD_FAILURE() << "no check raised";
  } catch (const tx::Error& e) {
    EXPECT_EQ(std::string(e.what()), "[test] code 3 at 1 of check 2");
  }
  EXPECT_EQ(ran, (std::vector<int>{1, 2}));  // check 3 is dropped with the failure
  EXPECT_EQ(tx::detail::deferred_checks(cpu), 0u);
  EXPECT_NO_THROW(tx::detail::run_deferred_checks(cpu));  // nothing left
  EXPECT_EQ(ran.size(), 2u);
}

TEST(DeferredChecks, EachCheckReadsItsOwnCodesFromTheGatheredCopy) {
  // The codes of all checks come to the host in one copy; each check sees its own slice.
  std::vector<int> ran;
  tx::detail::defer_check(codes({0}), raising(1, &ran));
  tx::detail::defer_check(codes({0, 0, 0, 0, 0}), raising(2, &ran));
  tx::detail::defer_check(codes({0, 0}), raising(3, &ran));
  tx::detail::defer_check(codes({0, 0, 7}), raising(4, &ran));
  tx::detail::defer_check(codes({8}), raising(5, &ran));
  try {
    tx::detail::run_deferred_checks(cpu);
    ADD_FAILURE() << "no failure raised";
  } catch (const tx::Error& e) {
    EXPECT_EQ(std::string(e.what()), "[test] code 7 at 2 of check 4");
  }
  EXPECT_EQ(ran, (std::vector<int>{1, 2, 3, 4}));
}

TEST(DeferredChecks, ValueChecksTravelWithCodeChecks) {
  // float64 values (e.g. a dropped gradient component and its scale) next to int32 codes of odd
  // lengths: each check gets its own values, in order.
  std::vector<int> ran;
  std::vector<double> seen;
  tx::detail::defer_check(codes({0, 0, 0}), raising(1, &ran));
  tx::detail::defer_value_check(Tensor<double>::from_row_major(tx::Shape{2}, {0.25, -3e300}).impl(),
                                [&](const double* v, std::int64_t n) {
                                  ran.push_back(2);
                                  seen.assign(v, v + n);
                                });
  tx::detail::defer_check(codes({0}), raising(3, &ran));
  tx::detail::defer_value_check(Tensor<double>::from_row_major(tx::Shape{1}, {7.5}).impl(),
                                [&](const double* v, std::int64_t) {
                                  ran.push_back(4);
                                  if (*v > 1) throw tx::Error("[test] value " + std::to_string(*v));
                                });
  tx::detail::defer_check(codes({0}), raising(5, &ran));
  try {
    tx::detail::run_deferred_checks(cpu);
    ADD_FAILURE() << "no failure raised";
  } catch (const tx::Error& e) {
    EXPECT_EQ(std::string(e.what()), "[test] value 7.500000");
  }
  EXPECT_EQ(ran, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(seen, (std::vector<double>{0.25, -3e300}));
}

TEST(DeferredChecks, PassingChecksLeaveNothingBehind) {
  std::vector<int> ran;
  for (int k = 0; k < 3; ++k) tx::detail::defer_check(codes({0, 0, 0}), raising(k, &ran));
  EXPECT_NO_THROW(tx::detail::run_deferred_checks(cpu));
  EXPECT_EQ(ran, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(tx::detail::deferred_checks(cpu), 0u);
}

TEST(DeferredChecks, ThePendingListIsBounded) {
  // A loop that never reads its results: past kMaxDeferredChecks the checks run at once.
  std::vector<int> ran;
  for (std::size_t k = 0; k < tx::detail::kMaxDeferredChecks; ++k)
    tx::detail::defer_check(codes({0}), raising(0, &ran));
  EXPECT_EQ(tx::detail::deferred_checks(cpu), tx::detail::kMaxDeferredChecks);
  EXPECT_TRUE(ran.empty());
  tx::detail::defer_check(codes({0}), raising(0, &ran));
  EXPECT_EQ(tx::detail::deferred_checks(cpu), 0u);
  EXPECT_EQ(ran.size(), tx::detail::kMaxDeferredChecks + 1);
  // and a failure among them raises from the call that went past the bound
  for (std::size_t k = 0; k < tx::detail::kMaxDeferredChecks; ++k)
    tx::detail::defer_check(codes({k == 7 ? 9 : 0}), raising(static_cast<int>(k), &ran));
  EXPECT_THROW(tx::detail::defer_check(codes({0}), raising(-1, &ran)), tx::Error);
  EXPECT_EQ(tx::detail::deferred_checks(cpu), 0u);
}

TEST(DeferredChecks, LinalgOnTheCpuChecksAtOnce) {
  // The default variants on the CPU raise at the call and leave no check.
  const auto singular = Tensor<double>::from_row_major({2, 2}, {1, 2, 2, 4});
  EXPECT_THROW((void)tx::linalg::solve(singular, Tensor<double>::ones({2, 1})), tx::linalg::LinAlgError);
  EXPECT_THROW((void)tx::linalg::inv(singular), tx::linalg::LinAlgError);
  (void)tx::linalg::inv(Tensor<double>::eye(2));
  EXPECT_EQ(tx::detail::deferred_checks(cpu), 0u);
}

}  // namespace
