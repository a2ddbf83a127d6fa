// Norms (ops/linalg/norms.hpp): values against direct computations, the gradient harness for every
// ord (real and complex), zero subgradients where a norm is not differentiable (never NaN),
// batches and keepdim shapes, and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <vector>

#include "linalg/linalg_grad_support.hpp"
#include "support/messages.hpp"

namespace tx = tenax;
namespace la = tenax::linalg;
using tx::Tensor;
using tx::testing::expect_error;
using tx::testing::value_from_plain_call;

namespace {

template <class T>
class LinalgNorms : public ::testing::Test {};
TYPED_TEST_SUITE(LinalgNorms, tx::lgtest::Types);

const double kInf = std::numeric_limits<double>::infinity();

// The ord-norm of the entries of v, computed directly.
template <class T>
double direct_norm(const std::vector<T>& v, double ord) {
  std::vector<double> a;
  for (const T& x : v) a.push_back(std::abs(x));
  if (ord == kInf) return *std::max_element(a.begin(), a.end());
  if (ord == -kInf) return *std::min_element(a.begin(), a.end());
  double s = 0;
  for (double x : a) s += ord == 0 ? (x != 0) : std::pow(x, ord);
  return ord == 0 ? s : std::pow(s, 1 / ord);
}

}  // namespace

TYPED_TEST(LinalgNorms, VectorNormValues) {
  using T = TypeParam;
  const auto x = Tensor<T>::randn({7}, 1);
  for (double ord : {2.0, 1.0, 3.0, 0.5, kInf, -kInf, 0.0, -1.0, -2.5}) {
    const double want = direct_norm(x.to_vector(), ord);
    EXPECT_NEAR(la::vector_norm(x, ord).item(), want, 1e-13 * std::max(1.0, want)) << "ord " << ord;
  }
  // Over chosen axes, keepdim, negative axes: the same as one vector at a time.
  const auto y = Tensor<T>::randn({3, 4, 2}, 2);
  const auto r = la::vector_norm(y, 3.0, {1}, false), rk = la::vector_norm(y, 3.0, {-2}, true);
  EXPECT_EQ(r.shape(), (tx::Shape{3, 2}));
  EXPECT_EQ(rk.shape(), (tx::Shape{3, 1, 2}));
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t b = 0; b < 2; ++b) {
      std::vector<T> row;
      for (std::int64_t j = 0; j < 4; ++j) row.push_back(y.at({i, j, b}));
      EXPECT_NEAR(r.at({i, b}), direct_norm(row, 3.0), 1e-13);
      EXPECT_EQ(rk.at({i, 0, b}), r.at({i, b}));
    }
  EXPECT_EQ(la::vector_norm(Tensor<T>::zeros({0})).item(), 0.0);
  EXPECT_EQ(la::norm(x).item(), la::vector_norm(x).item());
  EXPECT_EQ(la::norm(x, 3.0).item(), la::vector_norm(x, 3.0).item());
}

// A = [[1, 2], [3, 4]]: A^T A has eigenvalues 15 +- sqrt(221).
TEST(LinalgNormsValues, MatrixNormsOfAKnownMatrix) {
  const auto A = Tensor<double>::from_row_major({2, 2}, {1, 2, 3, 4});
  const double s1 = std::sqrt(15 + std::sqrt(221.0)), s2 = std::sqrt(15 - std::sqrt(221.0));
  EXPECT_NEAR(la::matrix_norm(A).item(), std::sqrt(30.0), 1e-14);
  EXPECT_NEAR(la::matrix_norm(A, "nuc").item(), s1 + s2, 1e-13);
  EXPECT_NEAR(la::matrix_norm(A, 2.0).item(), s1, 1e-13);
  EXPECT_NEAR(la::matrix_norm(A, -2.0).item(), s2, 1e-13);
  EXPECT_EQ(la::matrix_norm(A, 1.0).item(), 6.0);
  EXPECT_EQ(la::matrix_norm(A, -1.0).item(), 4.0);
  EXPECT_EQ(la::matrix_norm(A, kInf).item(), 7.0);
  EXPECT_EQ(la::matrix_norm(A, -kInf).item(), 3.0);
  EXPECT_NEAR(la::cond(A).item(), s1 / s2, 1e-12);
  EXPECT_NEAR(la::cond(A, -2.0).item(), s2 / s1, 1e-14);
  EXPECT_NEAR(la::cond(A, "fro").item(), 15.0, 1e-13);     // ||A|| = sqrt(30), ||A^-1|| = sqrt(30) / 2
  EXPECT_NEAR(la::cond(A, 1.0).item(), 6.0 * 3.5, 1e-13);  // A^-1 = [[-2, 1], [1.5, -0.5]]
  EXPECT_EQ(la::norm(A, "nuc").item(), la::matrix_norm(A, "nuc").item());
  EXPECT_EQ(la::norm(A, 1.0).item(), 6.0);  // a matrix: the induced norm
}

TYPED_TEST(LinalgNorms, MatrixNormsOfABatchAreThoseOfEachMatrix) {
  using T = TypeParam;
  const auto A = Tensor<T>::randn({3, 4, 2, 2}, 3);
  for (double ord : {1.0, -1.0, 2.0, -2.0, kInf, -kInf}) {
    const auto r = la::matrix_norm(A, ord), rk = la::matrix_norm(A, ord, true);
    ASSERT_EQ(r.shape(), (tx::Shape{2, 2}));
    ASSERT_EQ(rk.shape(), (tx::Shape{1, 1, 2, 2}));
    for (std::int64_t b = 0; b < 2; ++b)
      for (std::int64_t c = 0; c < 2; ++c) {
        const auto one = tx::contiguous(tx::slice(tx::slice(A, 3, c, c + 1), 2, b, b + 1)).reshape(tx::Shape{3, 4});
        EXPECT_NEAR(r.at({b, c}), la::matrix_norm(one, ord).item(), 1e-13) << "ord " << ord;
      }
  }
  for (const char* ord : {"fro", "nuc"}) EXPECT_EQ(la::matrix_norm(A, ord).shape(), (tx::Shape{2, 2}));
}

