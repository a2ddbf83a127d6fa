// Gradient tests for the spectral decompositions: eigh / eigvalsh and svd / svdvals. Each case runs
// the full harness (tests/support/gradcheck.hpp): JVP vs central differences, VJP vs JVP exactly,
// second order, float32 vs float64; for float64 and complex128. Plus batched == loop over the
// batch, and non-contiguous views == contiguous copies.
//
// Conventions (docs/MATH.md sections 5, 6, 8): eigh follows PyTorch (tangents Hermitian, gradient
// Hermitian), so it is tested through eigh(A + A^H). Eigen/singular vectors are only defined up to
// a sign (real) or phase (complex) per column, so they are tested through gauge-invariant probes
// (eigenvalues, V diag(c) V^H, |V|; S, U diag(c) V^H, |U|, |Vh|), except with canonical_gauge =
// true, where the raw vectors are a differentiable function of A and are checked directly.
// Inputs have well-separated spectra: eigenvalues -1.6, -0.9, -0.2, ... (gaps 0.7), singular
// values ..., 2.8, 2.0, 1.2 (gaps 0.8).
#include <gtest/gtest.h>

#include <array>
#include <complex>
#include <string>
#include <utility>
#include <vector>

#include "linalg/linalg_grad_support.hpp"
#include "support/messages.hpp"

namespace tx = tenax;
namespace la = tenax::linalg;
using tx::Tensor;
using tx::lgtest::eigh_input;
using tx::lgtest::expect_batch_matches_loop;
using tx::lgtest::herm;
using tx::lgtest::mshape;
using tx::lgtest::step_view;
using tx::lgtest::svd_input;
using tx::lgtest::transposed_view;
using tx::lgtest::weight_row;
using tx::testing::expect_close;
using tx::testing::expect_layout_invariant;
using tx::testing::values;

namespace {

template <class T>
class LinalgGradSpectral : public ::testing::Test {};
TYPED_TEST_SUITE(LinalgGradSpectral, tx::lgtest::Types);

const std::vector<std::pair<std::int64_t, std::int64_t>> kShapes = {{4, 4}, {6, 4}, {4, 6}};

std::string shape_name(std::int64_t m, std::int64_t n) { return std::to_string(m) + "x" + std::to_string(n); }

// eigh probes, each a function of A through the Hermitian wrapper A + A^H.
struct EighProbes {
  bool upper = false;
  auto values_probe() const {
    return [u = upper](const auto& A) { return la::eigh(herm(A), u).first; };
  }
  auto vcv_probe() const {  // V diag(c) V^H
    return [u = upper](const auto& A) {
      const auto V = la::eigh(herm(A), u).second;
      return tx::matmul(tx::mul(V, weight_row(A, V.shape()[1])), V.mH());
    };
  }
  auto absv_probe() const {  // |V|
    return [u = upper](const auto& A) { return tx::abs(la::eigh(herm(A), u).second); };
  }
  auto canonical_v() const {  // raw V in the canonical gauge
    return [u = upper](const auto& A) { return la::eigh(herm(A), u, la::Degeneracy{}, true).second; };
  }
};

// svd probes.
auto s_probe(bool full) {
  return [full](const auto& A) { return std::get<1>(la::svd(A, full)); };
}
auto usv_probe(bool full) {  // U diag(c) V^H on the thin columns
  return [full](const auto& A) {
    const auto [U, S, Vh] = la::svd(A, full);
    const std::int64_t k = S.shape()[0];
    const auto Ut = U.slice(1, 0, k), Vht = Vh.slice(0, 0, k);
    return tx::matmul(tx::mul(Ut, weight_row(A, k)), Vht);
  };
}
auto absu_probe() {
  return [](const auto& A) { return tx::abs(std::get<0>(la::svd(A))); };
}
auto absvh_probe() {
  return [](const auto& A) { return tx::abs(std::get<2>(la::svd(A))); };
}
auto canonical_u() {
  return [](const auto& A) { return std::get<0>(la::svd(A, false, la::Degeneracy{}, true)); };
}
auto canonical_vh() {
  return [](const auto& A) { return std::get<2>(la::svd(A, false, la::Degeneracy{}, true)); };
}

// eigvalsh and svdvals take their value from a call without AD (tenax::testing::value_from_plain_call,
// support/gradcheck.hpp); the size of the value difference is asserted by the ValueUnderAD tests.
using tx::testing::value_from_plain_call;

// Relative difference between op's value with and without AD (a tangent on the input).
template <class Op, class T>
void expect_value_under_ad_close(Op op, const Tensor<T>& A, double rtol) {
  const auto plain = op(A);
  const auto [y, dy] = tx::jvp(op, A, Tensor<T>::randn(A.shape(), 77));
  expect_close(values(y), values(plain), rtol, "value with AD vs without");
}

}  // namespace

