// A derivative by the implicit function theorem, given to tenax with custom_vjp.
//
// X = sqrtm(A) for a symmetric positive definite A, computed by the Denman-Beavers iteration (a
// loop that should not be differentiated step by step). X solves X X = A, so a change dA moves X
// by the dX that solves the Sylvester equation X dX + dX X = dA. For a symmetric X that map is
// self-adjoint, so the VJP solves the same equation with the cotangent: X G + G X = gX.
// In the eigenbasis of X (X = V diag(s) V^T) that solve is elementwise: G = V ((V^T gX V) / (s_i + s_j)) V^T.
// The rule is written with tenax ops, so it is differentiable in turn, and custom_vjp gives forward
// mode by transposing it.
#include <cmath>
#include <cstdio>

#include <tenax/tenax.hpp>

namespace tx = tenax;
using Mat = tx::Tensor<double>;

Mat denman_beavers(const Mat& A) {
  const std::int64_t n = A.shape()[0];
  Mat Y = A, Z = Mat::eye(n);
  for (int k = 0; k < 40; ++k) {
    const Mat Yn = 0.5 * (Y + tx::linalg::inv(Z));
    Z = 0.5 * (Z + tx::linalg::inv(Y));
    Y = Yn;
  }
  return Y;
}

// G solving X G + G X = gX (X symmetric positive definite).
Mat sylvester_pullback(const Mat& X, const Mat& gX) {
  const auto [s, V] = tx::linalg::eigh(X);
  const std::int64_t n = s.numel();
  const Mat denom = tx::reshape(s, {n, 1}) + tx::reshape(s, {1, n});
  const Mat Vt = tx::transpose(V, 0, 1);
  return tx::matmul(V, tx::matmul(tx::matmul(Vt, tx::matmul(gX, V)) / denom, Vt));
}

int main() {
  const auto sqrtm = tx::custom_vjp(
      "sqrtm", [](const Mat& A) { return denman_beavers(A); },
      [](const Mat&, const Mat& X, const Mat& gX) { return sylvester_pullback(X, gX); });

  const Mat B = Mat::randn({4, 4}, 3);
  const Mat A = tx::matmul(B, tx::transpose(B, 0, 1)) + 4.0 * Mat::eye(4);
  const Mat X = sqrtm(A);
  const double resid = tx::max(tx::abs(tx::matmul(X, X) - A)).item();
  std::printf("|X X - A|_max = %.1e\n", resid);

  // The loss trace(W X) for a symmetric W: its gradient through the custom rule against the same
  // gradient through an eigendecomposition (sqrtm = V sqrt(diag) V^T, differentiated by eigh's rules).
  const Mat W0 = Mat::randn({4, 4}, 4), W = W0 + tx::transpose(W0, 0, 1);
  auto loss_custom = [&](const Mat& M) { return tx::sum(W * sqrtm(M)); };
  auto loss_eigh = [&](const Mat& M) {
    const auto [w, V] = tx::linalg::eigh(M);
    return tx::sum(W * tx::matmul(V * tx::reshape(tx::sqrt(w), {1, 4}), tx::transpose(V, 0, 1)));
  };
  const Mat g1 = tx::grad(loss_custom, A), g2 = tx::grad(loss_eigh, A);
  // eigh reads one triangle; compare the symmetric parts.
  const Mat s1 = 0.5 * (g1 + tx::transpose(g1, 0, 1)), s2 = 0.5 * (g2 + tx::transpose(g2, 0, 1));
  const double gerr = tx::max(tx::abs(s1 - s2)).item();
  std::printf("gradient: custom rule vs eigh's rules, max difference %.1e\n", gerr);
  // Forward mode through the transposed rule: <G, dA> == d/dt loss(A + t dA).
  const Mat dA0 = Mat::randn({4, 4}, 5), dA = dA0 + tx::transpose(dA0, 0, 1);
  const double jvp = tx::jvp(loss_custom, A, dA).second.item();
  const double pairing = tx::sum(g1 * dA).item();
  std::printf("jvp %.12f, <grad, dA> %.12f\n", jvp, pairing);
  return resid < 1e-10 && gerr < 1e-10 && std::abs(jvp - pairing) < 1e-10 * std::abs(pairing) ? 0 : 1;
}