TYPED_TEST(LinalgNorms, VectorNormGradients) {
  using T = TypeParam;
  const auto x = Tensor<T>::randn({5, 2}, 4);
  for (double ord : {2.0, 1.0, 3.0, 0.5, kInf, -kInf, -1.0}) {
    SCOPED_TRACE("ord " + std::to_string(ord));
    TENAX_CHECK_GRADS([ord](const auto& v) { return la::vector_norm(v, ord); }, x);
    TENAX_CHECK_GRADS([ord](const auto& v) { return la::vector_norm(v, ord, {0}, true); }, x);
  }
}

TYPED_TEST(LinalgNorms, MatrixNormGradients) {
  using T = TypeParam;
  const auto A = tx::lgtest::svd_input<T>(4, 3, {2}, 5);
  TENAX_CHECK_GRADS([](const auto& a) { return la::matrix_norm(a); }, A);
  for (double ord : {1.0, -1.0, kInf, -kInf}) {
    SCOPED_TRACE("ord " + std::to_string(ord));
    TENAX_CHECK_GRADS([ord](const auto& a) { return la::matrix_norm(a, ord); }, A);
  }
  // Through svdvals: the value from a call without AD (see value_from_plain_call).
  TENAX_CHECK_GRADS(value_from_plain_call([](const auto& a) { return la::matrix_norm(a, "nuc"); }), A);
  TENAX_CHECK_GRADS(value_from_plain_call([](const auto& a) { return la::matrix_norm(a, 2.0); }), A);
  TENAX_CHECK_GRADS(value_from_plain_call([](const auto& a) { return la::matrix_norm(a, -2.0); }), A);
}

TYPED_TEST(LinalgNorms, CondGradients) {
  using T = TypeParam;
  const auto A = tx::lgtest::svd_input<T>(3, 3, {}, 6);
  TENAX_CHECK_GRADS(value_from_plain_call([](const auto& a) { return la::cond(a); }), A);
  TENAX_CHECK_GRADS([](const auto& a) { return la::cond(a, "fro"); }, A);
  TENAX_CHECK_GRADS([](const auto& a) { return la::cond(a, kInf); }, A);
}

// Where a norm is not differentiable the derivative is a zero subgradient (PyTorch's), in both
// modes, never NaN: the zero vector for every ord, and zero entries for ords below 1.
TYPED_TEST(LinalgNorms, ZeroSubgradientsNeverNaN) {
  using T = TypeParam;
  const auto zero = Tensor<T>::zeros({4});
  const auto mixed = Tensor<T>::from_col_major({4}, {T(0), T(1.5), T(0), T(-2)});
  for (double ord : {2.0, 1.0, 3.0, 0.5, kInf, 0.0}) {
    SCOPED_TRACE("ord " + std::to_string(ord));
    const auto f = [ord](const Tensor<T>& v) { return la::vector_norm(v, ord); };
    for (const auto& g : tx::grad(f, zero).to_vector()) EXPECT_EQ(g, T(0));
    const auto [y, dy] = tx::jvp(f, zero, Tensor<T>::ones({4}));
    EXPECT_EQ(y.item(), 0.0);
    EXPECT_EQ(dy.item(), 0.0);
    for (const auto& g : tx::grad(f, mixed).to_vector()) EXPECT_FALSE(std::isnan(std::abs(g)));
  }
  // At the zeros of `mixed`, ord 0.5 and 3 give 0 (the derivative of |x|^p there).
  const auto g = tx::grad([](const Tensor<T>& v) { return la::vector_norm(v, 0.5); }, mixed).to_vector();
  EXPECT_EQ(g[0], T(0));
  EXPECT_EQ(g[2], T(0));
  EXPECT_NE(g[1], T(0));
  for (const auto& h :
       tx::hvp([](const Tensor<T>& v) { return la::vector_norm(v); }, zero, Tensor<T>::ones({4})).to_vector())
    EXPECT_FALSE(std::isnan(std::abs(h)));
}

TEST(LinalgNormsErrors, BadInputNamesTheOp) {
  const auto A = Tensor<double>::randn({3, 4}, 7), v = Tensor<double>::randn({4}, 8);
  expect_error([&] { la::matrix_norm(A, "spectral"); }, "[matrix_norm] ord \"spectral\"", {"f64", "[3, 4]"});
  expect_error([&] { la::matrix_norm(A, 3.0); }, "[matrix_norm] ord 3 is not one of", {"f64"});
  expect_error([&] { la::matrix_norm(v); }, "[matrix_norm]");
  expect_error([&] { la::matrix_norm(Tensor<double>::zeros({0, 3}), 2.0); }, "[matrix_norm] ord 2 of empty");
  expect_error([&] { la::vector_norm(v, std::nan("")); }, "[vector_norm] ord is NaN");
  expect_error([&] { la::vector_norm(Tensor<double>::zeros({0}), kInf); }, "[vector_norm] ord inf over an empty");
  expect_error([&] { la::cond(A, "fro"); }, "[cond]");
  expect_error([&] { la::cond(A, 1.0); }, "[cond]");
  EXPECT_NO_THROW(la::cond(A));  // the 2-norm condition number of a rectangular matrix
}