// ---- eigh / eigvalsh -----------------------------------------------------------------------------

TYPED_TEST(LinalgGradSpectral, EighProbes) {
  using T = TypeParam;
  for (bool upper : {false, true}) {
    SCOPED_TRACE(upper ? "upper" : "lower");
    const EighProbes p{upper};
    for (std::int64_t n : {3, 5}) {
      SCOPED_TRACE("n = " + std::to_string(n));
      const auto A = eigh_input<T>(n, {}, 400 + static_cast<std::uint64_t>(n) + (upper ? 10 : 0));
      const auto [w, V] = la::eigh(herm(A), upper);
      expect_close(values(w), values(Tensor<double>::from_col_major({n}, tx::lgtest::spread(n))), 1e-13, "eigenvalues");
      expect_close(values(tx::matmul(tx::mul(V, tx::cast<T>(w.reshape({1, n}))), V.mH())), values(herm(A)), 1e-13,
                   "V diag(w) V^H = A + A^H");
      TENAX_CHECK_GRADS(p.values_probe(), A);
      TENAX_CHECK_GRADS(p.vcv_probe(), A);
      TENAX_CHECK_GRADS(p.absv_probe(), A);
    }
  }
}

TYPED_TEST(LinalgGradSpectral, EighCanonicalGaugeRawV) {
  using T = TypeParam;
  for (bool upper : {false, true}) {
    SCOPED_TRACE(upper ? "upper" : "lower");
    const EighProbes p{upper};
    const auto A = eigh_input<T>(4, {}, 420 + (upper ? 1 : 0));
    const auto V = p.canonical_v()(A);
    // The gauge: each column's first largest-magnitude entry is real and positive.
    for (std::int64_t j = 0; j < 4; ++j) {
      std::int64_t k = 0;
      for (std::int64_t i = 1; i < 4; ++i)
        if (std::abs(V.at({i, j})) > std::abs(V.at({k, j}))) k = i;
      EXPECT_GT(std::real(V.at({k, j})), 0);
      EXPECT_EQ(std::imag(std::complex<double>(V.at({k, j}))), 0);
    }
    TENAX_CHECK_GRADS(p.canonical_v(), A);
  }
  // Batched: the raw canonical vectors, batched == loop.
  const auto Ab = eigh_input<T>(4, {3}, 425);
  TENAX_CHECK_GRADS(EighProbes{}.canonical_v(), Ab);
  expect_batch_matches_loop(EighProbes{}.canonical_v(), Ab);
}

TYPED_TEST(LinalgGradSpectral, Eigvalsh) {
  using T = TypeParam;
  auto f = value_from_plain_call([](const auto& A) { return la::eigvalsh(herm(A)); });
  auto fu = value_from_plain_call([](const auto& A) { return la::eigvalsh(herm(A), true); });
  for (std::int64_t n : {3, 6}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto A = eigh_input<T>(n, {}, 430 + static_cast<std::uint64_t>(n));
    expect_close(values(f(A)), values(la::eigh(herm(A)).first), 1e-14, "eigvalsh == eigh values");
    TENAX_CHECK_GRADS(f, A);
    TENAX_CHECK_GRADS(fu, A);
  }
}

