// Gradient tests for the factorizations: lu_factor and lu (square, tall, wide), cholesky (lower
// and upper) and qr (reduced / complete / R-only, square / tall / wide, positive_diag). Each case
// runs the full harness (tests/support/gradcheck.hpp): JVP vs central differences, VJP vs JVP
// exactly, second order, float32 vs float64; for float64 and complex128. Plus batched == loop over
// the batch, and non-contiguous views == contiguous copies.
#include <gtest/gtest.h>

#include <complex>
#include <string>
#include <utility>
#include <vector>

#include "linalg/linalg_grad_support.hpp"
#include "support/messages.hpp"

namespace tx = tenax;
namespace la = tenax::linalg;
using tx::Tensor;
using tx::lgtest::expect_batch_matches_loop;
using tx::lgtest::herm;
using tx::lgtest::mshape;
using tx::lgtest::spd_input;
using tx::lgtest::step_view;
using tx::lgtest::transposed_view;
using tx::testing::expect_close;
using tx::testing::expect_layout_invariant;
using tx::testing::values;

namespace {

template <class T>
class LinalgGradFactor : public ::testing::Test {};
TYPED_TEST_SUITE(LinalgGradFactor, tx::lgtest::Types);

const std::vector<std::pair<std::int64_t, std::int64_t>> kShapes = {{4, 4}, {6, 4}, {4, 6}};

std::string shape_name(std::int64_t m, std::int64_t n) { return std::to_string(m) + "x" + std::to_string(n); }

// Random entries plus 3 on the leading diagonal, rows reversed: partial pivoting has to undo the
// reversal (non-trivial pivots), each pivot is well separated from the other candidates of its
// column, and U is well conditioned.
template <class T>
Tensor<T> lu_input(std::int64_t m, std::int64_t n, const tx::Shape& batch, std::uint64_t seed) {
  const auto A = tx::add(Tensor<T>::randn(mshape(m, n, batch), seed), tx::mul(Tensor<T>::eye(m, n), T(3)));
  std::vector<T> J(static_cast<std::size_t>(m * m), T(0));
  for (std::int64_t i = 0; i < m; ++i) J[static_cast<std::size_t>(i + (m - 1 - i) * m)] = T(1);
  return tx::matmul(Tensor<T>::from_col_major({m, m}, J), A);
}

// Full-rank input for QR: random plus 2 on the leading diagonal (the leading m x m block is
// nonsingular in the wide case, and no reflector pivot Re(alpha_i) is near zero).
template <class T>
Tensor<T> qr_input(std::int64_t m, std::int64_t n, const tx::Shape& batch, std::uint64_t seed) {
  return tx::add(Tensor<T>::randn(mshape(m, n, batch), seed), tx::mul(Tensor<T>::eye(m, n), T(2)));
}

}  // namespace

// ---- lu_factor / lu ------------------------------------------------------------------------------

TYPED_TEST(LinalgGradFactor, LuFactorSquareTallWide) {
  using T = TypeParam;
  auto f = [](const auto& A) { return la::lu_factor(A).first; };
  std::uint64_t seed = 300;
  for (auto [m, n] : kShapes) {
    SCOPED_TRACE(shape_name(m, n));
    const auto A = lu_input<T>(m, n, {}, ++seed);
    const auto [LU, piv] = la::lu_factor(A);
    bool swapped = false;
    for (std::int64_t i = 0; i < piv.numel(); ++i) swapped = swapped || piv.to_vector()[i] != i + 1;
    EXPECT_TRUE(swapped) << "the input should need row interchanges";
    TENAX_CHECK_GRADS(f, A);
  }
}

TYPED_TEST(LinalgGradFactor, LuLAndU) {
  using T = TypeParam;
  auto fL = [](const auto& A) { return std::get<1>(la::lu(A)); };
  auto fU = [](const auto& A) { return std::get<2>(la::lu(A)); };
  auto fLU = [](const auto& A) {
    const auto f = la::lu(A);
    return tx::matmul(std::get<1>(f), std::get<2>(f));
  };
  std::uint64_t seed = 310;
  for (auto [m, n] : kShapes) {
    SCOPED_TRACE(shape_name(m, n));
    const auto A = lu_input<T>(m, n, {}, ++seed);
    const auto [P, L, U] = la::lu(A);
    expect_close(values(tx::matmul(P, tx::matmul(L, U))), values(A), 1e-14, "P L U = A");
    TENAX_CHECK_GRADS(fL, A);
    TENAX_CHECK_GRADS(fU, A);
    // Both cotangents at once (L U = P^T A), and P carries no gradient.
    TENAX_CHECK_GRADS(fLU, A);
    const auto [Pg, Lg, Ug] = la::lu(A.requires_grad());
    EXPECT_FALSE(Pg.tracks_grad());
    EXPECT_TRUE(Lg.tracks_grad());
    EXPECT_TRUE(Ug.tracks_grad());
    EXPECT_EQ(Pg.to_vector(), P.to_vector());
  }
}

