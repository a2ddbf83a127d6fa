// Anomaly mode: the first op that turns finite inputs into NaN/Inf is named, in the forward pass,
// in a backward rule (with the forward call site), and in a prepared program; propagation is not
// blamed; the mode is off by default.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "support/messages.hpp"
#include "tenax/tenax.hpp"

namespace tx = tenax;
using tx::Tensor;

namespace {

using tx::testing::error_of;
using tx::testing::has;

TEST(Anomaly, OffByDefault) {
  EXPECT_FALSE(tx::is_anomaly_enabled());
  const auto y = tx::log(Tensor<double>::from_col_major({2}, {1.0, -1.0}));
  EXPECT_TRUE(std::isnan(y.to_vector()[1]));
}

TEST(Anomaly, NamesTheForwardOpThatProducesNaN) {
  tx::AnomalyGuard on;
  const auto x = Tensor<double>::from_col_major({3}, {1.0, -2.0, 3.0});
  const auto y = tx::exp(x);  // finite: fine
  const std::string m = error_of([&] { (void)tx::log(x * 2.0); });
  EXPECT_TRUE(has(m, "[anomaly] forward of 'log' produced 1 non-finite value")) << m;
  EXPECT_TRUE(has(m, "f64[3]")) << m;
  EXPECT_TRUE(has(m, "called from:")) << m;
  // An op that only propagates a NaN it was given is not blamed.
  const auto nan = Tensor<double>::full({2}, std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(error_of([&] { (void)tx::exp(nan); }), "");
  (void)y;
}

TEST(Anomaly, NamesTheBackwardRuleAndItsForwardCallSite) {
  tx::AnomalyGuard on;
  const auto x = Tensor<double>::from_col_major({2}, {0.0, 4.0}).requires_grad();
  const auto loss = tx::sum(tx::sqrt(x));  // forward finite; d sqrt / dx = inf at 0
  const std::string m = error_of([&] { loss.backward(); });
  EXPECT_TRUE(has(m, "[anomaly] backward of 'sqrt'")) << m;
  EXPECT_TRUE(has(m, "the forward op was called from:")) << m;
}

TEST(Anomaly, ChecksEveryStepOfAPreparedProgram) {
  auto f = [](const Tensor<double>& x) { return tx::sum(tx::log(x)); };
  const auto p = tx::compile(f, Tensor<double>::full({2}, 1.0));
  const auto bad = Tensor<double>::from_col_major({2}, {1.0, -1.0});
  EXPECT_TRUE(std::isnan(p(bad).item()));  // off: the NaN flows through
  tx::AnomalyGuard on;
  const std::string m = error_of([&] { (void)p(bad); });
  EXPECT_TRUE(has(m, "[anomaly] compiled step 0, 'log'")) << m;
}

TEST(Anomaly, GuardRestoresThePreviousState) {
  {
    tx::AnomalyGuard on;
    EXPECT_TRUE(tx::is_anomaly_enabled());
    {
      tx::AnomalyGuard off(false);
      EXPECT_FALSE(tx::is_anomaly_enabled());
    }
    EXPECT_TRUE(tx::is_anomaly_enabled());
  }
  EXPECT_FALSE(tx::is_anomaly_enabled());
}

}  // namespace