TYPED_TEST(LinalgGradSpectral, EigvalshValueUnderAD) {
  using T = TypeParam;
  // With AD the eigenvalues come from syevd with vectors, without AD from syevd without: equal
  // to rounding (not bit for bit; see value_from_plain_call).
  expect_value_under_ad_close([](const auto& A) { return la::eigvalsh(herm(A)); }, eigh_input<T>(5, {}, 435), 1e-14);
}

// diag(U^H M V) as one op (ops/linalg/diag_product.hpp; the values-only tangents of eigvalsh and
// svdvals at small sizes): against the products for square and rectangular operands and a batch,
// operands of any layout read in place (bit-equal to contiguous copies), its own derivatives to
// second order, eigvalsh's and svdvals' JVPs through it against the products (input recorded),
// and an error naming the op and the shapes.
TYPED_TEST(LinalgGradSpectral, DiagProductRules) {
  using T = TypeParam;
  namespace d = tx::detail;
  std::uint64_t seed = 470;
  for (const auto& [m, n, k] :
       std::vector<std::array<std::int64_t, 3>>{{1, 1, 1}, {2, 2, 2}, {5, 3, 3}, {3, 6, 2}, {16, 16, 16}}) {
    SCOPED_TRACE(std::to_string(m) + " " + std::to_string(n) + " " + std::to_string(k));
    const auto U = Tensor<T>::randn(mshape(m, k, {3}), ++seed), M = Tensor<T>::randn(mshape(m, n, {3}), ++seed),
               V = Tensor<T>::randn(mshape(n, k, {3}), ++seed);
    const auto got = d::diag_product_small(U, M, V);
    expect_close(values(got), values(tx::diagonal(tx::matmul(U.mH(), tx::matmul(M, V)))), 1e-13, "diag(U^H M V)");
    if (m > 1 && k > 1) EXPECT_EQ(d::diag_product_small(transposed_view(U), M, V).to_vector(), got.to_vector());
  }
  auto f = [](const auto& u, const auto& m, const auto& v) { return d::apply(tx::ops::DiagProduct{}, u, m, v); };
  TENAX_CHECK_GRADS(f, Tensor<T>::randn(mshape(4, 3, {2}), 480), Tensor<T>::randn(mshape(4, 5, {2}), 481),
                    Tensor<T>::randn(mshape(5, 3, {2}), 482));
  const auto A = eigh_input<T>(4, {2}, 483), dA = Tensor<T>::randn(mshape(4, 4, {2}), 484);
  for (const bool svd : {false, true}) {
    SCOPED_TRACE(svd ? "svdvals" : "eigvalsh");
    auto g = [svd](const auto& a) { return svd ? la::svdvals(a) : la::eigvalsh(herm(a)); };
    expect_close(values(tx::jvp(g, A, dA).second), values(tx::jvp(g, A.requires_grad(), dA).second), 1e-13,
                 "JVP: diag_product vs the products");
  }
  const std::string e = tx::testing::error_of([] {
    tx::ops::DiagProduct{}.forward(Tensor<T>::randn({3, 2}, 1), Tensor<T>::randn({4, 3}, 1),
                                   Tensor<T>::randn({3, 2}, 1));
  });
  EXPECT_NE(e.find("diag_product"), std::string::npos) << e;
  EXPECT_NE(e.find("[4, 3]"), std::string::npos) << e;
}

