// Gradient tests for the linear-solve family: solve (left/right, matrix/vector right-hand side),
// inv, det, slogdet, solve_triangular and triangular_matmul (every flag combination),
// lu_solve and cholesky_solve. Each case runs the full harness (tests/support/gradcheck.hpp): JVP vs central
// differences, VJP vs JVP exactly, second order (forward over reverse vs differences of the gradient, reverse over
// reverse), and float32 vs float64; for float64 and complex128. Plus batched == loop over the batch, and non-contiguous
// views == contiguous copies.
#include <gtest/gtest.h>

#include <complex>
#include <string>

#include "linalg/linalg_grad_support.hpp"
#include "support/messages.hpp"

namespace tx = tenax;
namespace la = tenax::linalg;
using tx::Tensor;
using tx::lgtest::batch_elem;
using tx::lgtest::expect_batch_matches_loop;
using tx::lgtest::step_view;
using tx::lgtest::transposed_view;
using tx::lgtest::well_conditioned;
using tx::testing::expect_ad;
using tx::testing::expect_close;
using tx::testing::expect_layout_invariant;
using tx::testing::scalar_of;
using tx::testing::values;

namespace {

template <class T>
class LinalgGradSolve : public ::testing::Test {};
TYPED_TEST_SUITE(LinalgGradSolve, tx::lgtest::Types);

const char* trans_name(la::Trans t) { return t == la::Trans::N ? "N" : t == la::Trans::T ? "T" : "C"; }

// op(A) as a dense matrix.
template <class T>
Tensor<T> apply_op(const Tensor<T>& A, la::Trans t) {
  return t == la::Trans::N ? A : t == la::Trans::T ? tx::clone(A.mT()) : tx::clone(A.mH());
}

// g and its reference s (both (A, B) -> X) have the same gradients of Re<W, X> for a random W.
template <class G, class S, class T>
void expect_gradients_of_solve(const std::string& what, G g, S s, const Tensor<T>& A, const Tensor<T>& B,
                               std::uint64_t seed) {
  const auto w = Tensor<T>::randn(s(A, B).shape(), seed);
  auto lg = [&](const auto& A, const auto& B) { return tx::testing::re_inner(w, g(A, B)); };
  auto ls = [&](const auto& A, const auto& B) { return tx::testing::re_inner(w, s(A, B)); };
  const auto [gA1, gB1] = tx::grad(lg, A, B);
  const auto [gA2, gB2] = tx::grad(ls, A, B);
  expect_close(values(gA1), values(gA2), 1e-12, what + ": d/dA");
  expect_close(values(gB1), values(gB2), 1e-12, what + ": d/dB");
}

}  // namespace

// ---- solve ---------------------------------------------------------------------------------------

TYPED_TEST(LinalgGradSolve, SolveLeftMatrixRhs) {
  using T = TypeParam;
  auto f = [](const auto& A, const auto& B) { return la::solve(A, B); };
  const auto A = well_conditioned<T>(4, {}, 101);
  const auto B = Tensor<T>::randn({4, 3}, 102);
  expect_close(values(tx::matmul(A, f(A, B))), values(B), 1e-13, "A X = B");
  TENAX_CHECK_GRADS(f, A, B);
}

TYPED_TEST(LinalgGradSolve, SolveLeftVectorRhs) {
  using T = TypeParam;
  auto f = [](const auto& A, const auto& b) { return la::solve(A, b); };
  const auto A = well_conditioned<T>(5, {}, 111);
  const auto b = Tensor<T>::randn({5}, 112);
  EXPECT_EQ(f(A, b).shape(), b.shape());
  TENAX_CHECK_GRADS(f, A, b);
}

TYPED_TEST(LinalgGradSolve, SolveRightMatrixRhs) {
  using T = TypeParam;
  auto f = [](const auto& A, const auto& B) { return la::solve(A, B, /*left=*/false); };
  const auto A = well_conditioned<T>(4, {}, 121);
  const auto B = Tensor<T>::randn({2, 4}, 122);
  expect_close(values(tx::matmul(f(A, B), A)), values(B), 1e-13, "X A = B");
  TENAX_CHECK_GRADS(f, A, B);
}

TYPED_TEST(LinalgGradSolve, SolveBatched) {
  using T = TypeParam;
  auto f = [](const auto& A, const auto& B) { return la::solve(A, B); };
  auto fr = [](const auto& A, const auto& B) { return la::solve(A, B, false); };
  const auto A = well_conditioned<T>(4, {3}, 131);
  const auto B = Tensor<T>::randn({4, 2, 3}, 132);
  const auto Br = Tensor<T>::randn({2, 4, 3}, 133);
  const auto b = Tensor<T>::randn({4, 3}, 134);  // a batch of vectors
  TENAX_CHECK_GRADS(f, A, B);
  TENAX_CHECK_GRADS(fr, A, Br);
  TENAX_CHECK_GRADS(f, A, b);
  expect_batch_matches_loop(f, A, B);
  expect_batch_matches_loop(fr, A, Br);
  expect_batch_matches_loop(f, A, b);
  // B broadcast over A's batch: its gradient is summed over the batch.
  TENAX_CHECK_GRADS(f, A, Tensor<T>::randn({4, 2}, 135));
  // Right side: a k x n B whose trailing dimension n equals A's batch size is a matrix (k != n),
  // not a batch of vectors; it broadcasts over A's batch.
  const auto A4 = well_conditioned<T>(4, {4}, 140);
  const auto Bk = Tensor<T>::randn({5, 4}, 139);
  const auto Xr = fr(A4, Bk);
  ASSERT_EQ(Xr.shape(), tx::Shape({5, 4, 4}));
  auto one = [](const Tensor<T>& t, std::int64_t k) {
    return t.slice(2, k, k + 1).reshape({t.shape()[0], t.shape()[1]});
  };
  for (std::int64_t k = 0; k < 4; ++k)
    expect_close(values(tx::matmul(one(Xr, k), one(A4, k))), values(Bk), 1e-12, "X A = B, B broadcast");
  // On the left, n x batch is a batch of vectors.
  const auto B33 = Tensor<T>::randn({4, 3}, 138);
  EXPECT_EQ(f(A, B33).shape(), tx::Shape({4, 3}));  // vectors: B's trailing shape is A's batch
}

