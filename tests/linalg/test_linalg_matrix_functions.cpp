// matrix_exp, matrix_power and multi_dot (ops/linalg/matrix_exp.hpp, products.hpp): known values,
// exp(A) exp(-A) = I, large norms against an eigendecomposition, batches of mixed norms, the
// gradient harness (the Frechet derivative to second order), and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
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
class LinalgMatrixFunctions : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(LinalgMatrixFunctions, Types);

template <class T>
double tol_of() {
  return std::is_same_v<tx::real_t<T>, float> ? 1e-5 : 1e-13;
}

}  // namespace

TEST(LinalgMatrixExpValues, KnownExponentials) {
  // Diagonal, nilpotent, and a rotation generator.
  const auto D = Tensor<double>::from_col_major({2, 2}, {1.5, 0, 0, -2});
  const auto eD = la::matrix_exp(D);
  EXPECT_NEAR(eD.at({0, 0}), std::exp(1.5), 1e-14 * std::exp(1.5));
  EXPECT_NEAR(eD.at({1, 1}), std::exp(-2.0), 1e-16);
  EXPECT_EQ(eD.at({0, 1}), 0.0);
  const auto N = Tensor<double>::from_row_major({2, 2}, {0, 1, 0, 0});
  expect_close(la::matrix_exp(N), Tensor<double>::from_row_major({2, 2}, {1, 1, 0, 1}), 1e-15, "nilpotent");
  for (double t : {0.3, 2.0, 40.0}) {
    const auto G = Tensor<double>::from_row_major({2, 2}, {0, -t, t, 0});
    expect_close(la::matrix_exp(G),
                 Tensor<double>::from_row_major({2, 2}, {std::cos(t), -std::sin(t), std::sin(t), std::cos(t)}), 1e-13,
                 "rotation by " + std::to_string(t));
  }
  EXPECT_EQ(la::matrix_exp(Tensor<double>::zeros({3, 3})).to_vector(), Tensor<double>::eye(3).to_vector());
}

TYPED_TEST(LinalgMatrixFunctions, ExpInverseAndLargeNorms) {
  using T = TypeParam;
  using R = tx::real_t<T>;
  // exp(A) exp(-A) = I over norms from small to large (every degree and the scaling), to the
  // rounding of the product: ||exp(A)|| ||exp(-A)|| eps.
  for (double scale : {1e-3, 0.1, 0.5, 1.5, 4.0, 30.0}) {
    const auto A = tx::mul(Tensor<T>::randn({4, 4, 2}, 5), T(scale / 4));
    const auto E = la::matrix_exp(A), Ei = la::matrix_exp(tx::neg(A));
    const double size = la::vector_norm(E).item() * la::vector_norm(Ei).item();
    expect_close(tx::matmul(E, Ei), tx::lgtest::eye_batch<T>(4, {2}), 0, tol_of<T>() * size * 100,
                 "exp(A) exp(-A), scale " + std::to_string(scale));
  }
  // Hermitian A with eigenvalues up to 12: V diag(exp(w)) V^H.
  const auto H = tx::lgtest::hermitian_with<T>({-3.0, 0.5, 4.0, 12.0}, {}, 6);
  const auto [w, V] = la::eigh(H);
  const auto want = tx::matmul(tx::mul(V, tx::cast<T>(tx::detail::as_row(tx::exp(w)))), V.mH());
  expect_close(la::matrix_exp(H), want, std::is_same_v<R, float> ? 1e-4 : 1e-12, "hermitian against eigh");
}

TYPED_TEST(LinalgMatrixFunctions, ExpOfABatchOfMixedNormsIsThatOfEachMatrix) {
  using T = TypeParam;
  // Batch element b has norm ~ 10^(b - 2): one needs no scaling, another several squarings.
  std::vector<Tensor<T>> each;
  for (int b = 0; b < 4; ++b) each.push_back(tx::mul(Tensor<T>::randn({3, 3}, 7 + b), T(std::pow(10.0, b - 2))));
  const auto A = tx::stack(each, 2);
  const auto E = la::matrix_exp(A);
  for (int b = 0; b < 4; ++b)
    expect_close(tx::lgtest::batch_elem(E, b), la::matrix_exp(each[static_cast<std::size_t>(b)]), tol_of<T>() * 10,
                 "batch element " + std::to_string(b));
}

TYPED_TEST(LinalgMatrixFunctions, ExpGradients) {
  using T = TypeParam;
  if constexpr (std::is_same_v<tx::real_t<T>, double>) {
    for (double scale : {0.05, 1.0, 8.0}) {
      SCOPED_TRACE("scale " + std::to_string(scale));
      const auto A = tx::mul(Tensor<T>::randn({3, 3, 2}, 8), T(scale / 3));
      TENAX_CHECK_GRADS([](const auto& a) { return la::matrix_exp(a); }, A);
    }
    tx::lgtest::expect_batch_matches_loop([](const auto& a) { return la::matrix_exp(a); },
                                          Tensor<T>::randn({3, 3, 3}, 9));
  }
}