// U diag(g) V^H as one op (ops/linalg/scaled_product.hpp), which the svdvals and eigvalsh
// gradients take for small matrices: against the products, strided operands bit-equal to dense
// ones, its own derivatives, the gradients it gives, and an error naming it.
TYPED_TEST(LinalgGradSpectral, ScaledProductRules) {
  using T = TypeParam;
  namespace d = tx::detail;
  std::uint64_t seed = 490;
  for (const auto& [m, n, k] :
       std::vector<std::array<std::int64_t, 3>>{{1, 1, 1}, {2, 2, 2}, {5, 3, 3}, {3, 6, 2}, {16, 16, 16}}) {
    SCOPED_TRACE(std::to_string(m) + " " + std::to_string(n) + " " + std::to_string(k));
    const auto U = Tensor<T>::randn(mshape(m, k, {3}), ++seed), g = Tensor<T>::randn({k, 3}, ++seed),
               V = Tensor<T>::randn(mshape(n, k, {3}), ++seed);
    const auto got = d::scaled_product_small(U, g, V);
    expect_close(values(got), values(tx::matmul(tx::mul(U, d::as_row(g)), V.mH())), 1e-13, "U diag(g) V^H");
    if (m > 1 && k > 1) {
      EXPECT_EQ(d::scaled_product_small(transposed_view(U), g, V).to_vector(), got.to_vector());
      EXPECT_EQ(d::scaled_product_small(U, g, transposed_view(V)).to_vector(), got.to_vector());
      EXPECT_EQ(d::scaled_product_small(U, tx::transpose(tx::transpose(g).contiguous()), V).to_vector(),
                got.to_vector());
    }
  }
  auto f = [](const auto& u, const auto& g, const auto& v) { return d::apply(tx::ops::ScaledProduct{}, u, g, v); };
  TENAX_CHECK_GRADS(f, Tensor<T>::randn(mshape(4, 3, {2}), 500), Tensor<T>::randn({3, 2}, 501),
                    Tensor<T>::randn(mshape(5, 3, {2}), 502));
  // The svdvals gradient U diag(gs) V^H and the eigvalsh gradient V diag(gw) V^H.
  using R = tx::real_t<T>;
  const auto A = Tensor<T>::randn(mshape(4, 3, {2}), 503);
  const auto gs = Tensor<R>::randn({3, 2}, 504);
  const auto [U, S, Vh] = la::svd(A);
  auto [s, pb] = tx::vjp([](const auto& a) { return la::svdvals(a); }, A);
  expect_close(values(pb(gs)), values(tx::matmul(tx::mul(U, d::as_row(tx::cast<T>(gs))), Vh)), 1e-12,
               "svdvals gradient");
  const auto H = herm(eigh_input<T>(4, {2}, 505));
  const auto gw = Tensor<R>::randn({4, 2}, 506);
  const auto [w, V] = la::eigh(H);
  auto [w2, pbe] = tx::vjp([](const auto& a) { return la::eigvalsh(a); }, H);
  expect_close(values(pbe(gw)), values(tx::matmul(tx::mul(V, d::as_row(tx::cast<T>(gw))), V.mH())), 1e-12,
               "eigvalsh gradient");
  const std::string e = tx::testing::error_of([] {
    tx::ops::ScaledProduct{}.forward(Tensor<T>::randn({3, 2}, 1), Tensor<T>::randn({3}, 1),
                                     Tensor<T>::randn({4, 2}, 1));
  });
  EXPECT_NE(e.find("scaled_product"), std::string::npos) << e;
  EXPECT_NE(e.find("[3]"), std::string::npos) << e;
}