TYPED_TEST(LinalgGradSolve, SolveBroadcastsA) {
  using T = TypeParam;
  auto f = [](const auto& A, const auto& B) { return la::solve(A, B); };
  auto fr = [](const auto& A, const auto& B) { return la::solve(A, B, false); };
  // One A for a batch of right-hand sides (A factorized once; its gradient sums over the batch).
  const auto A = well_conditioned<T>(4, {}, 136);
  const auto B = Tensor<T>::randn({4, 2, 3}, 137);
  const auto X = f(A, B);
  ASSERT_EQ(X.shape(), tx::Shape({4, 2, 3}));
  for (std::int64_t b = 0; b < 3; ++b)
    expect_close(values(batch_elem(X, b)), values(f(A, batch_elem(B, b))), 1e-14,
                 "A unbatched, element " + std::to_string(b));
  TENAX_CHECK_GRADS(f, A, B);
  TENAX_CHECK_GRADS(fr, A, Tensor<T>::randn({2, 4, 3}, 138));
  // Both batches broadcast: A (4, 4, 1, 2) against B (4, 2, 3, 1) gives (4, 2, 3, 2).
  const auto A2 = well_conditioned<T>(4, {1, 2}, 139);
  const auto B2 = Tensor<T>::randn({4, 2, 3, 1}, 140);
  const auto X2 = f(A2, B2);
  ASSERT_EQ(X2.shape(), tx::Shape({4, 2, 3, 2}));
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 2; ++j) {
      const auto Aij = A2.slice(3, j, j + 1).slice(2, 0, 1).reshape(tx::Shape{4, 4});
      const auto Bij = B2.slice(2, i, i + 1).reshape(tx::Shape{4, 2});
      const auto Xij = X2.slice(3, j, j + 1).slice(2, i, i + 1).reshape(tx::Shape{4, 2});
      expect_close(values(Xij), values(f(Aij, Bij)), 1e-14, "broadcast element");
    }
  TENAX_CHECK_GRADS(f, A2, B2);
}

TYPED_TEST(LinalgGradSolve, SolveNonContiguous) {
  using T = TypeParam;
  auto f = [](const auto& A, const auto& B) { return la::solve(A, B); };
  auto fr = [](const auto& A, const auto& B) { return la::solve(A, B, false); };
  const auto A = well_conditioned<T>(4, {2}, 141);
  const auto B = Tensor<T>::randn({4, 3, 2}, 142);
  const auto Av = transposed_view(A), Bv = step_view(B);
  expect_layout_invariant(f, Av, Bv);
  expect_layout_invariant(f, step_view(A), transposed_view(B));
  TENAX_CHECK_GRADS(f, Av, Bv);
  const auto Br = Tensor<T>::randn({3, 4, 2}, 143);
  expect_layout_invariant(fr, Av, transposed_view(Br));
  TENAX_CHECK_GRADS(fr, step_view(A), transposed_view(Br));
}

