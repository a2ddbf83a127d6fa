// pinv, matrix_rank and lstsq (ops/linalg/pinv.hpp, lstsq.hpp): the four Moore-Penrose conditions
// for every shape and rank, the tolerance rule, lstsq's normal equations and least norm, residuals
// and rank as PyTorch defines them, the gradient harness at constant rank (tall, wide, square,
// rank-deficient through a factored input, Hermitian), batches, and bad input.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <complex>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "linalg/linalg_grad_support.hpp"
#include "support/messages.hpp"

namespace tx = tenax;
namespace la = tenax::linalg;
using tx::Shape;
using tx::Tensor;
using tx::lgtest::expect_close;
using tx::lgtest::mshape;
using tx::testing::expect_error;

namespace {

template <class T>
class LinalgPinv : public ::testing::Test {};
using PinvTypes = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(LinalgPinv, PinvTypes);

template <class T>
double tol_of() {
  return std::is_same_v<tx::real_t<T>, float> ? 2e-4 : 1e-11;
}

// A P A = A, P A P = P, (A P)^H = A P, (P A)^H = P A.
template <class T>
void expect_moore_penrose(const Tensor<T>& A, const Tensor<T>& P, const std::string& what) {
  const double tol = tol_of<T>();
  const Tensor<T> AP = tx::matmul(A, P), PA = tx::matmul(P, A);
  expect_close(tx::matmul(AP, A), A, tol, what + ": A P A = A");
  expect_close(tx::matmul(PA, P), P, tol, what + ": P A P = P");
  expect_close(AP.mH(), AP, tol, what + ": A P Hermitian");
  expect_close(PA.mH(), PA, tol, what + ": P A Hermitian");
}

// m x n of rank r (r <= min(m, n)), as a product of random factors.
template <class T>
Tensor<T> of_rank(std::int64_t m, std::int64_t n, std::int64_t r, const Shape& batch, std::uint64_t seed) {
  return tx::matmul(Tensor<T>::randn(mshape(m, r, batch), seed), Tensor<T>::randn(mshape(r, n, batch), seed + 1));
}

}  // namespace

TYPED_TEST(LinalgPinv, MoorePenroseConditionsForEveryShapeAndRank) {
  using T = TypeParam;
  for (auto [m, n, r] : {std::tuple{5, 3, 3}, {3, 5, 3}, {4, 4, 4}, {6, 4, 2}, {4, 6, 1}, {5, 5, 3}}) {
    const std::string what = std::to_string(m) + "x" + std::to_string(n) + " rank " + std::to_string(r);
    const auto A = of_rank<T>(m, n, r, {2}, 10 + m * n + r);
    const auto P = la::pinv(A);
    ASSERT_EQ(P.shape(), mshape(n, m, {2}));
    expect_moore_penrose(A, P, what);
    EXPECT_EQ(la::matrix_rank(A).to_vector(), (std::vector<std::int64_t>{r, r})) << what;
  }
  // Square and invertible: the inverse.
  const auto B = tx::lgtest::well_conditioned<T>(4, {}, 3);
  expect_close(la::pinv(B), la::inv(B), tol_of<T>(), "pinv = inv");
  // Zero matrix: zero pseudo-inverse, rank 0.
  EXPECT_EQ(tx::linalg::vector_norm(la::pinv(Tensor<T>::zeros({3, 2}))).item(), 0.0);
  EXPECT_EQ(la::matrix_rank(Tensor<T>::zeros({3, 2})).item(), 0);
}

TYPED_TEST(LinalgPinv, HermitianPathMatchesTheSvd) {
  using T = TypeParam;
  // Indefinite, rank 3 of 5: Q diag(2, -1.5, 0.7, 0, 0) Q^H (batch element 1 adds 0.05: full rank).
  const auto H = tx::lgtest::hermitian_with<T>({2.0, -1.5, 0.7, 0.0, 0.0}, {2}, 4);
  const auto Ph = la::pinv(H, std::nullopt, std::nullopt, true);
  expect_moore_penrose(H, Ph, "hermitian");
  expect_close(Ph, la::pinv(H), 10 * tol_of<T>(), "hermitian pinv = svd pinv");
  EXPECT_EQ(la::matrix_rank(H, std::nullopt, std::nullopt, true).to_vector(), (std::vector<std::int64_t>{3, 5}));
  EXPECT_EQ(la::matrix_rank(H).to_vector(), (std::vector<std::int64_t>{3, 5}));
}