// The eigh rules' cores for small matrices (ops/linalg/eigh_small.hpp): each kernel against its
// composite (the rule's tensor ops) for 1x1 to 16x16 and a batch, strided operands bit-equal to
// dense ones, the composite where the result is differentiated again, and errors naming the op.
// The eigh gradient tests (TENAX_CHECK_GRADS through eigh at n <= 16) run the kernels in the rules.
TYPED_TEST(LinalgGradSpectral, EighRuleKernels) {
  using T = TypeParam;
  namespace d = tx::detail;
  std::uint64_t seed = 520;
  for (std::int64_t n : {1, 2, 3, 5, 16}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto V = Tensor<T>::randn(mshape(n, n, {3}), ++seed), X = Tensor<T>::randn(mshape(n, n, {3}), ++seed),
               F = Tensor<T>::randn(mshape(n, n, {3}), ++seed), g = Tensor<T>::randn({n, 3}, ++seed);
    const auto [dd, dV] = d::eigh_tangent_small(V, X, F);
    const auto [cd, cV] = tx::ops::EighTangentSmall::composite(V, X, F);
    expect_close(values(dd), values(cd), 1e-13, "diag(V^H X V)");
    expect_close(values(dV), values(cV), 1e-13, "V (F o V^H X V)");
    const auto gA = d::eigh_cotangent_small(V, X, F, g);
    expect_close(values(gA), values(tx::ops::EighCotangentSmall::composite(V, X, F, g)), 1e-13,
                 "V (diag(g) + F o skew(K)) V^H");
    if (n > 1) {
      EXPECT_EQ(std::get<1>(d::eigh_tangent_small(V, transposed_view(transposed_view(X).contiguous()), F)).to_vector(),
                dV.to_vector());
      EXPECT_EQ(d::eigh_cotangent_small(transposed_view(transposed_view(V).contiguous()), X, F, g).to_vector(),
                gA.to_vector());
      EXPECT_EQ(d::eigh_cotangent_small(V, X, F, tx::transpose(tx::transpose(g).contiguous())).to_vector(),
                gA.to_vector());
    }
  }
  // Differentiated again: the composite, which records (the kernels have no rules).
  const auto V = Tensor<T>::randn(mshape(3, 3, {2}), 540).requires_grad(), X = Tensor<T>::randn(mshape(3, 3, {2}), 541),
             F = Tensor<T>::randn(mshape(3, 3, {2}), 542), g = Tensor<T>::randn({3, 2}, 543);
  EXPECT_TRUE(std::get<1>(d::eigh_tangent_small(V, X, F)).tracks_grad());
  EXPECT_TRUE(d::eigh_cotangent_small(V, X, F, g).tracks_grad());
  // Shapes the kernels do not take: undefined, for the rule's products.
  EXPECT_FALSE(std::get<0>(d::eigh_tangent_small(Tensor<T>::randn({17, 17}, 1), Tensor<T>::randn({17, 17}, 2),
                                                 Tensor<T>::randn({17, 17}, 3)))
                   .defined());
  const std::string e = tx::testing::error_of([] {
    tx::ops::EighCotangentSmall{}.forward(Tensor<T>::randn({3, 3}, 1), Tensor<T>::randn({3, 3}, 1),
                                          Tensor<T>::randn({3, 3}, 1), Tensor<T>::randn({4}, 1));
  });
  EXPECT_NE(e.find("eigh_cotangent"), std::string::npos) << e;
  EXPECT_NE(e.find("[4]"), std::string::npos) << e;
  // The eigh tangent and gradient at 4x4 (kernels) against the products of the rule's formulas.
  using R = tx::real_t<T>;
  const auto H = herm(eigh_input<T>(4, {2}, 544)), dH = herm(Tensor<T>::randn(mshape(4, 4, {2}), 545));
  const auto [w, Vh] = la::eigh(H);
  const auto Fh = tx::cast<T>(d::inverse_gaps(w, la::Degeneracy{}));
  const auto P = tx::matmul(Vh.mH(), tx::matmul(dH, Vh));
  const auto [w1, dw] = tx::jvp([](const auto& a) { return la::eigh(a).first; }, H, dH);
  expect_close(values(tx::cast<T>(dw)), values(tx::diagonal(P)), 1e-12, "eigh dw");
  const auto [V1, dV1] = tx::jvp([](const auto& a) { return la::eigh(a).second; }, H, dH);
  expect_close(values(dV1), values(tx::matmul(Vh, tx::mul(Fh, P))), 1e-12, "eigh dV");
  const auto gw = Tensor<R>::randn({4, 2}, 546);
  const auto [wv, pb] = tx::vjp([](const auto& a) { return la::eigh(a); }, H);
  const auto K = tx::matmul(Vh.mH(), tx::mul(Vh, T(2)));  // gV = 2 V: a gauge-invariant cotangent
  const auto want = tx::matmul(
      Vh,
      tx::matmul(tx::add(tx::diag_embed(tx::cast<T>(gw)), tx::mul(Fh, tx::mul(tx::sub(K, K.mH()), T(0.5)))), Vh.mH()));
  expect_close(values(pb(std::pair{gw, tx::mul(Vh, T(2))})), values(want), 1e-12, "eigh gradient");
}