// The small-matrix ops of the solve rules (ops/linalg/solve_tangent.hpp) against the rule's tensor
// ops on the same factors, for op N and C, sizes up to the limit and a batch; operands of any
// layout read in place; the ops' own derivatives; bad pivots, shapes and op = T raise errors naming
// the op; and solve's gradient, which takes them, against the formula.
TYPED_TEST(LinalgGradSolve, SolveKernelsMatchTheRuleOps) {
  using T = TypeParam;
  namespace d = tx::detail;
  std::uint64_t seed = 720;
  for (std::int64_t n : {1, 2, 3, 5, 8, 16})
    for (std::int64_t k : {1, 3, 16}) {
      SCOPED_TRACE("n = " + std::to_string(n) + ", k = " + std::to_string(k));
      const auto A = well_conditioned<T>(n, {3}, ++seed);
      const auto [LU, piv] = la::lu_factor(A);
      const auto M = Tensor<T>::randn(tx::lgtest::mshape(n, n, {3}), ++seed);
      const auto X = Tensor<T>::randn(tx::lgtest::mshape(n, k, {3}), ++seed);
      const auto G = Tensor<T>::randn(tx::lgtest::mshape(n, k, {3}), ++seed);
      for (la::Trans t : {la::Trans::N, la::Trans::C}) {
        SCOPED_TRACE(trans_name(t));
        const auto dX = d::solve_tangent_small(t, A, LU, piv, M, X);
        expect_close(values(dX), values(tx::neg(la::lu_solve(LU, piv, tx::matmul(M, X), t))), 1e-12, "dX");
        // gB = op(A)^-H G: (A^H)^-1 G for N, A^-1 G for C.
        const auto gB_want = la::lu_solve(LU, piv, G, t == la::Trans::N ? la::Trans::C : la::Trans::N);
        const auto [gB, gA] = d::solve_cotangent_small(t, A, LU, piv, G, X);
        expect_close(values(gB), values(gB_want), 1e-12, "gB");
        expect_close(values(gA), values(tx::neg(tx::matmul(gB_want, X.mH()))), 1e-12, "-gB X^H");
        // Operands of any layout, read in place: bit-equal to their contiguous copies.
        if (n == 1) continue;
        const auto Mt = transposed_view(M);
        const auto Gb = tx::expand(Tensor<T>::randn({1, 1, 1}, ++seed), tx::lgtest::mshape(n, k, {3}));
        EXPECT_EQ(d::solve_tangent_small(t, A, LU, piv, Mt, X).to_vector(),
                  d::solve_tangent_small(t, A, LU, piv, tx::contiguous(Mt), X).to_vector());
        const auto [gB1, gA1] = d::solve_cotangent_small(t, A, LU, piv, Gb, X);
        const auto [gB2, gA2] = d::solve_cotangent_small(t, A, LU, piv, tx::contiguous(Gb), X);
        EXPECT_EQ(gB1.to_vector(), gB2.to_vector());
        EXPECT_EQ(gA1.to_vector(), gA2.to_vector());
      }
    }
  // The ops' own derivatives (in A through its factors, and in M, X or G), to second order by the
  // harness, a batch of two, both ops.
  const auto A = well_conditioned<T>(4, {2}, 749), B = Tensor<T>::randn({4, 2, 2}, 750);
  for (la::Trans t : {la::Trans::N, la::Trans::C}) {
    SCOPED_TRACE(trans_name(t));
    auto ft = [t](const auto& a, const auto& m, const auto& x) {
      const auto [lu, p] = la::lu_factor(a);
      return d::solve_tangent_small(t, a, lu, p, m, x);
    };
    auto fc = [t](const auto& a, const auto& g, const auto& x) {
      const auto [lu, p] = la::lu_factor(a);
      const auto [gb, c] = d::solve_cotangent_small(t, a, lu, p, g, x);
      return tx::concat<scalar_of<decltype(g)>>({gb, c}, 1);  // (both outputs: 4 x (2 + 4) x 2)
    };
    TENAX_CHECK_GRADS(ft, A, Tensor<T>::randn(tx::lgtest::mshape(4, 4, {2}), 753), B);
    TENAX_CHECK_GRADS(fc, A, Tensor<T>::randn({4, 2, 2}, 754), B);
  }
  // solve's gradient through the kernel against -A^-H W X^H.
  const auto dA = Tensor<T>::randn(tx::lgtest::mshape(4, 4, {2}), 751), W = Tensor<T>::randn({4, 2, 2}, 752);
  auto f = [B](const auto& a) { return la::solve(a, B); };
  auto loss = [&](const auto& a) { return tx::testing::re_inner(W, f(a)); };
  expect_close(values(tx::grad(loss, A)), values(tx::neg(tx::matmul(la::solve(A.mH(), W), f(A).mH()))), 1e-12,
               "gA = -A^-H W X^H");
  // Bad pivots and shapes: errors naming the op.
  const auto [LU, piv] = la::lu_factor(A);
  auto bad = piv.to_vector();
  bad[1] = 9;
  const auto badp = Tensor<std::int32_t>::from_col_major(piv.shape(), bad);
  const auto X = Tensor<T>::randn({4, 2, 2}, 753);
  const std::string e1 = tx::testing::error_of([&] { d::solve_tangent_small(la::Trans::N, A, LU, badp, dA, X); });
  EXPECT_NE(e1.find("solve_tangent"), std::string::npos) << e1;
  EXPECT_NE(e1.find("pivot 1 of matrix 0 is 9"), std::string::npos) << e1;
  const std::string e2 = tx::testing::error_of([&] {
    d::solve_cotangent_small(la::Trans::N, A, LU, piv, Tensor<T>::randn({4, 3, 2}, 1), X);
  });
  EXPECT_NE(e2.find("solve_cotangent"), std::string::npos) << e2;
  EXPECT_NE(e2.find("[4, 3, 2]"), std::string::npos) << e2;
  const std::string e3 = tx::testing::error_of([&] {
    d::solve_tangent_small(la::Trans::N, A, LU, piv, Tensor<T>::randn({4, 5, 2}, 1), X);
  });
  EXPECT_NE(e3.find("solve_tangent"), std::string::npos) << e3;
  EXPECT_NE(e3.find("[4, 5, 2]"), std::string::npos) << e3;
  const std::string e4 = tx::testing::error_of([&] { d::solve_tangent_small(la::Trans::T, A, LU, piv, dA, X); });
  EXPECT_NE(e4.find("solve_tangent"), std::string::npos) << e4;
}

// ---- inv, det, slogdet -----------------------------------------------------------------------------

TYPED_TEST(LinalgGradSolve, Inv) {
  using T = TypeParam;
  auto f = [](const auto& A) { return la::inv(A); };
  const auto A = well_conditioned<T>(4, {}, 151);
  expect_close(values(tx::matmul(A, f(A))), values(Tensor<T>::eye(4)), 1e-13, "A inv(A) = I");
  TENAX_CHECK_GRADS(f, A);
  const auto Ab = well_conditioned<T>(3, {3}, 152);
  TENAX_CHECK_GRADS(f, Ab);
  expect_batch_matches_loop(f, Ab);
  expect_layout_invariant(f, transposed_view(Ab));
  TENAX_CHECK_GRADS(f, step_view(Ab));
}

TYPED_TEST(LinalgGradSolve, Det) {
  using T = TypeParam;
  auto f = [](const auto& A) { return la::det(A); };
  const auto A = well_conditioned<T>(4, {}, 161, 2.0);
  TENAX_CHECK_GRADS(f, A);
  const auto Ab = well_conditioned<T>(3, {3}, 162, 2.0);
  TENAX_CHECK_GRADS(f, Ab);
  expect_batch_matches_loop(f, Ab);
  expect_layout_invariant(f, transposed_view(Ab));
  TENAX_CHECK_GRADS(f, step_view(Ab));
  // A matrix with a negative determinant (rows 0 and 1 of a diagonally dominant matrix swapped).
  const auto P = Tensor<T>::from_row_major({3, 3}, {T(0), T(1), T(0), T(1), T(0), T(0), T(0), T(0), T(1)});
  const auto An = tx::matmul(P, well_conditioned<T>(3, {}, 163));
  if constexpr (!tx::is_complex_v<T>) EXPECT_LT(f(An).item(), 0);
  TENAX_CHECK_GRADS(f, An);
  // The value is the product of U's diagonal (kept scaled), not exp(log|det|): exact for small
  // integers; no overflow or underflow on the way to a representable result; inf or 0 past the
  // range, like the true value.
  using R = tx::real_t<T>;
  EXPECT_EQ(f(Tensor<T>::from_col_major({1, 1}, {T(-3)})).item(), T(-3));
  const auto D = Tensor<T>::from_col_major({3, 3}, {T(2), T(0), T(0), T(0), T(3), T(0), T(0), T(0), T(5)});
  EXPECT_EQ(f(D).item(), T(30));
  EXPECT_EQ(f(tx::matmul(P, D)).item(), T(-30));
  const R big = std::numeric_limits<R>::max() / R(4), tiny = R(1) / big;
  const auto B4 = tx::diag_embed(Tensor<T>::from_col_major({4}, {T(big), T(big), T(tiny), T(tiny)}));
  EXPECT_NEAR(std::abs(f(B4).item() - T(1)), 0.0, 8 * std::numeric_limits<R>::epsilon());
  const auto I2 = Tensor<T>::eye(2) * T(big);
  EXPECT_TRUE(std::isinf(std::real(f(I2).item())));
  EXPECT_EQ(f(Tensor<T>::eye(2) * T(R(1e-200))).item(), T(0));  // 1e-400
  if constexpr (tx::is_complex_v<T>) {                          // (1 + 2i)(3 - i) = 5 + 5i
    const auto Z = Tensor<T>::from_col_major({2, 2}, {T(1, 2), T(0), T(0), T(3, -1)});
    EXPECT_EQ(f(Z).item(), T(5, 5));
  }
}

