// The generic forms of the kernels/dispatch.hpp slots (what a device without kernels of its own
// runs: the backend interface and public ops, checks deferred to the next read) run here on the
// CPU, with the CPU backend standing in for the device's, and must give exactly the host forms'
// results and raise the same errors, when the device's checks run (detail::run_deferred_checks).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <tenax/tenax.hpp>

#include "support/messages.hpp"

namespace tx = tenax;
namespace d = tenax::detail;
using tx::Tensor;
using tx::testing::error_of;

namespace {

// While alive, the CPU's entry of the slot <Host, Generic> is the generic form.
template <auto Host, auto Generic>
class UseGeneric {
 public:
  UseGeneric() { slot() = Generic; }
  ~UseGeneric() { slot() = Host; }
  UseGeneric(const UseGeneric&) = delete;
  UseGeneric& operator=(const UseGeneric&) = delete;

 private:
  static auto& slot() { return d::DeviceDispatch<Host, Generic>::on[tx::kind_index(tx::Device::cpu())]; }
};

template <class T>
void expect_same(const Tensor<T>& got, const Tensor<T>& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  EXPECT_EQ(got.to_vector(), want.to_vector()) << what;
}

// The message of the error the CPU's deferred checks raise ("" for none), after f ran without one.
template <class F>
std::string deferred_error_of(F&& f) {
  EXPECT_EQ(error_of(f), "");
  return error_of([] { d::run_deferred_checks(tx::Device::cpu()); });
}

// A 5 x 4 x 3 batch read through a transposed view (any strides).
Tensor<double> strided_batch() { return tx::permute(Tensor<double>::randn({4, 5, 3}, 7), {1, 0, 2}); }

}  // namespace

TEST(GenericForms, TrilTriuAndEmbed) {
  const Tensor<double> x = strided_batch();
  for (std::int64_t k : {-7, -2, 0, 1, 9}) {
    const Tensor<double> lo = tx::tril(x, k), up = tx::triu(x, k);
    UseGeneric<&tx::ops::Triangle::host<double>, &tx::ops::Triangle::generic<double>> generic;
    expect_same(tx::tril(x, k), lo, "tril k = " + std::to_string(k));
    expect_same(tx::triu(x, k), up, "triu k = " + std::to_string(k));
  }
  const Tensor<double> v = tx::slice(x, 0, 1, 4, 1), embedded = tx::diag_embed(v);
  using Embed = tx::ops::Embed<tx::ops::Diagonal>;
  UseGeneric<&Embed::host<double>, &Embed::generic<double>> generic;
  expect_same(tx::diag_embed(v), embedded, "diag_embed");
}

