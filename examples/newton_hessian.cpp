// Newton's method with a full Hessian: minimise the Rosenbrock function.
//
//   f(x) = sum_i 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2,   minimum at x = (1, ..., 1)
//   step: solve (H + mu I) dx = -g with H = hessian(f, x) (an n x n matrix), g = grad(f, x),
//   then a backtracking line search along dx
// jacrev, jacfwd and hessian give full Jacobians (ad/jacobian.hpp): the output's dims first, then
// the input's, so the Hessian of a function of an n-vector is an n x n matrix.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include <tenax/tenax.hpp>

namespace tx = tenax;
using Vec = tx::Tensor<double>;

Vec rosenbrock(const Vec& x) {
  const std::int64_t n = x.numel();
  const Vec head = tx::slice(x, 0, 0, n - 1, 1), tail = tx::slice(x, 0, 1, n, 1);
  return tx::sum(100.0 * tx::square(tail - tx::square(head)) + tx::square(1.0 - head));
}

int main() {
  Vec x = Vec::from_col_major({2}, {-1.2, 1.0});  // the classic start, in the curved valley's far end
  double mu = 1e-3;                               // Levenberg damping, for the indefinite Hessians on the way
  int steps = 0;
  for (; steps < 100; ++steps) {
    const Vec g = tx::grad(rosenbrock, x);
    const double gnorm = std::sqrt(tx::sum(tx::square(g)).item());
    std::printf("step %2d  f = %.3e  |grad| = %.3e\n", steps, rosenbrock(x).item(), gnorm);
    if (gnorm < 1e-10) break;
    const Vec H = tx::hessian(rosenbrock, x);  // 2 x 2
    // (H + mu I) dx = -g, with mu raised until dx is a descent direction.
    Vec dx;
    double slope = 0;
    for (;;) {
      dx = tx::reshape(tx::linalg::solve(H + mu * Vec::eye(2), tx::reshape(-g, {2, 1})), {2});
      slope = tx::sum(g * dx).item();
      if (slope < 0) break;
      mu *= 10;
    }
    // Backtracking (Armijo) line search.
    const double f0 = rosenbrock(x).item();
    double t = 1;
    while (rosenbrock(x + t * dx).item() > f0 + 1e-4 * t * slope && t > 1e-10) t *= 0.5;
    x = x + t * dx;
    mu = t == 1 ? std::max(mu * 0.1, 1e-12) : mu * 10;
  }
  const double err = tx::max(tx::abs(x - 1.0)).item();
  std::printf("x = (%.12f, %.12f) after %d steps, max |x - 1| = %.1e\n", x.at({0}), x.at({1}), steps, err);
  // The Hessian against its closed form at the minimum.
  const Vec H = tx::hessian(rosenbrock, Vec::ones({2}));
  const Vec want = Vec::from_row_major({2, 2}, {802, -400, -400, 200});
  const double herr = tx::max(tx::abs(H - want)).item();
  std::printf("Hessian at the minimum: max error %.1e\n", herr);
  return err < 1e-9 && herr < 1e-9 ? 0 : 1;
}