// A copy of A with column j set to zero: exactly singular, and LU meets an exactly zero pivot
// (U(j + 1, j + 1) in 1-based terms; rounding cannot hide it, unlike for two equal rows).
template <class T>
Tensor<T> zero_column(const Tensor<T>& A, std::int64_t j) {
  auto v = A.contiguous().to_vector();
  const std::int64_t n = A.shape()[0];
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i + j * n)] = T(0);
  return Tensor<T>::from_col_major(A.shape(), v);
}

// det is a polynomial: its derivative at an exactly singular matrix is the adjugate (rank 1 at
// rank n - 1, zero below), not NaN.
TYPED_TEST(LinalgGradSolve, DetAtSingularMatrices) {
  using T = TypeParam;
  auto f = [](const auto& A) { return la::det(A); };
  // Rank 3 (column 1 zero).
  const auto S = zero_column(well_conditioned<T>(4, {}, 164), 1);
  EXPECT_EQ(f(S).item(), T(0));
  // d det(A)/dA(i, j) = adj(A)(j, i), the (i, j) cofactor; the gradient of Re det is adj(A)^H.
  // Check it against the adjugate's defining identity adj(A) A = det(A) I = 0, and nonzero.
  const auto G = tx::grad([&](const Tensor<T>& a) { return tx::real(tx::sum(f(a))); }, S);
  const auto adj = G.mH();
  EXPECT_LT(tx::testing::max_abs(values(tx::matmul(adj, S))), 1e-12);
  EXPECT_GT(tx::testing::norm(values(G)), 0.1);
  tx::testing::GradOptions o;
  o.f32 = false;          // the float32 copy of S is not exactly singular
  o.second_order = true;  // the adjugate's own rules (a fixed SVD frame): exact at rank n - 1 and below
  o.reverse_over_forward = true;
  tx::testing::expect_ad(o, f, S);
  // In a batch with nonsingular matrices; and rank 2 (adj = 0).
  const auto Sb = tx::stack<T>({well_conditioned<T>(4, {}, 165), S}, 2);
  tx::testing::expect_ad(o, f, Sb);
  const auto S2 = zero_column(S, 3);
  const auto G2 = tx::grad([&](const Tensor<T>& a) { return tx::real(tx::sum(f(a))); }, S2);
  EXPECT_LT(tx::testing::max_abs(values(G2)), 1e-12);
  tx::testing::expect_ad(o, f, S2);
  // Second derivatives at rank n - 1 and n - 2, real and complex, against central differences of
  // the gradient (the gradient away from the singular matrix comes from the LU rule). At rank
  // n - 2 the adjugate vanishes but its derivative does not; a direction that is not symmetric
  // shows the off-diagonal cofactors (diag(1, 0, 0), V = 1..9: H V = [0 0 0; 0 9 -6; 0 -8 5]).
  {
    auto re_det = [](const Tensor<T>& a) { return tx::real(la::det(a)); };
    const auto V = Tensor<T>::randn({4, 4}, 169);
    for (const auto& X : {S, S2, zero_column(S2, 0)}) {
      const auto Hv = tx::hvp(re_det, X, V);
      const double h = 1e-5;
      const auto fd = (tx::grad(re_det, X + V * T(h)) - tx::grad(re_det, X - V * T(h))) * T(0.5 / h);
      EXPECT_LT(tx::testing::max_abs(values(Hv - fd)), 1e-6 * (1 + tx::testing::max_abs(values(fd))));
    }
    const auto D1 = Tensor<T>::from_col_major({3, 3}, {T(1), T(0), T(0), T(0), T(0), T(0), T(0), T(0), T(0)});
    const auto V9 = Tensor<T>::from_col_major({3, 3}, {T(1), T(2), T(3), T(4), T(5), T(6), T(7), T(8), T(9)});
    const auto H9 = tx::hvp(re_det, D1, V9);
    const auto want = Tensor<T>::from_col_major({3, 3}, {T(0), T(0), T(0), T(0), T(9), T(-8), T(0), T(-6), T(5)});
    EXPECT_LT(tx::testing::max_abs(values(H9 - want)), 1e-12);
  }
  // The Hessian-vector product at the singular matrix is finite and matches central differences
  // of the gradient (the real SVD rule has no phase term to divide by the zero singular value).
  if constexpr (std::is_same_v<T, double>) {
    const auto V = Tensor<T>::randn({3, 3}, 166);
    // Matrices whose zero singular value the SVD returns exactly: a zero column, and diag(1, 2, 0).
    const auto Z = Tensor<T>::from_row_major({3, 3}, {1, 2, 0, 3, 5, 0, 4, 1, 0});
    const auto D = Tensor<T>::from_row_major({3, 3}, {1, 0, 0, 0, 2, 0, 0, 0, 0});
    for (const auto& X : {Z, D}) {
      const auto Hv = tx::hvp(f, X, V);
      const double h = 1e-5;
      const auto fd = (tx::grad(f, X + V * T(h)) - tx::grad(f, X - V * T(h))) * T(0.5 / h);
      EXPECT_LT(tx::testing::max_abs(values(Hv - fd)), 1e-6 * (1 + tx::testing::max_abs(values(fd))));
    }
    // A batch mixing both kinds: each matrix gets its own rule. The identity (all singular values
    // equal) was differentiated through the SVD adjugate once a singular matrix shared its batch,
    // and its second derivative lost the repeated pairs' terms.
    const auto Xb = tx::stack<T>({Tensor<T>::eye(3), Z, well_conditioned<T>(3, {}, 167), D}, 2);
    const auto Vb = Tensor<T>::randn({3, 3, 4}, 168);
    auto fb = [](const Tensor<T>& a) { return tx::sum(la::det(a)); };
    const auto Hb = tx::hvp(fb, Xb, Vb);
    const double h = 1e-5;
    const auto fdb = (tx::grad(fb, Xb + Vb * T(h)) - tx::grad(fb, Xb - Vb * T(h))) * T(0.5 / h);
    EXPECT_LT(tx::testing::max_abs(values(Hb - fdb)), 1e-6 * (1 + tx::testing::max_abs(values(fdb))));
    // The first derivative per matrix: the gradient of det at I is I, at Z its adjugate.
    auto mat = [](const Tensor<T>& t, std::int64_t b) { return t.slice(2, b, b + 1).reshape({3, 3}); };
    const auto Gb = tx::grad(fb, Xb);
    EXPECT_LT(tx::testing::max_abs(values(mat(Gb, 0) - Tensor<T>::eye(3))), 1e-14);
    EXPECT_LT(tx::testing::max_abs(values(tx::matmul(mat(Gb, 1).mH(), Z))), 1e-12);
    // jvp agrees with the gradient: <G, V> per batch sum.
    const auto [y, dy] = tx::jvp(fb, Xb, Vb);
    EXPECT_NEAR(dy.item(), tx::sum(Gb * Vb).item(), 1e-12 * (1 + std::abs(dy.item())));
    // Large n: the stand-in for the regular matrices in the adjugate branch keeps its cofactors
    // finite, so anomaly mode finds nothing to report in a mixed batch's hvp.
    {
      const std::int64_t nl = 180;
      const auto Rl = Tensor<T>::randn({nl, nl}, 170) + Tensor<T>::eye(nl) * T(20);
      const auto Xl = tx::stack<T>({Rl, zero_column(Rl, 3)}, 2);
      tx::AnomalyGuard anomaly(true, false);
      const auto Hl = tx::hvp(fb, Xl, Tensor<T>::randn({nl, nl, 2}, 171) * T(1e-3));
      EXPECT_TRUE(std::isfinite(tx::testing::max_abs(values(Hl))));
    }
  }
}

