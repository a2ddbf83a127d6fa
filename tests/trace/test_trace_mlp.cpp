// The mlp training workload (shared BENCHMARKS.md): eager and compiled SGD land on the reference
// final losses within 1e-12 relative, and are bit-identical to each other (losses and weights).
#include <gtest/gtest.h>

#include "mlp_model.hpp"
#include "tenax/tenax.hpp"
#include "trace/trace_support.hpp"

namespace mlp = tenax_workloads::mlp;
using tenax::ttest::expect_bitwise;

namespace {

class TraceMlp : public ::testing::TestWithParam<int> {};

TEST_P(TraceMlp, EagerAndCompiledReachTheReferenceLossBitIdentically) {
  const mlp::Case& c = mlp::kCases[GetParam()];
  SCOPED_TRACE(c.name);
  const mlp::Data d = mlp::make_data(c);
  const auto [loss_eager, W_eager, b_eager] = mlp::train(c, d, mlp::sgd_step);
  EXPECT_EQ(mlp::check_loss(c, loss_eager), "");
  const auto step = tenax::compile(mlp::sgd_step, d.W0, d.b0, d.x, d.t);
  const auto [loss_compiled, W_compiled, b_compiled] = mlp::train(c, d, step);
  EXPECT_EQ(mlp::check_loss(c, loss_compiled), "");
  EXPECT_EQ(loss_eager, loss_compiled);
  expect_bitwise(W_compiled, W_eager, "final W");
  expect_bitwise(b_compiled, b_eager, "final b");
}

INSTANTIATE_TEST_SUITE_P(Cases, TraceMlp, ::testing::Values(0, 1));

}  // namespace