TYPED_TEST(LinalgGradFactor, LuBatchedAndViews) {
  using T = TypeParam;
  auto f = [](const auto& A) { return la::lu_factor(A).first; };
  auto fL = [](const auto& A) { return std::get<1>(la::lu(A)); };
  auto fU = [](const auto& A) { return std::get<2>(la::lu(A)); };
  std::uint64_t seed = 320;
  for (auto [m, n] : kShapes) {
    SCOPED_TRACE(shape_name(m, n));
    const auto A = lu_input<T>(m, n, {3}, ++seed);
    TENAX_CHECK_GRADS(f, A);
    expect_batch_matches_loop(f, A);
    expect_batch_matches_loop(fL, A);
    expect_batch_matches_loop(fU, A);
    expect_layout_invariant(f, transposed_view(A));
    expect_layout_invariant(f, step_view(A));
    TENAX_CHECK_GRADS(fL, step_view(A));
  }
}

// The LU rules' row interchanges as one op (ops/linalg/permute_rows.hpp, PivotRows): P^T x and
// P x for the pivots of square, tall and wide factorizations, x with other columns, a batch of two
// and a strided view. Values against the permutation ops they replace, bit for bit (one the
// other's inverse), and the rules by the full harness.
TYPED_TEST(LinalgGradFactor, PivotRowsRules) {
  using T = TypeParam;
  std::uint64_t seed = 330;
  for (auto [m, n] : kShapes) {
    SCOPED_TRACE(shape_name(m, n));
    const auto piv = la::lu_factor(lu_input<T>(m, n, {2}, ++seed)).second;
    const auto X = transposed_view(Tensor<T>::randn(mshape(m, 3, {2}), ++seed));  // m x 3 x 2, strided
    const auto perm = tx::detail::pivots_to_permutation(piv, m);
    const auto PtX = tx::detail::pivot_rows(X, piv), PX = tx::detail::pivot_rows(X, piv, true);
    EXPECT_EQ(PtX.to_vector(), tx::detail::permute_rows(X, perm).to_vector());
    EXPECT_EQ(PX.to_vector(), tx::detail::permute_rows(X, tx::detail::inverse_permutation(perm)).to_vector());
    EXPECT_EQ(tx::detail::pivot_rows(PtX, piv, true).to_vector(), tx::contiguous(X).to_vector());
    for (bool inverse : {false, true}) {
      SCOPED_TRACE(inverse ? "P x" : "P^T x");
      tx::testing::expect_ad([&piv, inverse](const auto& x) { return tx::detail::pivot_rows(x, piv, inverse); }, X);
    }
  }
  // Pivots that do not fit the rows: an error naming the op and both shapes.
  const auto piv = la::lu_factor(lu_input<T>(4, 4, {}, 339)).second;
  const std::string e = tx::testing::error_of([&] { tx::detail::pivot_rows(Tensor<T>::randn({3, 2}, 1), piv); });
  EXPECT_NE(e.find("pivot_rows"), std::string::npos) << e;
  EXPECT_NE(e.find("[4]"), std::string::npos) << e;
}