// d cof(A)[V] of a 3 x 3 matrix, exactly (each cofactor is a 2 x 2 minor, bilinear in A): the
// Hessian-vector product of det (real), or its conjugate (the gradient of Re det is conj(cof)).
template <class T>
Tensor<T> cofactor_derivative3(const Tensor<T>& A, const Tensor<T>& V) {
  const auto a = A.contiguous().to_vector(), v = V.contiguous().to_vector();
  const auto at = [&](const std::vector<T>& m, int i, int j) { return m[static_cast<std::size_t>(i + 3 * j)]; };
  std::vector<T> out(9);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const int r0 = i == 0 ? 1 : 0, r1 = i == 2 ? 1 : 2, c0 = j == 0 ? 1 : 0, c1 = j == 2 ? 1 : 2;
      const T m = at(a, r0, c0) * at(v, r1, c1) + at(v, r0, c0) * at(a, r1, c1) - at(a, r0, c1) * at(v, r1, c0) -
                  at(v, r0, c1) * at(a, r1, c0);
      const T c = (i + j) % 2 ? -m : m;
      if constexpr (tx::is_complex_v<T>)
        out[static_cast<std::size_t>(i + 3 * j)] = std::conj(c);
      else
        out[static_cast<std::size_t>(i + 3 * j)] = c;
    }
  return Tensor<T>::from_col_major({3, 3}, out);
}

// det's second derivatives at matrices that are singular only up to rounding (or nearly): the LU
// rules' derivative cancels terms of size det / sigma_min^2, so there the adjugate's rules take
// over (detail::split_singular); checked against the exact derivative of the cofactors.
TYPED_TEST(LinalgGradSolve, DetSecondDerivativesNearSingularMatrices) {
  using T = TypeParam;
  using R = tx::real_t<T>;
  auto re_det = [](const Tensor<T>& a) { return tx::real(tx::sum(la::det(a))); };
  const R eps = std::numeric_limits<R>::epsilon();
  const R e = std::is_same_v<R, double> ? R(1e-12) : R(1e-5);
  const auto near = Tensor<T>::from_row_major({3, 3}, {T(1), T(2), T(3), T(4), T(5), T(6), T(7), T(8), T(R(9) + e)});
  // Rank 2 up to rounding: a product of 3 x 2 and 2 x 3 factors.
  const auto low = tx::matmul(Tensor<T>::randn({3, 2}, 171), Tensor<T>::randn({2, 3}, 172)).contiguous();
  const auto V = Tensor<T>::randn({3, 3}, 173);
  for (const auto& [name, X] : {std::pair{"near", near}, std::pair{"low", low}}) {
    const auto want = cofactor_derivative3(X, V);
    const R scale = R(1) + tx::testing::max_abs(values(want));
    EXPECT_LT(tx::testing::max_abs(values(tx::hvp(re_det, X, V) - want)), 64 * eps * scale) << name << " hvp";
    // reverse over reverse: the gradient of Re <V, conj(cof)> = Re sum(V o cof), whose gradient is
    // conj(d cof[V]) too (the mixed partials of det are symmetric)
    const auto rr =
        tx::grad([&](const Tensor<T>& a) { return tx::real(tx::sum(tx::conj(V) * tx::grad(re_det, a))); }, X);
    EXPECT_LT(tx::testing::max_abs(values(rr - want)), 64 * eps * scale) << name << " reverse over reverse";
  }
  // In a batch with a well-conditioned matrix (each takes its own rule).
  const auto W = well_conditioned<T>(3, {}, 174);
  const auto Xb = tx::stack<T>({W, low}, 2);
  const auto Vb = tx::stack<T>({V, V}, 2);
  const auto Hb = tx::hvp(re_det, Xb, Vb);
  auto mat = [](const Tensor<T>& t, std::int64_t b) { return t.slice(2, b, b + 1).reshape({3, 3}); };
  for (std::int64_t b = 0; b < 2; ++b) {
    const auto want = cofactor_derivative3(mat(Xb, b), V);
    EXPECT_LT(tx::testing::max_abs(values(mat(Hb, b) - want)), 64 * eps * (R(1) + tx::testing::max_abs(values(want))))
        << "batch " << b;
  }
}