TEST(GenericForms, PivotsPermutationsAndLuSolve) {
  const Tensor<double> A = Tensor<double>::randn({4, 4, 3}, 3), B = strided_batch();
  // (named, not structured bindings: the lambdas below capture them)
  const std::pair<Tensor<double>, Tensor<std::int32_t>> factors = tx::linalg::lu_factor(A);
  const Tensor<double>& LU = factors.first;
  const Tensor<std::int32_t>& piv = factors.second;
  const Tensor<double> B4 = tx::slice(B, 0, 0, 4, 1);
  const Tensor<std::int64_t> perm = d::pivots_to_permutation(piv, 4), inv = d::inverse_permutation(perm);
  const Tensor<double> rows = d::permute_rows(B4, perm);
  const Tensor<double> pivoted = d::pivot_rows(B4, piv), unpivoted = d::pivot_rows(B4, piv, true);
  std::vector<Tensor<double>> X;
  for (auto t : {tx::linalg::Trans::N, tx::linalg::Trans::T, tx::linalg::Trans::C})
    X.push_back(tx::linalg::lu_solve(LU, piv, B4, t));
  {
    UseGeneric<&d::PivotsToPermutation::host, &d::PivotsToPermutation::generic> g1;
    UseGeneric<&d::InversePermutation::host, &d::InversePermutation::generic> g2;
    UseGeneric<&tx::ops::PermuteRows::host<double>, &tx::ops::PermuteRows::generic<double>> g3;
    UseGeneric<&tx::ops::LuSolve::host<double>, &tx::ops::LuSolve::generic<double>> g4;
    UseGeneric<&tx::ops::PivotRows::host<double>, &tx::ops::PivotRows::generic<double>> g5;
    expect_same(d::pivots_to_permutation(piv, 4), perm, "pivots_to_permutation");
    expect_same(d::inverse_permutation(perm), inv, "inverse_permutation");
    expect_same(d::permute_rows(B4, perm), rows, "permute_rows");
    expect_same(d::pivot_rows(B4, piv), pivoted, "pivot_rows");
    expect_same(d::pivot_rows(B4, piv, true), unpivoted, "pivot_rows (inverse)");
    int i = 0;
    for (auto t : {tx::linalg::Trans::N, tx::linalg::Trans::T, tx::linalg::Trans::C})
      expect_same(tx::linalg::lu_solve(LU, piv, B4, t), X[static_cast<std::size_t>(i++)], "lu_solve");
  }
  // A pivot outside 1..n: at once on the host, at the next read in the generic form, one message.
  std::vector<std::int32_t> bad = piv.to_vector();
  bad[5] = 9;
  const Tensor<std::int32_t> badp = Tensor<std::int32_t>::from_col_major(piv.shape(), bad);
  const std::string now = error_of([&] { tx::linalg::lu_solve(LU, badp, B4); });
  EXPECT_NE(now.find("pivot"), std::string::npos) << now;
  const std::string rows_now = error_of([&] { d::pivot_rows(B4, badp); });
  EXPECT_NE(rows_now.find("pivot"), std::string::npos) << rows_now;
  {
    UseGeneric<&tx::ops::PivotRows::host<double>, &tx::ops::PivotRows::generic<double>> generic;
    EXPECT_EQ(deferred_error_of([&] { d::pivot_rows(B4, badp); }), rows_now);
  }
  UseGeneric<&tx::ops::LuSolve::host<double>, &tx::ops::LuSolve::generic<double>> generic;
  EXPECT_EQ(deferred_error_of([&] { tx::linalg::lu_solve(LU, badp, B4); }), now);
}

// The small LU rule kernels against their generic forms (the rule's tensor ops): equal up to
// rounding (different algorithms), packed factors, a batch of three.
TEST(GenericForms, LuRuleKernels) {
  const auto LU =
      tx::linalg::lu_factor(tx::add(Tensor<double>::randn({5, 5, 3}, 11), tx::mul(Tensor<double>::eye(5, 5), 4.0)))
          .first;
  const Tensor<double> X = Tensor<double>::randn({5, 5, 3}, 12), G = Tensor<double>::randn({5, 5, 3}, 13);
  const auto [dL, dU] = d::lu_tangent_small(LU, LU, X);
  const Tensor<double> gA = d::lu_cotangent_small(LU, LU, X, G);
  auto expect_near = [](const Tensor<double>& got, const Tensor<double>& want, const char* what) {
    ASSERT_EQ(got.shape(), want.shape()) << what;
    const auto g = got.to_vector(), w = want.to_vector();
    for (std::size_t i = 0; i < g.size(); ++i)
      EXPECT_NEAR(g[i], w[i], 1e-12 * (1 + std::abs(w[i]))) << what << " " << i;
  };
  UseGeneric<&tx::ops::LuTangentSmall::host<double>, &tx::ops::LuTangentSmall::generic<double>> g1;
  UseGeneric<&tx::ops::LuCotangentSmall::host<double>, &tx::ops::LuCotangentSmall::generic<double>> g2;
  const auto [gdL, gdU] = d::lu_tangent_small(LU, LU, X);
  expect_near(gdL, dL, "lu_tangent dL");
  expect_near(gdU, dU, "lu_tangent dU");
  expect_near(d::lu_cotangent_small(LU, LU, X, G), gA, "lu_cotangent");
}

