// Gradient descent on the least-squares loss L(x) = ||A x - b||^2, with the gradient from
// reverse mode through matmul (BLAS gemm underneath). The exact gradient is 2 A^T (A x - b).
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <tenax/tenax.hpp>

namespace tx = tenax;
using Mat = tx::Tensor<double>;

int main() {
  std::printf("%s\n", tx::config().str().c_str());

  // Column-major m x n matrix and n x 1 vectors; seeded random entries.
  const std::int64_t m = 30, n = 5;
  const Mat A = Mat::randn({m, n}, /*seed=*/1);
  const Mat x_true = Mat::randn({n, 1}, /*seed=*/2);
  const Mat b = tx::matmul(A, x_true);

  auto loss = [&](const Mat& x) { return tx::sum(tx::square(tx::matmul(A, x) - b)); };

  // The gradient from AD agrees with the closed form.
  Mat x = Mat::zeros({n, 1});
  const Mat g_exact = 2.0 * tx::matmul(A.mT(), tx::matmul(A, x) - b);
  const double gerr = tx::max(tx::abs(tx::grad(loss, x) - g_exact)).item();
  std::printf("gradient check: max error %.1e\n", gerr);

  // Step 1/L with L = 2 ||A||_F^2 >= 2 ||A||_2^2, the Lipschitz constant of the gradient.
  const double step = 1.0 / (2.0 * tx::sum(tx::square(A)).item());
  double l = 0;
  int it = 0;
  for (; it < 5000; ++it) {
    auto [value, g] = tx::value_and_grad(loss, x);
    l = value.item();
    if (it % 50 == 0) std::printf("iter %4d  loss %.3e\n", it, l);
    if (l < 1e-20) break;
    x = x - step * g;  // plain tensors: the update itself is not recorded
  }
  const double err = std::sqrt(tx::sum(tx::square(x - x_true)).item());
  std::printf("stopped at iter %d: loss %.3e, |x - x_true| = %.3e\n", it, l, err);

  const bool ok = gerr < 1e-10 && err < 1e-6;
  std::printf("%s\n", ok ? "converged" : "FAILED");
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