TEST(LinalgPinvTolerance, AtolAndRtolFollowPyTorch) {
  // Singular values 4, 1e-3, 1e-9 (diagonal).
  const auto A = Tensor<double>::from_col_major({3, 3}, {4, 0, 0, 0, 1e-3, 0, 0, 0, 1e-9});
  EXPECT_EQ(la::matrix_rank(A).item(), 3);                      // rtol = 3 eps: all kept
  EXPECT_EQ(la::matrix_rank(A, 1e-6).item(), 2);                // atol alone: rtol = 0
  EXPECT_EQ(la::matrix_rank(A, std::nullopt, 1e-2).item(), 1);  // 1e-3 <= 4e-2
  EXPECT_EQ(la::matrix_rank(A, 1e-2, 1e-12).item(), 1);         // max(atol, rtol * 4)
  const auto P = la::pinv(A, 1e-6);
  EXPECT_NEAR(P.at({0, 0}), 0.25, 1e-15);
  EXPECT_NEAR(P.at({1, 1}), 1e3, 1e-9);
  EXPECT_EQ(P.at({2, 2}), 0.0);
  EXPECT_NEAR(la::pinv(A).at({2, 2}), 1e9, 1e-3);
}

TYPED_TEST(LinalgPinv, Gradients) {
  using T = TypeParam;
  if constexpr (std::is_same_v<tx::real_t<T>, double>) {
    for (auto [m, n] : {std::pair{4, 3}, {3, 4}, {3, 3}}) {
      SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n));
      const auto A = tx::lgtest::svd_input<T>(m, n, {2}, 20 + m);
      TENAX_CHECK_GRADS([](const auto& a) { return la::pinv(a); }, A);
    }
    // Rank 2 of 4 x 3, kept constant by differentiating through the factors.
    TENAX_CHECK_GRADS([](const auto& b, const auto& c) { return la::pinv(tx::matmul(b, c)); },
                      Tensor<T>::randn({4, 2}, 30), Tensor<T>::randn({2, 3}, 31));
    // Hermitian (tangents taken Hermitian: the input is a + a^H), indefinite.
    const auto H = tx::lgtest::eigh_input<T>(3, {}, 32);
    TENAX_CHECK_GRADS([](const auto& a) { return la::pinv(tx::add(a, a.mH()), std::nullopt, std::nullopt, true); }, H);
    // Only the lower triangle is read (H itself is not Hermitian): the derivative reaches that triangle.
    TENAX_CHECK_GRADS([](const auto& a) { return la::pinv(a, std::nullopt, std::nullopt, true); }, H);
  }
}

TEST(LinalgPinvGrad, BatchAndLayoutInvariant) {
  using T = std::complex<double>;
  const auto A = tx::lgtest::svd_input<T>(4, 3, {3}, 40);
  tx::lgtest::expect_batch_matches_loop([](const auto& a) { return la::pinv(a); }, A);
  tx::testing::expect_layout_invariant([](const auto& a) { return la::pinv(a); }, tx::lgtest::transposed_view(A));
}

TYPED_TEST(LinalgPinv, LstsqTallFullRankSolvesTheNormalEquations) {
  using T = TypeParam;
  const auto A = Tensor<T>::randn({6, 3, 2}, 50), B = Tensor<T>::randn({6, 2, 2}, 51);
  const auto r = la::lstsq(A, B);
  ASSERT_EQ(r.solution.shape(), (Shape{3, 2, 2}));
  // A^H (A X - B) = 0.
  const auto resid = tx::sub(tx::matmul(A, r.solution), B);
  expect_close(tx::matmul(A.mH(), resid), Tensor<T>::zeros({3, 2, 2}), tol_of<T>(), tol_of<T>() * 10,
               "normal equations");
  EXPECT_EQ(r.rank.to_vector(), (std::vector<std::int64_t>{3, 3}));
  ASSERT_EQ(r.residuals.shape(), (Shape{2, 2}));
  const auto want = tx::sum(tx::square(tx::abs(resid)), {0}, false);
  expect_close(r.residuals, want, tol_of<T>(), "residuals");
  expect_close(r.singular_values, la::svdvals(A), tol_of<T>(), "singular values");
  EXPECT_FALSE(r.singular_values.tracks_grad());
}