// The small solve rule kernels against their generic forms (the rule's tensor ops on the backend's
// getrs): equal up to rounding, op N and C, a batch of three.
TEST(GenericForms, SolveRuleKernels) {
  const Tensor<double> A = tx::add(Tensor<double>::randn({5, 5, 3}, 21), tx::mul(Tensor<double>::eye(5, 5), 4.0));
  const auto [LU, piv] = tx::linalg::lu_factor(A);
  const Tensor<double> M = Tensor<double>::randn({5, 5, 3}, 22), X = Tensor<double>::randn({5, 2, 3}, 23),
                       G = Tensor<double>::randn({5, 2, 3}, 24);
  auto expect_near = [](const Tensor<double>& got, const Tensor<double>& want, const std::string& what) {
    ASSERT_EQ(got.shape(), want.shape()) << what;
    const auto g = got.to_vector(), w = want.to_vector();
    for (std::size_t i = 0; i < g.size(); ++i)
      EXPECT_NEAR(g[i], w[i], 1e-12 * (1 + std::abs(w[i]))) << what << " " << i;
  };
  for (const auto t : {tx::cpu::Trans::N, tx::cpu::Trans::C}) {
    const std::string op = t == tx::cpu::Trans::N ? "N" : "C";
    const Tensor<double> dX = d::solve_tangent_small(t, A, LU, piv, M, X);
    const auto [gB, gA] = d::solve_cotangent_small(t, A, LU, piv, G, X);
    UseGeneric<&tx::ops::SolveTangentSmall::host<double>, &tx::ops::SolveTangentSmall::generic<double>> g1;
    UseGeneric<&tx::ops::SolveCotangentSmall::host<double>, &tx::ops::SolveCotangentSmall::generic<double>> g2;
    expect_near(d::solve_tangent_small(t, A, LU, piv, M, X), dX, "solve_tangent " + op);
    const auto [ggB, ggA] = d::solve_cotangent_small(t, A, LU, piv, G, X);
    expect_near(ggB, gB, "solve_cotangent gB " + op);
    expect_near(ggA, gA, "solve_cotangent gA " + op);
  }
}