// The small-matrix kernels of the square LU tangents and cotangent (ops/linalg/lu_tangent.hpp)
// against the rule's tensor ops (the unit lower and upper triangles of one packed LU, and of
// separate L and U), for every order they serve and a batch; and lu's first-order JVP, which takes
// the kernel, against the JVP under recording (the tensor ops).
TYPED_TEST(LinalgGradFactor, LuTangentKernelMatchesTheRuleOps) {
  using T = TypeParam;
  std::uint64_t seed = 340;
  for (std::int64_t n : {1, 2, 3, 5, 8, 16}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto LU = la::lu_factor(lu_input<T>(n, n, {3}, ++seed)).first;
    const auto X = Tensor<T>::randn(mshape(n, n, {3}), ++seed);
    const auto C = la::solve_triangular(LU, la::solve_triangular(LU, X, true, false), false, true, true);
    const auto want_dL = la::triangular_matmul(LU, tx::tril(C, -1), false, true, true);
    const auto want_dU = la::triangular_matmul(LU, tx::triu(C), true, false);
    const auto [dL, dU] = tx::detail::lu_tangent_small(LU, LU, X);
    expect_close(values(dL), values(want_dL), 1e-12, "dL, packed");
    expect_close(values(dU), values(want_dU), 1e-12, "dU, packed");
    const auto [P, L, U] = la::lu(lu_input<T>(n, n, {3}, seed));
    const auto [dL2, dU2] = tx::detail::lu_tangent_small(L, U, X);
    const auto C2 = la::solve_triangular(L, la::solve_triangular(U, X, true, false), false, true, true);
    expect_close(values(dL2), values(la::triangular_matmul(L, tx::tril(C2, -1), false, true, true)), 1e-12, "dL");
    expect_close(values(dU2), values(la::triangular_matmul(U, tx::triu(C2), true, false)), 1e-12, "dU");
    // The cotangent: L^-H (tril(L^H gL, -1) + triu(gU U^H)) U^-H, packed and unpacked.
    const auto gL = Tensor<T>::randn(mshape(n, n, {3}), ++seed), gU = Tensor<T>::randn(mshape(n, n, {3}), ++seed);
    const auto C_ = tx::linalg::Trans::C;
    auto rule_ops = [&](const Tensor<T>& l, const Tensor<T>& u) {
      const auto M = tx::add(tx::tril(la::triangular_matmul(l, gL, false, true, true, C_), -1),
                             tx::triu(la::triangular_matmul(u, gU, true, false, false, C_)));
      return la::solve_triangular(l, la::solve_triangular(u, M, true, false, false, C_), false, true, true, C_);
    };
    expect_close(values(tx::detail::lu_cotangent_small(LU, LU, gL, gU)), values(rule_ops(LU, LU)), 1e-12,
                 "cotangent, packed");
    expect_close(values(tx::detail::lu_cotangent_small(L, U, gL, gU)), values(rule_ops(L, U)), 1e-12, "cotangent");
    // Operands of any layout (read in place): a transposed X and gU, a broadcast gL.
    if (n == 1) continue;  // (a 1 x 1 matrix has no other layout)
    const auto Xt = transposed_view(X), gUt = transposed_view(gU);
    const auto gLb = tx::expand(Tensor<T>::randn({1, 1, 1}, ++seed), mshape(n, n, {3}));
    const auto [dLt, dUt] = tx::detail::lu_tangent_small(LU, LU, Xt);
    EXPECT_EQ(dLt.to_vector(), dL.to_vector());
    EXPECT_EQ(dUt.to_vector(), dU.to_vector());
    expect_close(values(tx::detail::lu_cotangent_small(LU, LU, gLb, gUt)),
                 values(tx::detail::lu_cotangent_small(LU, LU, tx::contiguous(gLb), gU)), 0, "strided operands");
  }
  // lu's JVP: the kernel (nothing recorded) against the tensor ops (the input tracked).
  const auto A = lu_input<T>(4, 4, {2}, 349), dA = Tensor<T>::randn(mshape(4, 4, {2}), 350);
  auto f = [](const auto& a) {
    const auto r = la::lu(a);
    return std::pair{std::get<1>(r), std::get<2>(r)};
  };
  const auto [y, t] = tx::jvp(f, A, dA);
  const auto [yr, tr] = tx::jvp(f, A.requires_grad(), dA);
  expect_close(values(t.first), values(tr.first), 1e-13, "dL: kernel vs tensor ops");
  expect_close(values(t.second), values(tr.second), 1e-13, "dU: kernel vs tensor ops");
  // Bad input: an error naming the op and the shapes.
  const std::string e =
      tx::testing::error_of([&] { tx::detail::lu_tangent_small(A, A, Tensor<T>::randn(mshape(4, 3, {2}), 1)); });
  EXPECT_NE(e.find("lu_tangent"), std::string::npos) << e;
  EXPECT_NE(e.find("[4, 3, 2]"), std::string::npos) << e;
}