TYPED_TEST(LinalgPinv, LstsqWideAndRankDeficientGiveTheLeastNormSolution) {
  using T = TypeParam;
  // Wide, full rank: X = A^H (A A^H)^-1 B, and no residuals.
  const auto A = Tensor<T>::randn({3, 5}, 60), B = Tensor<T>::randn({3, 2}, 61);
  const auto r = la::lstsq(A, B);
  expect_close(r.solution, tx::matmul(A.mH(), la::solve(tx::matmul(A, A.mH()), B)), tol_of<T>() * 10, "least norm");
  EXPECT_EQ(r.residuals.shape(), (Shape{0}));
  // Tall, rank 2 of 3: the pseudo-inverse's solution, no residuals (not full rank), rank 2.
  const auto D = of_rank<T>(6, 3, 2, {}, 62), C = Tensor<T>::randn({6, 1}, 63);
  const auto d = la::lstsq(D, C);
  expect_close(d.solution, tx::matmul(la::pinv(D), C), tol_of<T>() * 10, "rank deficient");
  EXPECT_EQ(d.rank.item(), 2);
  EXPECT_EQ(d.residuals.shape(), (Shape{0}));
  // A batch of A against one B (broadcast), and rcond.
  const auto Ab = Tensor<T>::randn({5, 3, 4}, 64);
  const auto rb = la::lstsq(Ab, Tensor<T>::randn({5, 2}, 65), 0.5);
  EXPECT_EQ(rb.solution.shape(), (Shape{3, 2, 4}));
  EXPECT_EQ(rb.rank.shape(), (Shape{4}));
}

TYPED_TEST(LinalgPinv, LstsqGradients) {
  using T = TypeParam;
  if constexpr (std::is_same_v<tx::real_t<T>, double>) {
    const auto A = tx::lgtest::svd_input<T>(5, 3, {2}, 70), B = Tensor<T>::randn({5, 2, 2}, 71);
    TENAX_CHECK_GRADS([](const auto& a, const auto& b) { return la::lstsq(a, b).solution; }, A, B);
    TENAX_CHECK_GRADS([](const auto& a, const auto& b) { return la::lstsq(a, b).residuals; }, A, B);
    const auto W = tx::lgtest::svd_input<T>(2, 4, {}, 72), C = Tensor<T>::randn({2, 3}, 73);
    TENAX_CHECK_GRADS([](const auto& a, const auto& b) { return la::lstsq(a, b).solution; }, W, C);
    // One B for a batch of A (broadcast), and one A for a batch of B; rank 2 of 4 x 3 through factors.
    const auto Ab = tx::lgtest::svd_input<T>(4, 3, {3}, 74);
    TENAX_CHECK_GRADS([](const auto& a, const auto& b) { return la::lstsq(a, b).solution; }, Ab,
                      Tensor<T>::randn({4, 2}, 75));
    TENAX_CHECK_GRADS([](const auto& a, const auto& b) { return la::lstsq(a, b).solution; },
                      tx::lgtest::svd_input<T>(4, 3, {}, 76), Tensor<T>::randn({4, 2, 3}, 77));
    TENAX_CHECK_GRADS(
        [](const auto& f, const auto& g, const auto& b) { return la::lstsq(tx::matmul(f, g), b).solution; },
        Tensor<T>::randn({4, 2}, 78), Tensor<T>::randn({2, 3}, 79), Tensor<T>::randn({4, 2}, 80));
  }
}