TYPED_TEST(LinalgGradSolve, SlogdetEx) {
  using T = TypeParam;
  const auto S = zero_column(well_conditioned<T>(3, {}, 174), 1);
  auto nv = S.to_vector();
  nv[8] = T(std::numeric_limits<double>::quiet_NaN());
  const auto N = Tensor<T>::from_col_major(S.shape(), nv);
  const auto W = well_conditioned<T>(3, {}, 175);
  auto [s, l, info] = la::slogdet_ex(tx::stack<T>({W, S, N}, 2));
  ASSERT_EQ(info.shape(), tx::Shape({3}));
  EXPECT_EQ(info.to_vector(), (std::vector<std::int32_t>{0, 2, -1}));
  const auto lv = l.to_vector();
  EXPECT_TRUE(std::isfinite(lv[0]));
  EXPECT_EQ(lv[1], -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(lv[2]));
  auto [s1, l1, info1] = la::slogdet_ex(W);
  EXPECT_EQ(info1.dim(), 0);
  EXPECT_EQ(info1.item(), 0);
}

TYPED_TEST(LinalgGradSolve, SlogdetBothOutputs) {
  using T = TypeParam;
  auto fs = [](const auto& A) { return la::slogdet(A).first; };
  auto fl = [](const auto& A) { return la::slogdet(A).second; };
  auto both = [](const auto& A) {  // (sign, log|det|) stacked as one output of A's type
    using S = scalar_of<decltype(A)>;
    auto [s, l] = la::slogdet(A);
    return tx::stack(std::vector<Tensor<S>>{s, tx::cast<S>(l)}, 0);
  };
  const auto P = Tensor<T>::from_row_major({3, 3}, {T(0), T(1), T(0), T(1), T(0), T(0), T(0), T(0), T(1)});
  for (const auto& A : {well_conditioned<T>(4, {}, 171), tx::matmul(P, well_conditioned<T>(3, {}, 172))}) {
    const auto [s, l] = la::slogdet(A);
    expect_close(values(tx::mul(s, tx::cast<T>(tx::exp(l)))), values(la::det(A)), 1e-14, "sign exp(logabs) = det");
    TENAX_CHECK_GRADS(fs, A);
    TENAX_CHECK_GRADS(fl, A);
    TENAX_CHECK_GRADS(both, A);
  }
  const auto Ab = well_conditioned<T>(3, {3}, 173);
  TENAX_CHECK_GRADS(both, Ab);
  expect_batch_matches_loop(both, Ab);
  expect_batch_matches_loop(fl, Ab);
  expect_layout_invariant(both, transposed_view(Ab));
  TENAX_CHECK_GRADS(both, step_view(Ab));
}

// ---- solve_triangular ----------------------------------------------------------------------------

// Every combination of upper/lower x left/right x N/T/C x unit/non-unit; gradients with respect
// to both the triangular matrix (only its referenced triangle matters, so the full random matrix
// is a valid input for finite differences) and the right-hand side.
TYPED_TEST(LinalgGradSolve, SolveTriangularAllFlags) {
  using T = TypeParam;
  const std::int64_t n = 4, k = 3;
  // Off-diagonal entries ~0.5, diagonal shifted by n: well conditioned, also with a unit diagonal.
  const auto A = tx::add(tx::mul(Tensor<T>::randn({n, n}, 181), T(0.5)), tx::mul(Tensor<T>::eye(n), T(n)));
  for (bool upper : {false, true})
    for (bool left : {true, false})
      for (bool unit : {false, true})
        for (la::Trans t : {la::Trans::N, la::Trans::T, la::Trans::C}) {
          SCOPED_TRACE(std::string(upper ? "upper" : "lower") + (left ? " left" : " right") +
                       (unit ? " unit " : " non-unit ") + trans_name(t));
          auto f = [=](const auto& A, const auto& B) { return la::solve_triangular(A, B, upper, left, unit, t); };
          const auto B = left ? Tensor<T>::randn({n, k}, 182) : Tensor<T>::randn({k, n}, 183);
          // Value: op(tri(A)) X = B (left) or X op(tri(A)) = B (right).
          Tensor<T> Tm = upper ? tx::triu(A, unit ? 1 : 0) : tx::tril(A, unit ? -1 : 0);
          if (unit) Tm = tx::add(Tm, Tensor<T>::eye(n));
          const auto X = f(A, B);
          const auto opT = apply_op(Tm, t);
          expect_close(values(left ? tx::matmul(opT, X) : tx::matmul(X, opT)), values(B), 1e-13,
                       "triangular solve residual");
          TENAX_CHECK_GRADS(f, A, B);
        }
}

// The batch and layout checks of solve_triangular and triangular_matmul: op(A, B, upper, left,
// unit, trans) with left and right operands, broadcast batches and strided views; `view_grads`
// also checks gradients at the views.
template <class T, class Op>
void triangular_batched_and_views(const Tensor<T>& A, Op op, std::uint64_t seed, bool view_grads) {
  const std::int64_t n = A.shape()[0];
  for (bool upper : {false, true})
    for (la::Trans t : {la::Trans::N, la::Trans::C}) {
      SCOPED_TRACE(std::string(upper ? "upper " : "lower ") + trans_name(t));
      auto f = [=](const auto& A, const auto& B) { return op(A, B, upper, true, false, t); };
      auto fr = [=](const auto& A, const auto& B) { return op(A, B, upper, false, true, t); };
      const auto B = Tensor<T>::randn({n, 2, 3}, seed), Br = Tensor<T>::randn({2, n, 3}, seed + 1);
      TENAX_CHECK_GRADS(f, A, B);
      expect_batch_matches_loop(f, A, B);
      expect_batch_matches_loop(fr, A, Br);
      // Broadcast batch dimensions: an unbatched A against a batched B and vice versa.
      TENAX_CHECK_GRADS(f, batch_elem(A, 1), B);
      TENAX_CHECK_GRADS(fr, A, batch_elem(Br, 2));
      // Views: a transposed view of A (not a unit row stride) and a step-2 slice of B.
      expect_layout_invariant(f, transposed_view(A), step_view(B));
      expect_layout_invariant(fr, step_view(A), transposed_view(Br));
      if (view_grads) TENAX_CHECK_GRADS(f, transposed_view(A), step_view(B));
    }
}

