// Reverse mode, forward mode and a Hessian-vector product on a small function.
//
//   f(x) = sum(x * sin(x)) + 0.5 * sum(x^2)
//   grad f      = sin(x) + x cos(x) + x
//   Hessian     = diag(2 cos(x) - x sin(x) + 1)
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <tenax/tenax.hpp>

namespace tx = tenax;
using Vec = tx::Tensor<double>;

// Any function of tensors built from tenax ops can be differentiated.
Vec f(const Vec& x) { return tx::sum(x * tx::sin(x)) + 0.5 * tx::sum(tx::square(x)); }

int failures = 0;
void check(const char* what, const Vec& got, const Vec& want) {
  const double err = tx::max(tx::abs(got - want)).item();
  std::printf("%-28s max error %.1e\n", what, err);
  if (!(err < 1e-12)) ++failures;
}

int main() {
  const Vec x = Vec::from_col_major({4}, {0.5, -1.0, 2.0, 3.0});
  const Vec v = Vec::from_col_major({4}, {1.0, 0.0, -2.0, 0.5});  // a direction
  const Vec g_exact = tx::sin(x) + x * tx::cos(x) + x;
  const Vec hv_exact = (2.0 * tx::cos(x) - x * tx::sin(x) + 1.0) * v;

  // 1. Reverse mode as a function transform: grad(f, x) has x's shape.
  const Vec g = tx::grad(f, x);
  check("grad(f, x)", g, g_exact);

  // value_and_grad gives f(x) too.
  auto [fx, g2] = tx::value_and_grad(f, x);
  std::printf("f(x) = %.6f\n", fx.item());
  check("value_and_grad(f, x)", g2, g_exact);

  // 2. Reverse mode, tape style: mark a leaf, compute, call backward(), read .grad().
  const Vec xl = x.requires_grad();
  f(xl).backward();
  check("backward() then grad()", xl.grad(), g_exact);

  // 3. Forward mode: jvp(f, x, v) = (f(x), <grad f(x), v>) in one forward pass.
  auto [y, dy] = tx::jvp(f, x, v);
  check("jvp(f, x, v)", dy, tx::sum(g_exact * v));

  // 4. vjp: the pullback maps an output cotangent to the input cotangent.
  auto [y2, pullback] = tx::vjp(f, x);
  check("vjp(f, x) pullback(1)", pullback(Vec::ones(y2.shape())), g_exact);

  // 5. Second order: Hessian-vector product (forward over reverse) and grad of grad.
  check("hvp(f, x, v)", tx::hvp(f, x, v), hv_exact);
  auto dir_deriv = [&](const Vec& z) { return tx::sum(tx::grad(f, z) * v); };  // <grad f(z), v>
  check("grad(<grad f, v>)", tx::grad(dir_deriv, x), hv_exact);

  std::printf("%s\n", failures ? "FAILED" : "all derivatives match");
  return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
