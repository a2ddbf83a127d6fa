// Links tenax::tenax from add_subdirectory (static or shared; compiled with hidden visibility)
// and differentiates through matmul: d/dX sum((A X)^2) = 2 A^T (A X). A NoGradGuard here must
// stop the library's op instances from recording.
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
  const auto x = X.requires_grad();
  bool recorded_under_guard = true;
  {
    tx::NoGradGuard guard;
    recorded_under_guard = tx::exp(x).tracks_grad();
  }
  const bool recorded = tx::exp(x).tracks_grad();
  std::printf("add_subdirectory consumer: exp records %s, and %s under NoGradGuard\n", recorded ? "yes" : "no",
              recorded_under_guard ? "yes" : "no");
  return err < 1e-12 && recorded && !recorded_under_guard ? EXIT_SUCCESS : EXIT_FAILURE;
}