// The 1/gap terms of the eigh, SVD and eig rules as an op of their own (ops/linalg/spectral.hpp,
// InversePairs): gaps and sums, Exact and Mask (a pair inside the wide tolerance, whose entries
// stay 0 under the differences' steps), a batch of two.
TYPED_TEST(LinalgGradSpectral, InversePairsRules) {
  using T = TypeParam;
  const auto x =
      Tensor<T>::from_col_major({4, 2}, {T(-1.6), T(-0.9), T(0.3), T(0.31), T(0.5), T(1.7), T(-2.2), T(2.9)});
  for (bool sums : {false, true})
    for (bool mask : {false, true}) {
      SCOPED_TRACE(std::string(sums ? "sums" : "gaps") + (mask ? " mask" : " exact"));
      auto f = [sums, mask](const auto& v) {
        return std::get<0>(tx::detail::apply(tx::ops::InversePairs{sums, mask, 0.05}, v));
      };
      tx::testing::expect_ad(f, x);
      const auto F = f(x).to_vector();
      EXPECT_EQ(F[2 + 3 * 4] == T(0), mask && !sums) << "the gap of (0.3, 0.31) is masked";
    }
}

TYPED_TEST(LinalgGradSpectral, EighBatchedAndViews) {
  using T = TypeParam;
  const EighProbes p{}, pu{true};
  auto fe = [](const auto& A) { return la::eigvalsh(herm(A)); };
  auto fe_ad = value_from_plain_call(fe);
  const auto A = eigh_input<T>(4, {3}, 440);
  TENAX_CHECK_GRADS(p.vcv_probe(), A);
  TENAX_CHECK_GRADS(fe_ad, A);
  expect_batch_matches_loop(p.values_probe(), A);
  expect_batch_matches_loop(p.vcv_probe(), A);
  expect_batch_matches_loop(pu.absv_probe(), A);
  expect_batch_matches_loop(fe, A);
  // Views reaching the op directly (no wrapper) and through the wrapper.
  auto raw = [](const auto& H) { return la::eigh(H).first; };
  auto rawu = [](const auto& H) { return la::eigvalsh(H, true); };
  const auto H = herm(A);
  expect_layout_invariant(raw, transposed_view(H));
  expect_layout_invariant(rawu, step_view(H));
  expect_layout_invariant(p.vcv_probe(), transposed_view(A));
  expect_layout_invariant(pu.absv_probe(), step_view(A));
  TENAX_CHECK_GRADS(p.vcv_probe(), step_view(A));
  TENAX_CHECK_GRADS(fe_ad, transposed_view(A));
}

// ---- svd / svdvals -------------------------------------------------------------------------------