TEST(GenericForms, SpectralRuleKernels) {
  // diag(U^H M V) and U diag(g) V^H (the values' tangent and gradient of svdvals and eigvalsh).
  const Tensor<double> U = Tensor<double>::randn({5, 3, 2}, 31), M = Tensor<double>::randn({5, 4, 2}, 32),
                       V = Tensor<double>::randn({4, 3, 2}, 33), g = Tensor<double>::randn({3, 2}, 34);
  const Tensor<double> diag = d::diag_product_small(U, M, V), prod = d::scaled_product_small(U, g, V);
  UseGeneric<&tx::ops::DiagProduct::host<double>, &tx::ops::DiagProduct::generic<double>> g1;
  UseGeneric<&tx::ops::ScaledProduct::host<double>, &tx::ops::ScaledProduct::generic<double>> g2;
  for (const auto& [got, want, what] : {std::tuple{d::diag_product_small(U, M, V), diag, "diag_product"},
                                        std::tuple{d::scaled_product_small(U, g, V), prod, "scaled_product"}}) {
    ASSERT_EQ(got.shape(), want.shape()) << what;
    const auto a = got.to_vector(), b = want.to_vector();
    for (std::size_t i = 0; i < a.size(); ++i)
      EXPECT_NEAR(a[i], b[i], 1e-12 * (1 + std::abs(b[i]))) << what << " " << i;
  }
  // The eigh rules' cores: diag(V^H X V), V (F o V^H X V) and V (diag(g) + F o skew(K)) V^H.
  const Tensor<double> Vs = Tensor<double>::randn({4, 4, 2}, 35), X = Tensor<double>::randn({4, 4, 2}, 36),
                       F = Tensor<double>::randn({4, 4, 2}, 37), gw = Tensor<double>::randn({4, 2}, 38);
  const auto [td, tV] = d::eigh_tangent_small(Vs, X, F);
  const Tensor<double> cot = d::eigh_cotangent_small(Vs, X, F, gw);
  UseGeneric<&tx::ops::EighTangentSmall::host<double>, &tx::ops::EighTangentSmall::generic<double>> g3;
  UseGeneric<&tx::ops::EighCotangentSmall::host<double>, &tx::ops::EighCotangentSmall::generic<double>> g4;
  // The lstsq rules' cores (ops/linalg/lstsq_small.hpp).
  const Tensor<double> A = Tensor<double>::randn({5, 3, 2}, 39), B = Tensor<double>::randn({5, 2, 2}, 40),
                       dA = Tensor<double>::randn({5, 3, 2}, 41), gX = Tensor<double>::randn({3, 2, 2}, 42);
  const Tensor<double> P = tx::linalg::pinv(A), Xs = tx::matmul(P, B);
  const Tensor<double> ldX = d::lstsq_tangent_small(A, B, Xs, P, dA);
  const auto [lgA, lH] = d::lstsq_cotangent_small(A, B, Xs, P, gX);
  UseGeneric<&tx::ops::LstsqTangentSmall::host<double>, &tx::ops::LstsqTangentSmall::generic<double>> g5;
  UseGeneric<&tx::ops::LstsqCotangentSmall::host<double>, &tx::ops::LstsqCotangentSmall::generic<double>> g6;
  const auto [ggA, gH] = d::lstsq_cotangent_small(A, B, Xs, P, gX);
  // The QR rules' cores (ops/linalg/qr_small.hpp).
  const auto [Qs, Rs] = tx::linalg::qr(Tensor<double>::randn({5, 3, 2}, 43));
  const Tensor<double> gQ = Tensor<double>::randn({5, 3, 2}, 44), gR = Tensor<double>::randn({3, 3, 2}, 45);
  const auto [qdQ, qdR] = d::qr_tangent_small(Qs, Rs, dA);
  const Tensor<double> qgA = d::qr_cotangent_small(Qs, Rs, gQ, gR);
  UseGeneric<&tx::ops::QrTangentSmall::host<double>, &tx::ops::QrTangentSmall::generic<double>> g7;
  UseGeneric<&tx::ops::QrCotangentSmall::host<double>, &tx::ops::QrCotangentSmall::generic<double>> g8;
  const auto [gdQ, gdR] = d::qr_tangent_small(Qs, Rs, dA);
  const auto [gd, gV] = d::eigh_tangent_small(Vs, X, F);
  for (const auto& [got, want, what] :
       {std::tuple{gd, td, "eigh_tangent d"}, std::tuple{gV, tV, "eigh_tangent dV"},
        std::tuple{d::eigh_cotangent_small(Vs, X, F, gw), cot, "eigh_cotangent"},
        std::tuple{d::lstsq_tangent_small(A, B, Xs, P, dA), ldX, "lstsq_tangent"},
        std::tuple{ggA, lgA, "lstsq_cotangent gA"}, std::tuple{gH, lH, "lstsq_cotangent P^H gX"},
        std::tuple{gdQ, qdQ, "qr_tangent dQ"}, std::tuple{gdR, qdR, "qr_tangent dR"},
        std::tuple{d::qr_cotangent_small(Qs, Rs, gQ, gR), qgA, "qr_cotangent"}}) {
    ASSERT_EQ(got.shape(), want.shape()) << what;
    const auto a = got.to_vector(), b = want.to_vector();
    for (std::size_t i = 0; i < a.size(); ++i)
      EXPECT_NEAR(a[i], b[i], 1e-12 * (1 + std::abs(b[i]))) << what << " " << i;
  }
}