// The lstsq rules' cores for small matrices (ops/linalg/lstsq_small.hpp): each kernel against its
// composite (the rule's tensor ops) for tall, wide and square shapes up to 16 and a batch, strided
// operands bit-equal to dense ones, the composite where the result is differentiated again, shapes
// the kernels do not take, and errors naming the op. LstsqGradients runs them inside the rules.
TYPED_TEST(LinalgPinv, LstsqRuleKernels) {
  using T = TypeParam;
  namespace d = tx::detail;
  const double tol = std::is_same_v<tx::real_t<T>, float> ? 1e-3 : 1e-10;
  std::uint64_t seed = 90;
  for (const auto& [m, n, k] :
       std::vector<std::array<std::int64_t, 3>>{{1, 1, 1}, {2, 2, 1}, {5, 3, 2}, {3, 5, 2}, {4, 4, 4}, {16, 16, 16}}) {
    SCOPED_TRACE(std::to_string(m) + " " + std::to_string(n) + " " + std::to_string(k));
    const auto A = Tensor<T>::randn(mshape(m, n, {3}), ++seed), B = Tensor<T>::randn(mshape(m, k, {3}), ++seed);
    const auto res = la::lstsq(A, B);
    const auto P = la::pinv(A), X = res.solution;
    const auto dA = Tensor<T>::randn(mshape(m, n, {3}), ++seed), gX = Tensor<T>::randn(mshape(n, k, {3}), ++seed);
    const auto dX = d::lstsq_tangent_small(A, B, X, P, dA);
    expect_close(dX, tx::ops::LstsqTangentSmall::composite(A, B, X, P, dA), tol, "dX");
    const auto [gA, H] = d::lstsq_cotangent_small(A, B, X, P, gX);
    const auto [cA, cH] = tx::ops::LstsqCotangentSmall::composite(A, B, X, P, gX);
    expect_close(gA, cA, tol, "gA");
    expect_close(H, cH, tol, "P^H gX");
    if (m > 1 && n > 1) {
      const auto At = tx::transpose(tx::transpose(A).contiguous());  // A, strided
      EXPECT_EQ(d::lstsq_tangent_small(At, B, X, P, dA).to_vector(), dX.to_vector());
      EXPECT_EQ(std::get<0>(d::lstsq_cotangent_small(At, B, X, P, gX)).to_vector(), gA.to_vector());
    }
  }
  // Differentiated again: the composite, which records (the kernels have no rules).
  const auto A = Tensor<T>::randn({3, 2}, 110).requires_grad(), B = Tensor<T>::randn({3, 1}, 111);
  const auto P = la::pinv(A), X = tx::matmul(P, B);
  EXPECT_TRUE(d::lstsq_tangent_small(A, B, X, P, Tensor<T>::randn({3, 2}, 112)).tracks_grad());
  EXPECT_TRUE(std::get<0>(d::lstsq_cotangent_small(A, B, X, P, Tensor<T>::randn({2, 1}, 113))).tracks_grad());
  // A broadcast B (batch 1 for a batch of A): not taken, for the rule's products.
  const auto Ab = Tensor<T>::randn({3, 2, 2}, 114), Pb = la::pinv(Ab), Xb = tx::matmul(Pb, B);
  EXPECT_FALSE(d::lstsq_tangent_small(Ab, B, Xb, Pb, Tensor<T>::randn({3, 2, 2}, 115)).defined());
  const std::string e = tx::testing::error_of([] {
    tx::ops::LstsqTangentSmall{}.forward(Tensor<T>::randn({3, 2}, 1), Tensor<T>::randn({3, 1}, 1),
                                         Tensor<T>::randn({2, 1}, 1), Tensor<T>::randn({2, 3}, 1),
                                         Tensor<T>::randn({2, 2}, 1));
  });
  EXPECT_NE(e.find("lstsq_tangent"), std::string::npos) << e;
  EXPECT_NE(e.find("[2, 2]"), std::string::npos) << e;
}

TEST(LinalgPinvErrors, BadInputNamesTheOp) {
  const auto A = Tensor<double>::randn({4, 3}, 80);
  expect_error([&] { la::pinv(A, -1.0); }, "[pinv] atol -1", {"f64", "[4, 3]"});
  expect_error([&] { la::pinv(A, std::nullopt, std::nullopt, true); }, "[pinv] expected A to hold square matrices");
  expect_error([&] { la::pinv(Tensor<double>::randn({3}, 1)); }, "[pinv] expected A to be a matrix");
  expect_error([&] { la::matrix_rank(A, std::nullopt, -2.0); }, "[matrix_rank] atol 0 and rtol -2");
  expect_error(
      [&] {
        la::lstsq(A, Tensor<double>::randn({3, 2}, 2));
      },
      "[lstsq] A of shape [4, 3] and B of shape [3, 2]");
  expect_error([&] { la::lstsq(A, Tensor<double>::randn({4}, 2)); }, "[lstsq] expected B to be a matrix");
  expect_error([&] { la::lstsq(A, Tensor<double>::randn({4, 1}, 2), -1.0); }, "[lstsq] rcond -1");
  auto bad = Tensor<double>::randn({3, 3}, 3);
  bad.mutable_data()[4] = std::nan("");
  expect_error([&] { la::pinv(bad); }, "[pinv]", {"inf or NaN"});
  // Empty matrices: an empty pseudo-inverse and rank 0.
  EXPECT_EQ(la::pinv(Tensor<double>::zeros({0, 3})).shape(), (Shape{3, 0}));
  EXPECT_TRUE(la::pinv(Tensor<double>::zeros({0, 3}).requires_grad()).tracks_grad());
  EXPECT_EQ(la::matrix_rank(Tensor<double>::zeros({0, 3, 2})).to_vector(), (std::vector<std::int64_t>{0, 0}));
  EXPECT_EQ(la::lstsq(Tensor<double>::zeros({0, 3}), Tensor<double>::zeros({0, 2})).solution.shape(), (Shape{3, 2}));
}