TYPED_TEST(LinalgMatrixFunctions, MatrixPower) {
  using T = TypeParam;
  const auto A = tx::lgtest::well_conditioned<T>(3, {2}, 10);
  Tensor<T> p = tx::lgtest::eye_batch<T>(3, {2});
  for (int k = 0; k <= 6; ++k) {
    expect_close(la::matrix_power(A, k), p, tol_of<T>() * 10, "k = " + std::to_string(k));
    p = tx::matmul(p, A);
  }
  const auto Ai = la::inv(A);
  expect_close(la::matrix_power(A, -1), Ai, tol_of<T>() * 10, "k = -1");
  expect_close(la::matrix_power(A, -3), tx::matmul(Ai, tx::matmul(Ai, Ai)), tol_of<T>() * 100, "k = -3");
  EXPECT_NE(la::matrix_power(A, 1).impl(), A.impl());  // a new tensor, as in PyTorch
  if constexpr (std::is_same_v<tx::real_t<T>, double>) {
    TENAX_CHECK_GRADS([](const auto& a) { return la::matrix_power(a, 5); }, A);
    TENAX_CHECK_GRADS([](const auto& a) { return la::matrix_power(a, -2); }, A);
  }
}

TYPED_TEST(LinalgMatrixFunctions, MultiDot) {
  using T = TypeParam;
  const auto a = Tensor<T>::randn({4}, 11), B = Tensor<T>::randn({4, 7}, 12), C = Tensor<T>::randn({7, 2}, 13),
             D = Tensor<T>::randn({2, 5}, 14), e = Tensor<T>::randn({5}, 15);
  const auto BCD = tx::matmul(tx::matmul(B, C), D);
  expect_close(la::multi_dot<T>({B, C, D}), BCD, tol_of<T>() * 10, "matrices");
  const auto row = la::multi_dot<T>({a, B, C, D});
  ASSERT_EQ(row.shape(), (Shape{5}));
  expect_close(row, tx::matmul(a.reshape({1, 4}), BCD).reshape({5}), tol_of<T>() * 10, "row vector first");
  const auto col = la::multi_dot<T>({B, C, D, e});
  ASSERT_EQ(col.shape(), (Shape{4}));
  const auto both = la::multi_dot<T>({a, B, C, D, e});
  ASSERT_EQ(both.shape(), (Shape{}));
  expect_close(both, tx::matmul(row.reshape({1, 5}), e.reshape({5, 1})).reshape(Shape{}), tol_of<T>() * 10, "scalar");
  if constexpr (std::is_same_v<tx::real_t<T>, double>)
    TENAX_CHECK_GRADS(
        [](const auto& x, const auto& y, const auto& z) {
          return la::multi_dot<tx::testing::scalar_of<decltype(x)>>({x, y, z});
        },
        B, C, D);
}

TEST(LinalgMatrixFunctionsChain, MultiDotOrderIsTheCheapest) {
  // 10x100, 100x5, 5x50: (AB)C costs 7500, A(BC) 75000.
  const auto split = la::detail_multi_dot::chain_order({10, 100, 5, 50});
  EXPECT_EQ(split[0][2], 1u);
  const auto split2 = la::detail_multi_dot::chain_order({50, 5, 100, 10});
  EXPECT_EQ(split2[0][2], 0u);
}

TEST(LinalgMatrixFunctionsErrors, BadInputNamesTheOp) {
  const auto A = Tensor<double>::randn({3, 4}, 20);
  expect_error([&] { la::matrix_exp(A); }, "[matrix_exp] expected A to hold square matrices", {"[3, 4]", "f64"});
  expect_error([&] { la::matrix_power(A, 2); }, "[matrix_power] expected A to hold square matrices");
  expect_error([&] { la::matrix_power(Tensor<double>::zeros({2, 2}), -1); }, "[inv]", {"singular"});
  expect_error([&] { la::multi_dot<double>({A}); }, "[multi_dot] needs at least two tensors");
  expect_error([&] { la::multi_dot<double>({A, A}); }, "[multi_dot] tensor 1 of shape [3, 4] does not follow");
  expect_error(
      [&] {
        la::multi_dot<double>({A, Tensor<double>::randn({4}, 1), A});
      },
      "[multi_dot] tensor 1 has shape [4]");
  // NaN in one matrix of a batch: NaN there only.
  auto B = Tensor<double>::randn({2, 2, 2}, 21);
  B.mutable_data()[0] = std::nan("");
  const auto E = la::matrix_exp(B);
  EXPECT_TRUE(std::isnan(E.at({0, 0, 0})));
  EXPECT_FALSE(std::isnan(E.at({0, 0, 1})));
  EXPECT_EQ(la::matrix_exp(Tensor<double>::zeros({0, 0, 3})).shape(), (Shape{0, 0, 3}));
}