// ---- cholesky ------------------------------------------------------------------------------------
// PyTorch's convention: tangents are taken as Hermitian and the gradient is Hermitian, so the op
// is tested through the wrapper cholesky(A + A^H) with A + A^H = B B^H + n I.

TYPED_TEST(LinalgGradFactor, CholeskyLowerUpper) {
  using T = TypeParam;
  auto fl = [](const auto& A) { return la::cholesky(herm(A)); };
  auto fu = [](const auto& A) { return la::cholesky(herm(A), /*upper=*/true); };
  for (std::int64_t n : {3, 5}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto A = spd_input<T>(n, {}, 330 + static_cast<std::uint64_t>(n));
    const auto L = fl(A), U = fu(A);
    expect_close(values(tx::matmul(L, L.mH())), values(herm(A)), 1e-14, "L L^H = A + A^H");
    expect_close(values(tx::matmul(U.mH(), U)), values(herm(A)), 1e-14, "U^H U = A + A^H");
    expect_close(values(U), values(L.mH()), 1e-14, "U = L^H");
    TENAX_CHECK_GRADS(fl, A);
    TENAX_CHECK_GRADS(fu, A);
  }
}

TYPED_TEST(LinalgGradFactor, CholeskyBatchedAndViews) {
  using T = TypeParam;
  auto fl = [](const auto& A) { return la::cholesky(herm(A)); };
  auto fu = [](const auto& A) { return la::cholesky(herm(A), true); };
  const auto A = spd_input<T>(4, {3}, 340);
  TENAX_CHECK_GRADS(fl, A);
  TENAX_CHECK_GRADS(fu, A);
  expect_batch_matches_loop(fl, A);
  expect_batch_matches_loop(fu, A);
  // Views reach the op directly (no wrapper): a transposed view and a step-2 slice of an SPD
  // matrix, against contiguous copies.
  auto raw = [](const auto& S) { return la::cholesky(S); };
  auto rawu = [](const auto& S) { return la::cholesky(S, true); };
  const auto S = herm(A);
  expect_layout_invariant(raw, transposed_view(S));
  expect_layout_invariant(rawu, step_view(S));
  expect_layout_invariant(fl, transposed_view(A));
  TENAX_CHECK_GRADS(fu, step_view(A));
}

// ---- qr ------------------------------------------------------------------------------------------
// Raw Q and R are valid probes (the sign pattern of R's diagonal is locally constant away from
// tiny reflector pivots; docs/MATH.md section 8.6).

// The Hermitian folds of the QR rules as an op of their own (ops/linalg/triangle_fold.hpp): fold
// and fill of each triangle, a batch of two; each one's VJP is the other's JVP (the harness checks
// the VJP against the JVP exactly), and the values against their definitions.
TYPED_TEST(LinalgGradFactor, TriangleFoldRules) {
  using T = TypeParam;
  const auto X = Tensor<T>::randn({3, 3, 2}, 512);
  for (bool fold : {false, true})
    for (bool upper : {false, true}) {
      SCOPED_TRACE(std::string(fold ? "fold" : "fill") + (upper ? " upper" : " lower"));
      auto f = [fold, upper](const auto& x) { return tx::detail::triangle_fold(x, fold, upper); };
      tx::testing::expect_ad(f, X);
      const auto sym = tx::add(X, X.mH()), part = upper ? tx::triu(X, 1) : tx::tril(X, -1);
      const auto diag = tx::diag_embed(tx::cast<T>(tx::real(tx::diagonal(X))));
      const auto want =
          fold ? tx::add(upper ? tx::triu(sym, 1) : tx::tril(sym, -1), diag) : tx::add(tx::add(part, part.mH()), diag);
      expect_close(values(f(X)), values(want), 1e-15, "values");
    }
}