TYPED_TEST(LinalgGradSolve, SolveTriangularBatchedAndViews) {
  using T = TypeParam;
  const std::int64_t n = 4;
  const auto A =
      tx::add(tx::mul(Tensor<T>::randn({n, n, 3}, 191), T(0.5)), tx::mul(tx::lgtest::eye_batch<T>(n, {3}), T(n)));
  triangular_batched_and_views(
      A,
      [](const auto& a, const auto& b, bool u, bool l, bool d, la::Trans t) {
        return la::solve_triangular(a, b, u, l, d, t);
      },
      192, true);
}

// ---- triangular_matmul ---------------------------------------------------------------------------

// Every flag combination, against matmul with the triangle made explicit; gradients with respect
// to both operands (only the referenced triangle of A matters, and gradients land only there).
TYPED_TEST(LinalgGradSolve, TriangularMatmulAllFlags) {
  using T = TypeParam;
  const std::int64_t n = 4, k = 3;
  const auto A = Tensor<T>::randn({n, n}, 185);
  for (bool upper : {false, true})
    for (bool left : {true, false})
      for (bool unit : {false, true})
        for (la::Trans t : {la::Trans::N, la::Trans::T, la::Trans::C}) {
          SCOPED_TRACE(std::string(upper ? "upper" : "lower") + (left ? " left" : " right") +
                       (unit ? " unit " : " non-unit ") + trans_name(t));
          auto f = [=](const auto& A, const auto& B) { return la::triangular_matmul(A, B, upper, left, unit, t); };
          const auto B = left ? Tensor<T>::randn({n, k}, 186) : Tensor<T>::randn({k, n}, 187);
          Tensor<T> Tm = upper ? tx::triu(A, unit ? 1 : 0) : tx::tril(A, unit ? -1 : 0);
          if (unit) Tm = tx::add(Tm, Tensor<T>::eye(n));
          const auto opT = apply_op(Tm, t);
          expect_close(values(f(A, B)), values(left ? tx::matmul(opT, B) : tx::matmul(B, opT)), 1e-14,
                       "triangular product");
          TENAX_CHECK_GRADS(f, A, B);
          // The other triangle of A is not read: its gradient is zero.
          const auto Ar = A.requires_grad();
          tx::sum(tx::real(f(Ar, B))).backward();
          const auto other = upper ? tx::tril(Ar.grad(), unit ? 0 : -1) : tx::triu(Ar.grad(), unit ? 0 : 1);
          for (T v : other.contiguous().to_vector()) EXPECT_EQ(v, T(0));
        }
}

TYPED_TEST(LinalgGradSolve, TriangularMatmulBatchedAndViews) {
  using T = TypeParam;
  triangular_batched_and_views(
      Tensor<T>::randn({4, 4, 3}, 195),
      [](const auto& a, const auto& b, bool u, bool l, bool d, la::Trans t) {
        return la::triangular_matmul(a, b, u, l, d, t);
      },
      196, false);
}

// ---- lu_solve ------------------------------------------------------------------------------------

TYPED_TEST(LinalgGradSolve, LuSolveWrtB) {
  using T = TypeParam;
  const auto A = well_conditioned<T>(4, {}, 201, 1.0);
  const auto lf = la::lu_factor(A);
  const Tensor<T> LU = lf.first;
  const auto piv = lf.second;
  const auto B = Tensor<T>::randn({4, 3}, 202);
  for (la::Trans t : {la::Trans::N, la::Trans::T, la::Trans::C}) {
    SCOPED_TRACE(trans_name(t));
    auto f = [=](const auto& B) {
      using S = scalar_of<decltype(B)>;
      return la::lu_solve(tx::cast<S>(LU), piv, B, t);
    };
    expect_close(values(f(B)), values(la::solve(apply_op(A, t), B)), 1e-13, "lu_solve == solve(op(A), B)");
    TENAX_CHECK_GRADS(f, B);
  }
}

TYPED_TEST(LinalgGradSolve, LuSolveWrtLU) {
  using T = TypeParam;
  const auto A = well_conditioned<T>(4, {}, 211, 1.0);
  const auto lf = la::lu_factor(A);
  const Tensor<T> LU = lf.first;
  const auto piv = lf.second;
  const auto B = Tensor<T>::randn({4, 2}, 212);
  // The packed factors as an independent input (op = N).
  auto f = [piv](const auto& LU, const auto& B) { return la::lu_solve(LU, piv, B); };
  TENAX_CHECK_GRADS(f, LU, B);
  // Through lu_factor: lu_solve(lu_factor(A), B) has the derivatives of solve(A, B).
  auto g = [](const auto& A, const auto& B) {
    auto [LU, piv] = la::lu_factor(A);
    return la::lu_solve(LU, piv, B);
  };
  TENAX_CHECK_GRADS(g, A, B);
  expect_gradients_of_solve(
      "lu_solve(lu_factor(A), B) vs solve(A, B)", g, [](const auto& A, const auto& B) { return la::solve(A, B); }, A, B,
      213);
  // op = T or C: differentiable in LU too (lu_solve then builds the solve from LU's triangles).
  for (la::Trans t : {la::Trans::T, la::Trans::C}) {
    SCOPED_TRACE(trans_name(t));
    auto ft = [piv, t](const auto& LU, const auto& B) { return la::lu_solve(LU, piv, B, t); };
    TENAX_CHECK_GRADS(ft, LU, B);
  }
}

// ---- cholesky_solve ------------------------------------------------------------------------------

