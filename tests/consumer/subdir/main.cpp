// Links tenax::tenax from add_subdirectory and differentiates through matmul:
// d/dX sum((A X)^2) = 2 A^T (A X).
#include <cstdio>
#include <cstdlib>

#include <tenax/tenax.hpp>

namespace tx = tenax;

int main() {
  std::printf("%s\n", tx::config().str().c_str());
  const auto A = tx::Tensor<double>::randn({4, 3}, 1);
  const auto X = tx::Tensor<double>::randn({3, 2}, 2);
  const auto g = tx::grad([&](const tx::Tensor<double>& x) { return tx::sum(tx::square(tx::matmul(A, x))); }, X);
  const auto want = 2.0 * tx::matmul(A.mT(), tx::matmul(A, X));
  const double err = tx::max(tx::abs(g - want)).item();
  std::printf("add_subdirectory consumer: gradient error %.1e\n", err);
  return err < 1e-12 ? EXIT_SUCCESS : EXIT_FAILURE;
}