TYPED_TEST(LinalgGradFactor, QrReduced) {
  using T = TypeParam;
  auto fQ = [](const auto& A) { return la::qr(A).first; };
  auto fR = [](const auto& A) { return la::qr(A).second; };
  // Both outputs at once (both cotangents defined in the same backward pass).
  auto fQR = [](const auto& A) {
    auto [Q, R] = la::qr(A);
    return tx::concat(std::vector{tx::flatten(Q), tx::flatten(R)}, 0);
  };
  std::uint64_t seed = 350;
  for (auto [m, n] : kShapes) {
    SCOPED_TRACE(shape_name(m, n));
    const auto A = qr_input<T>(m, n, {}, ++seed);
    const auto [Q, R] = la::qr(A);
    const std::int64_t k = std::min(m, n);
    EXPECT_EQ(Q.shape(), mshape(m, k));
    EXPECT_EQ(R.shape(), mshape(k, n));
    expect_close(values(tx::matmul(Q, R)), values(A), 1e-14, "Q R = A");
    TENAX_CHECK_GRADS(fQ, A);
    TENAX_CHECK_GRADS(fR, A);
    TENAX_CHECK_GRADS(fQR, A);
  }
}

// The QR rules' cores for small matrices (ops/linalg/qr_small.hpp): each kernel against its
// composite (the rule's tensor ops) for square and tall shapes up to 16 and a batch, strided
// operands bit-equal to dense ones, the composite where the result is differentiated again, shapes
// the kernels do not take, and errors naming the op. QrReduced runs them inside the rules.
TYPED_TEST(LinalgGradFactor, QrRuleKernels) {
  using T = TypeParam;
  namespace d = tx::detail;
  std::uint64_t seed = 380;
  for (const auto& [m, n] :
       std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 1}, {2, 2}, {5, 3}, {4, 4}, {16, 16}}) {
    SCOPED_TRACE(std::to_string(m) + " x " + std::to_string(n));
    const auto A = qr_input<T>(m, n, {3}, ++seed);
    const auto [Q, R] = la::qr(A);
    const auto dA = Tensor<T>::randn(mshape(m, n, {3}), ++seed), gQ = Tensor<T>::randn(mshape(m, n, {3}), ++seed),
               gR = Tensor<T>::randn(mshape(n, n, {3}), ++seed);
    const auto [dQ, dR] = d::qr_tangent_small(Q, R, dA);
    const auto [cQ, cR] = tx::ops::QrTangentSmall::composite(Q, R, dA);
    expect_close(values(dQ), values(cQ), 1e-12, "dQ");
    expect_close(values(dR), values(cR), 1e-12, "dR");
    const auto gA = d::qr_cotangent_small(Q, R, gQ, gR);
    expect_close(values(gA), values(tx::ops::QrCotangentSmall::composite(Q, R, gQ, gR)), 1e-12, "gA");
    if (n > 1) {
      EXPECT_EQ(std::get<0>(d::qr_tangent_small(Q, R, transposed_view(transposed_view(dA).contiguous()))).to_vector(),
                dQ.to_vector());
      EXPECT_EQ(d::qr_cotangent_small(Q, transposed_view(transposed_view(R).contiguous()), gQ, gR).to_vector(),
                gA.to_vector());
    }
  }
  // Differentiated again: the composite, which records (the kernels have no rules).
  const auto A = qr_input<T>(3, 2, {}, 390);
  const auto [Q, R] = la::qr(A);
  const auto Qg = Q.requires_grad();
  EXPECT_TRUE(std::get<0>(d::qr_tangent_small(Qg, R, Tensor<T>::randn({3, 2}, 391))).tracks_grad());
  EXPECT_TRUE(d::qr_cotangent_small(Qg, R, Tensor<T>::randn({3, 2}, 392), Tensor<T>::randn({2, 2}, 393)).tracks_grad());
  // Wide (m < n) and undefined cotangents: not taken, for the rule's tensor ops.
  const auto W = qr_input<T>(2, 3, {}, 394);
  const auto [Qw, Rw] = la::qr(W);
  EXPECT_FALSE(std::get<0>(d::qr_tangent_small(Qw, Rw, Tensor<T>::randn({2, 3}, 395))).defined());
  EXPECT_FALSE(d::qr_cotangent_small(Q, R, Tensor<T>::randn({3, 2}, 396), Tensor<T>()).defined());
  const std::string e = tx::testing::error_of([] {
    tx::ops::QrTangentSmall{}.forward(Tensor<T>::randn({3, 2}, 1), Tensor<T>::randn({2, 2}, 1),
                                      Tensor<T>::randn({3, 3}, 1));
  });
  EXPECT_NE(e.find("qr_tangent"), std::string::npos) << e;
  EXPECT_NE(e.find("[3, 3]"), std::string::npos) << e;
}

