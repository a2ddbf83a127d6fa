// eig and eigvals (ops/linalg/eig.hpp): the residual A V = V diag(w), known spectra (complex pairs
// of real matrices, triangular matrices), the eigenvectors' normalization, the gradient harness on
// gauge-invariant functions (eigenvalues, |V|, V f(w) V^-1 against matrix_exp), the gauge
// diagnostic, batches, and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "linalg/linalg_grad_support.hpp"
#include "support/messages.hpp"

namespace tx = tenax;
namespace la = tenax::linalg;
using tx::Shape;
using tx::Tensor;
using tx::lgtest::expect_close;
using tx::testing::expect_error;

namespace {

template <class T>
class LinalgEig : public ::testing::Test {};
using EigTypes = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(LinalgEig, EigTypes);

template <class T>
double tol_of() {
  return std::is_same_v<tx::real_t<T>, float> ? 1e-4 : 1e-12;
}

// Random entries plus a spread diagonal: distinct eigenvalues (real ones for real T, mostly).
template <class T>
Tensor<T> spread_input(std::int64_t n, const Shape& batch, std::uint64_t seed) {
  std::vector<T> d;
  for (std::int64_t i = 0; i < n; ++i) d.push_back(T(2.0 * static_cast<double>(i)));
  const Tensor<T> D = tx::diag_embed(Tensor<T>::from_col_major({n}, d));
  return tx::add(Tensor<T>::randn(tx::lgtest::mshape(n, n, batch), seed), D);
}

}  // namespace

TYPED_TEST(LinalgEig, ResidualAndNormalization) {
  using T = TypeParam;
  using C = std::complex<tx::real_t<T>>;
  for (std::int64_t n : {1, 2, 5, 9}) {
    const auto A = Tensor<T>::randn(tx::lgtest::mshape(n, n, {3}), 10 + n);
    const auto [w, V] = la::eig(A);
    ASSERT_EQ(w.shape(), (Shape{n, 3}));
    ASSERT_EQ(V.shape(), (Shape{n, n, 3}));
    const auto Ac = tx::cast<C>(A);
    expect_close(tx::matmul(Ac, V), tx::mul(V, tx::detail::as_row(w)), tol_of<T>() * n,
                 "A V = V diag(w), n " + std::to_string(n));
    // Unit columns whose first largest-modulus entry is real and positive.
    const auto v = V.to_vector();
    for (std::int64_t b = 0; b < 3; ++b)
      for (std::int64_t j = 0; j < n; ++j) {
        double norm = 0, best = -1;
        C top{};
        for (std::int64_t i = 0; i < n; ++i) {
          const C x = v[static_cast<std::size_t>(i + j * n + b * n * n)];
          norm += std::norm(x);
          if (std::abs(x) > best) best = std::abs(x), top = x;
        }
        EXPECT_NEAR(std::sqrt(norm), 1.0, tol_of<T>());
        EXPECT_EQ(top.imag(), 0);
        EXPECT_GT(top.real(), 0);
      }
    expect_close(la::eigvals(A), w, 0, "eigvals = eig's values");
  }
}

TEST(LinalgEigValues, KnownSpectra) {
  using C = std::complex<double>;
  // A rotation generator: +-i, with the pair's vectors conjugate.
  const auto R = Tensor<double>::from_row_major({2, 2}, {0, -1, 1, 0});
  const auto [w, V] = la::eig(R);
  std::vector<C> ws = w.to_vector();
  std::sort(ws.begin(), ws.end(), [](C a, C b) { return a.imag() < b.imag(); });
  EXPECT_NEAR(std::abs(ws[0] - C(0, -1)), 0, 1e-15);
  EXPECT_NEAR(std::abs(ws[1] - C(0, 1)), 0, 1e-15);
  const auto v = V.to_vector();
  EXPECT_NEAR(std::abs(v[2] - std::conj(v[0])) + std::abs(v[3] - std::conj(v[1])), 0, 1e-15);
  // Upper triangular: the diagonal.
  const auto U = Tensor<double>::from_row_major({3, 3}, {1, 5, -2, 0, -3, 4, 0, 0, 7});
  std::vector<double> re;
  for (const C& x : la::eigvals(U).to_vector()) {
    EXPECT_EQ(x.imag(), 0);
    re.push_back(x.real());
  }
  std::sort(re.begin(), re.end());
  EXPECT_EQ(re, (std::vector<double>{-3, 1, 7}));
  // Hermitian input: the eigenvalues of eigh.
  const auto H = tx::lgtest::hermitian_with<C>({-1.0, 0.5, 2.0}, {}, 3);
  std::vector<double> eh;
  for (const C& x : la::eigvals(H).to_vector()) eh.push_back(x.real());
  std::sort(eh.begin(), eh.end());
  for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(eh[i], la::eigvalsh(H).to_vector()[i], 1e-13);
}

