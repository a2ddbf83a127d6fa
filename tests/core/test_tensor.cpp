#include <gtest/gtest.h>

#include <tenax/tenax.hpp>

namespace tx = tenax;

TEST(Smoke, GradOfMulChain) {
  auto x = tx::Tensor<double>::from_col_major({2, 2}, {1, 2, 3, 4});
  auto g = tx::grad([](const tx::Tensor<double>& a) { return tx::sum(tx::exp(a) * a); }, x);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      double v = x.at({i, j});
      EXPECT_NEAR(g.at({i, j}), std::exp(v) * (1 + v), 1e-12);
    }
}