TYPED_TEST(LinalgGradFactor, QrComplete) {
  using T = TypeParam;
  auto fQ = [](const auto& A) { return la::qr(A, la::QrMode::Complete).first; };
  auto fR = [](const auto& A) { return la::qr(A, la::QrMode::Complete).second; };
  std::uint64_t seed = 360;
  for (auto [m, n] : {std::pair<std::int64_t, std::int64_t>{4, 4}, {4, 6}}) {
    SCOPED_TRACE(shape_name(m, n));
    const auto A = qr_input<T>(m, n, {}, ++seed);
    const auto [Q, R] = la::qr(A, la::QrMode::Complete);
    EXPECT_EQ(Q.shape(), mshape(m, m));
    EXPECT_EQ(R.shape(), mshape(m, n));
    TENAX_CHECK_GRADS(fQ, A);
    TENAX_CHECK_GRADS(fR, A);
  }
  // Complete mode with m > n is documented as not differentiable, and says so.
  const auto A = qr_input<T>(6, 4, {}, 369);
  EXPECT_EQ(la::qr(A, la::QrMode::Complete).first.shape(), mshape(6, 6));
  auto loss = [](const Tensor<T>& A) { return tx::sum(tx::real(la::qr(A, la::QrMode::Complete).second)); };
  EXPECT_TENAX_ERROR(tx::grad(loss, A), "qr");
}

TYPED_TEST(LinalgGradFactor, QrRMode) {
  using T = TypeParam;
  auto fR = [](const auto& A) { return la::qr(A, la::QrMode::R).second; };
  auto fRp = [](const auto& A) { return la::qr(A, la::QrMode::R, true).second; };
  std::uint64_t seed = 370;
  for (auto [m, n] : kShapes) {
    SCOPED_TRACE(shape_name(m, n));
    const auto A = qr_input<T>(m, n, {}, ++seed);
    const auto [Q, R] = la::qr(A, la::QrMode::R);
    EXPECT_FALSE(Q.defined());
    expect_close(values(R), values(la::qr(A).second), 0, "R mode R == reduced R");
    TENAX_CHECK_GRADS(fR, A);
    TENAX_CHECK_GRADS(fRp, A);
  }
}

TYPED_TEST(LinalgGradFactor, QrPositiveDiag) {
  using T = TypeParam;
  auto fQ = [](const auto& A) { return la::qr(A, la::QrMode::Reduced, true).first; };
  auto fR = [](const auto& A) { return la::qr(A, la::QrMode::Reduced, true).second; };
  auto fQc = [](const auto& A) { return la::qr(A, la::QrMode::Complete, true).first; };
  std::uint64_t seed = 380;
  for (auto [m, n] : kShapes) {
    SCOPED_TRACE(shape_name(m, n));
    const auto A = qr_input<T>(m, n, {}, ++seed);
    const auto [Q, R] = la::qr(A, la::QrMode::Reduced, true);
    const auto [Q0, R0] = la::qr(A);
    bool flipped = false;
    for (std::int64_t i = 0; i < std::min(m, n); ++i) {
      EXPECT_GE(std::real(R.at({i, i})), 0);
      flipped = flipped || std::real(R0.at({i, i})) < 0;
    }
    EXPECT_TRUE(flipped) << "the input should exercise the sign normalisation";
    expect_close(values(tx::matmul(Q, R)), values(A), 1e-14, "Q R = A");
    TENAX_CHECK_GRADS(fQ, A);
    TENAX_CHECK_GRADS(fR, A);
    if (m <= n) TENAX_CHECK_GRADS(fQc, A);
  }
}

TYPED_TEST(LinalgGradFactor, QrBatchedAndViews) {
  using T = TypeParam;
  auto fQ = [](const auto& A) { return la::qr(A).first; };
  auto fR = [](const auto& A) { return la::qr(A).second; };
  std::uint64_t seed = 390;
  for (auto [m, n] : kShapes) {
    SCOPED_TRACE(shape_name(m, n));
    const auto A = qr_input<T>(m, n, {3}, ++seed);
    TENAX_CHECK_GRADS(fQ, A);
    expect_batch_matches_loop(fQ, A);
    expect_batch_matches_loop(fR, A);
    expect_layout_invariant(fQ, transposed_view(A));
    expect_layout_invariant(fR, step_view(A));
    TENAX_CHECK_GRADS(fR, transposed_view(A));
  }
}