TYPED_TEST(LinalgEig, Gradients) {
  using T = TypeParam;
  if constexpr (std::is_same_v<tx::real_t<T>, double>) {
    const auto A = spread_input<T>(4, {2}, 20);
    TENAX_CHECK_GRADS([](const auto& a) { return la::eigvals(a); }, A);
    // Gauge-invariant functions of the eigenvectors: their moduli, and V exp(w) V^-1 = exp(A).
    TENAX_CHECK_GRADS([](const auto& a) { return tx::abs(la::eig(a).second); }, A);
    TENAX_CHECK_GRADS(
        [](const auto& a) {
          const auto e = la::eig(a);
          return la::solve(e.second, tx::mul(e.second, tx::detail::as_row(tx::exp(e.first))), false);
        },
        A);
    // A real matrix with a complex pair: [[0, -2], [2, 0]] + small random part.
    if constexpr (!tx::is_complex_v<T>) {
      const auto P = tx::add(Tensor<T>::from_row_major({3, 3}, {0, -2, 0, 2, 0, 0, 0, 0, 1}),
                             tx::mul(Tensor<T>::randn({3, 3}, 21), T(0.1)));
      TENAX_CHECK_GRADS([](const auto& a) { return la::eigvals(a); }, P);
      TENAX_CHECK_GRADS([](const auto& a) { return tx::abs(la::eig(a).second); }, P);
    }
  }
}

TEST(LinalgEigGrad, SpectralFunctionMatchesMatrixExp) {
  // V exp(w) V^-1 is exp(A): the same values and gradients through eig as through matrix_exp.
  const auto A = spread_input<double>(4, {}, 30);
  const auto via_eig = [](const Tensor<double>& a) {
    const auto [w, V] = la::eig(a);
    return tx::real(la::solve(V, tx::mul(V, tx::detail::as_row(tx::exp(w))), false));
  };
  expect_close(via_eig(A), la::matrix_exp(A), 1e-11, "value");
  const auto W = Tensor<double>::randn({4, 4}, 31);
  const auto g1 = tx::grad([&](const Tensor<double>& a) { return tx::sum(tx::mul(via_eig(a), W)); }, A);
  const auto g2 = tx::grad([&](const Tensor<double>& a) { return tx::sum(tx::mul(la::matrix_exp(a), W)); }, A);
  expect_close(g1, g2, 1e-9, "gradient");
}

TEST(LinalgEigGrad, BatchAndLayoutInvariant) {
  using T = std::complex<double>;
  const auto A = spread_input<T>(3, {3}, 40);
  tx::lgtest::expect_batch_matches_loop([](const auto& a) { return tx::abs(la::eig(a).second); }, A);
  tx::testing::expect_layout_invariant([](const auto& a) { return la::eigvals(a); }, tx::lgtest::transposed_view(A));
}

TEST(LinalgEigGrad, PhaseDependentLossIsFlagged) {
  using T = std::complex<double>;
  const auto A = spread_input<T>(3, {}, 50);
  expect_error([&] { (void)tx::grad([](const Tensor<T>& a) { return tx::sum(tx::imag(la::eig(a).second)); }, A); },
               "[eig] the loss depends on the eigenvector phases");
  la::Degeneracy quiet;
  quiet.on_gauge = la::Degeneracy::OnGauge::Ignore;
  EXPECT_NO_THROW((void)tx::grad([&](const Tensor<T>& a) { return tx::sum(tx::imag(la::eig(a, quiet).second)); }, A));
}

TEST(LinalgEigErrors, BadInputNamesTheOp) {
  expect_error(
      [] {
        la::eig(Tensor<double>::randn({3, 4}, 1));
      },
      "[eig] expected A to hold square matrices", {"[3, 4]", "f64"});
  expect_error([] { la::eigvals(Tensor<double>::randn({3}, 1)); }, "[eigvals] expected A to be a matrix");
  auto bad = Tensor<double>::randn({3, 3, 2}, 2);
  bad.mutable_data()[10] = std::nan("");
  expect_error([&] { la::eig(bad); }, "[eig]", {"inf or NaN", "batch"});
  EXPECT_EQ(la::eig(Tensor<double>::zeros({0, 0, 2})).first.shape(), (Shape{0, 2}));
  // eig_ex: the codes instead of the error, NaN for the failed matrix only.
  const auto [w, V, info] = la::eig_ex(bad);
  EXPECT_EQ(info.to_vector(), (std::vector<std::int32_t>{0, -1}));  // (entry 10 is in matrix 1)
  EXPECT_FALSE(std::isnan(w.at({0, 0}).real()));
  EXPECT_TRUE(std::isnan(w.at({0, 1}).real()));
  EXPECT_FALSE(std::isnan(std::abs(V.at({0, 0, 0}))));
}