TEST(GenericForms, InfoCodesAndChecks) {
  // A regular, a singular and a non-finite matrix.
  std::vector<double> a = Tensor<double>::randn({3, 3, 3}, 5).to_vector();
  for (int i = 0; i < 3; ++i) a[static_cast<std::size_t>(9 + 3 * i)] = 0;  // row 0 of matrix 1: U(3, 3) = 0
  a[20] = std::numeric_limits<double>::quiet_NaN();
  const Tensor<double> A = Tensor<double>::from_col_major({3, 3, 3}, a);
  const auto [s, l, info] = tx::linalg::slogdet_ex(A);
  EXPECT_EQ(info.to_vector(), (std::vector<std::int32_t>{0, 3, -1}));
  const auto [LU, piv] = tx::linalg::lu_factor(tx::slice(A, 2, 0, 2, 1));
  const Tensor<std::int32_t> zero_pivots = tx::ops::ZeroPivotInfo{}.forward(LU);
  {
    using Info = tx::linalg::detail_slogdet::SlogdetInfo;
    UseGeneric<&Info::host<double>, &Info::generic<double>> g1;
    UseGeneric<&tx::ops::ZeroPivotInfo::host<double>, &tx::ops::ZeroPivotInfo::generic<double>> g2;
    expect_same(std::get<2>(tx::linalg::slogdet_ex(A)), info, "slogdet_ex info");
    expect_same(tx::ops::ZeroPivotInfo{}.forward(LU), zero_pivots, "zero-pivot info");
  }
  // The info check of a raising variant, and the non-finite input check.
  const Tensor<double> not_spd = tx::neg(tx::matmul(A, A.mH()));
  const std::string chol = error_of([&] { tx::linalg::cholesky(tx::slice(not_spd, 2, 0, 1, 1)); });
  const std::string nonfinite = error_of([&] { d::check_finite_input("test_op", A); });
  EXPECT_NE(chol, "");
  EXPECT_NE(nonfinite.find("inf or NaN"), std::string::npos) << nonfinite;
  {
    UseGeneric<&tx::ops::InfoCheck::host, &tx::ops::InfoCheck::generic> g;
    EXPECT_EQ(deferred_error_of([&] { tx::linalg::cholesky(tx::slice(not_spd, 2, 0, 1, 1)); }), chol);
  }
  UseGeneric<&d::check_codes_now, &d::defer_check> g;
  EXPECT_EQ(deferred_error_of([&] { d::check_finite_input("test_op", A); }), nonfinite);
}

TEST(GenericForms, GaugeCheck) {
  const Tensor<double> lost = Tensor<double>::from_col_major({2}, {0.5, -0.25}), ref = Tensor<double>::ones({2});
  const tx::linalg::Degeneracy throwing;
  const std::string now = error_of([&] { d::gauge_check("eigh", throwing, lost, ref, "eigenvector phases"); });
  EXPECT_NE(now.find("eigenvector phases"), std::string::npos) << now;
  UseGeneric<&d::gauge_report_now<double>, &d::gauge_report_deferred<double>> generic;
  EXPECT_EQ(deferred_error_of([&] { d::gauge_check("eigh", throwing, lost, ref, "eigenvector phases"); }), now);
  EXPECT_EQ(deferred_error_of([&] { d::gauge_check("eigh", throwing, tx::mul(lost, 0.0), ref, "phases"); }), "");
}

TEST(GenericForms, Sort) {
  const Tensor<double> x = strided_batch();
  for (bool descending : {false, true}) {
    const auto [v, i] = tx::sort(x, 1, descending);
    UseGeneric<&tx::ops::Sort::host<double>, &tx::ops::Sort::generic<double>> generic;
    const auto [gv, gi] = tx::sort(x, 1, descending);
    expect_same(gv, v, "sort values");
    expect_same(gi, i, "sort indices");
  }
}