// X = A^-1 B from either Cholesky factor: the values of solve(A, B); derivatives in the factor (its
// triangle) and B; through cholesky, those of solve on A's triangle; the factor broadcast over B's
// batch.
TYPED_TEST(LinalgGradSolve, CholeskySolve) {
  using T = TypeParam;
  using tx::lgtest::herm;
  // Hermitian positive definite A = A0 + A0^H (the wrapper the cholesky tests use).
  const auto A0 = tx::lgtest::spd_input<T>(4, {}, 241);
  const auto A = herm(A0);
  const auto B = Tensor<T>::randn({4, 3}, 242);
  for (bool upper : {false, true}) {
    SCOPED_TRACE(upper ? "upper" : "lower");
    const auto F = la::cholesky(A, upper);
    auto f = [upper](const auto& F, const auto& B) { return la::cholesky_solve(F, B, upper); };
    expect_close(values(f(F, B)), values(la::solve(A, B)), 1e-13, "cholesky_solve == solve(A, B)");
    TENAX_CHECK_GRADS(f, F, B);
    // Through cholesky, on the Hermitian wrapper A0 + A0^H (cholesky's rule wants Hermitian
    // directions, as in test_linalg_grad_factor): the derivatives of solve(A0 + A0^H, B).
    auto g = [upper](const auto& A0, const auto& B) {
      return la::cholesky_solve(la::cholesky(herm(A0), upper), B, upper);
    };
    TENAX_CHECK_GRADS(g, A0, B);
    expect_gradients_of_solve(
        "cholesky_solve(cholesky(A), B) vs solve(A, B)", g,
        [](const auto& A0, const auto& B) { return la::solve(herm(A0), B); }, A0, B, 247);
    // One factor against a batch of right-hand sides, and a batch of factors.
    const auto Bb = Tensor<T>::randn({4, 2, 3}, 243);
    const auto X = f(F, Bb);
    ASSERT_EQ(X.shape(), (tx::Shape{4, 2, 3}));
    expect_close(values(X), values(la::solve(A, Bb)), 1e-13, "broadcast factor == solve");
    expect_batch_matches_loop(f, la::cholesky(herm(tx::lgtest::spd_input<T>(3, {2}, 244)), upper),
                              Tensor<T>::randn({3, 2, 2}, 245));
  }
  // Errors are named after the op: a right-hand side of the wrong size, a vector (B is n x k, as in
  // PyTorch), a non-square factor.
  const auto L = la::cholesky(A);
  for (const auto& [bad, want] : {std::pair{Tensor<T>::randn({3, 2}, 1), "does not match"},
                                  std::pair{Tensor<T>::randn({4}, 2), "to be a matrix"}}) {
    const std::string e = tx::testing::error_of([&] { la::cholesky_solve(L, bad); });
    EXPECT_TRUE(tx::testing::has(e, "[cholesky_solve]") && tx::testing::has(e, want)) << e;
  }
  const std::string e = tx::testing::error_of([&] { la::cholesky_solve(Tensor<T>::randn({4, 3}, 3), B); });
  EXPECT_TRUE(tx::testing::has(e, "[cholesky_solve]") && tx::testing::has(e, "square")) << e;
}

// One factorization against a batch of right-hand sides: LU's batch broadcasts to B's (both ways,
// as in solve), with LU's gradient summed over the batch.
TYPED_TEST(LinalgGradSolve, LuSolveBroadcastsLU) {
  using T = TypeParam;
  const auto A = well_conditioned<T>(4, {}, 231, 1.0);
  const auto lf = la::lu_factor(A);
  const Tensor<T> LU = lf.first;
  const auto piv = lf.second;
  const auto B = Tensor<T>::randn({4, 2, 3}, 232);
  for (la::Trans t : {la::Trans::N, la::Trans::T, la::Trans::C}) {
    SCOPED_TRACE(trans_name(t));
    const auto X = la::lu_solve(LU, piv, B, t);
    ASSERT_EQ(X.shape(), (tx::Shape{4, 2, 3}));
    expect_close(values(X), values(la::solve(apply_op(A, t), B)), 1e-13, "== solve(op(A), B)");
    auto f = [piv, t](const auto& LU, const auto& B) { return la::lu_solve(LU, piv, B, t); };
    TENAX_CHECK_GRADS(f, LU, B);
  }
  // A batch of one LU (shape 4 x 4 x 1) against B's batch of 3 and 2 x 3.
  const auto LU1 = LU.reshape({4, 4, 1});
  const auto piv1 = piv.reshape({4, 1});
  EXPECT_EQ(la::lu_solve(LU1, piv1, B).shape(), (tx::Shape{4, 2, 3}));
  const auto B23 = Tensor<T>::randn({4, 2, 1, 3}, 233);
  expect_close(values(la::lu_solve(LU1, piv1, B23)), values(la::solve(A, B23)), 1e-13, "LU [1] vs B [1, 3]");
}

TYPED_TEST(LinalgGradSolve, LuSolveBatchedAndViews) {
  using T = TypeParam;
  const auto A = well_conditioned<T>(4, {3}, 221, 1.0);
  const auto lf = la::lu_factor(A);
  const Tensor<T> LU = lf.first;
  const auto piv = lf.second;
  const auto B = Tensor<T>::randn({4, 2, 3}, 222);
  for (la::Trans t : {la::Trans::N, la::Trans::T, la::Trans::C}) {
    SCOPED_TRACE(trans_name(t));
    auto f = [=](const auto& B) {
      using S = scalar_of<decltype(B)>;
      return la::lu_solve(tx::cast<S>(LU), piv, B, t);
    };
    TENAX_CHECK_GRADS(f, B);
    TENAX_CHECK_GRADS(f, batch_elem(B, 0));  // B broadcast over LU's batch
    expect_layout_invariant(f, step_view(B));
  }
  auto f = [piv](const auto& LU, const auto& B) { return la::lu_solve(LU, piv, B); };
  TENAX_CHECK_GRADS(f, LU, B);
  expect_layout_invariant(f, transposed_view(LU), step_view(B));
  // Batched == loop, through lu_factor (so each batch element gets its own pivots).
  auto g = [](const auto& A, const auto& B) {
    auto [LU, piv] = la::lu_factor(A);
    return la::lu_solve(LU, piv, B);
  };
  expect_batch_matches_loop(g, A, B);
}