TYPED_TEST(LinalgGradSpectral, SvdProbes) {
  using T = TypeParam;
  std::uint64_t seed = 450;
  for (auto [m, n] : kShapes) {
    SCOPED_TRACE(shape_name(m, n));
    const auto A = svd_input<T>(m, n, {}, seed += 2);
    const std::int64_t k = std::min(m, n);
    const auto [U, S, Vh] = la::svd(A);
    EXPECT_EQ(U.shape(), mshape(m, k));
    EXPECT_EQ(Vh.shape(), mshape(k, n));
    expect_close(values(tx::matmul(tx::mul(U, tx::cast<T>(S.reshape({1, k}))), Vh)), values(A), 1e-13,
                 "U diag(S) Vh = A");
    TENAX_CHECK_GRADS(s_probe(false), A);
    TENAX_CHECK_GRADS(s_probe(true), A);
    TENAX_CHECK_GRADS(usv_probe(false), A);
    TENAX_CHECK_GRADS(usv_probe(true), A);
    TENAX_CHECK_GRADS(absu_probe(), A);
    TENAX_CHECK_GRADS(absvh_probe(), A);
  }
}

TYPED_TEST(LinalgGradSpectral, SvdCanonicalGaugeRawUV) {
  using T = TypeParam;
  std::uint64_t seed = 460;
  for (auto [m, n] : kShapes) {
    SCOPED_TRACE(shape_name(m, n));
    const auto A = svd_input<T>(m, n, {}, seed += 2);
    const auto [U, S, Vh] = la::svd(A, false, la::Degeneracy{}, true);
    const std::int64_t k = std::min(m, n);
    expect_close(values(tx::matmul(tx::mul(U, tx::cast<T>(S.reshape({1, k}))), Vh)), values(A), 1e-13,
                 "canonical U diag(S) Vh = A");
    TENAX_CHECK_GRADS(canonical_u(), A);
    TENAX_CHECK_GRADS(canonical_vh(), A);
  }
  const auto Ab = svd_input<T>(5, 3, {3}, 469);
  expect_batch_matches_loop(canonical_u(), Ab);
  expect_batch_matches_loop(canonical_vh(), Ab);
}

TYPED_TEST(LinalgGradSpectral, Svdvals) {
  using T = TypeParam;
  auto f = value_from_plain_call([](const auto& A) { return la::svdvals(A); });
  std::uint64_t seed = 470;
  for (auto [m, n] : kShapes) {
    SCOPED_TRACE(shape_name(m, n));
    const auto A = svd_input<T>(m, n, {}, seed += 2);
    expect_close(values(f(A)), values(std::get<1>(la::svd(A))), 1e-14, "svdvals == svd S");
    TENAX_CHECK_GRADS(f, A);
  }
}

TYPED_TEST(LinalgGradSpectral, SvdvalsValueUnderAD) {
  using T = TypeParam;
  // With AD the singular values come from gesdd with vectors (jobz 'S'), without AD from gesdd
  // with jobz 'N': equal to rounding (not bit for bit; see value_from_plain_call).
  std::uint64_t seed = 475;
  for (auto [m, n] : kShapes)
    expect_value_under_ad_close([](const auto& A) { return la::svdvals(A); }, svd_input<T>(m, n, {}, seed += 2), 1e-14);
}

TYPED_TEST(LinalgGradSpectral, SvdBatchedAndViews) {
  using T = TypeParam;
  auto fs = [](const auto& A) { return la::svdvals(A); };
  std::uint64_t seed = 480;
  for (auto [m, n] : kShapes) {
    SCOPED_TRACE(shape_name(m, n));
    const auto A = svd_input<T>(m, n, {3}, seed += 2);
    TENAX_CHECK_GRADS(usv_probe(false), A);
    expect_batch_matches_loop(s_probe(false), A);
    expect_batch_matches_loop(usv_probe(false), A);
    expect_batch_matches_loop(absu_probe(), A);
    expect_batch_matches_loop(absvh_probe(), A);
    expect_batch_matches_loop(fs, A);
    expect_layout_invariant(usv_probe(false), transposed_view(A));
    expect_layout_invariant(absvh_probe(), step_view(A));
    expect_layout_invariant(fs, step_view(A));
    TENAX_CHECK_GRADS(absu_probe(), transposed_view(A));
  }
}
