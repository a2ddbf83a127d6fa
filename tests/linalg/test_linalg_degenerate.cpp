// Degenerate spectra (docs/MATH.md sections 5-6, spectral.hpp's Degeneracy policy): eigh and svd of
// matrices with repeated eigen/singular values. Values are exact; gradients of gauge-invariant losses
// (eigenvalues, V diag(c) V^H and U diag(c) V^H with c equal on the degenerate pair) are finite and
// equal the analytic value under the default Mask policy; a loss that depends on the basis inside a
// degenerate subspace throws under the default on_gauge = Throw, warns or passes with Warn/Ignore;
// Exact gives inf/NaN, Lorentzian a finite gradient. The complex phase gauge: a phase-dependent loss
// throws unless canonical_gauge is set, and then matches finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "linalg/linalg_check_support.hpp"
#include "support/expect.hpp"
#include "support/messages.hpp"

namespace tx = tenax;
namespace la = tenax::linalg;
using tx::is_complex_v;
using tx::real_t;
using tx::Shape;
using tx::Tensor;
using tx::testing::expect_close;
using Policy = tenax::linalg::Degeneracy;
using namespace tenax::lcheck;

namespace {

template <class T>
class Degenerate : public ::testing::Test {};
using DegTypes = ::testing::Types<double, std::complex<double>>;
TYPED_TEST_SUITE(Degenerate, DegTypes);

// Re <X, Y> = Re sum conj(X) Y, as a double.
template <class T>
double dot(const Tensor<T>& x, const Tensor<T>& y) {
  return static_cast<double>(sum(real(mul(conj(x), y))).item());
}

// Central difference of the scalar loss L along D against the gradient's Re <g, D>.
template <class T, class L>
void expect_fd(L loss, const Tensor<T>& A, const Tensor<T>& g, const Tensor<T>& D, const std::string& what) {
  const double h = 1e-6 * std::max(1.0, static_cast<double>(max(abs(A)).item()));
  const double fd = (static_cast<double>(loss(add(A, mul(D, T(h)))).item()) -
                     static_cast<double>(loss(sub(A, mul(D, T(h)))).item())) /
                    (2 * h);
  const double an = dot(g, D);
  EXPECT_LE(std::abs(fd - an), 1e-6 * std::max(std::abs(fd), std::abs(an)))
      << what << ": finite difference " << fd << " vs gradient " << an;
}

// A random Hermitian direction.
template <class T>
Tensor<T> herm_dir(std::int64_t n, std::uint64_t seed) {
  return hermitize(Tensor<T>::randn({n, n}, seed));
}

template <class T>
Tensor<T> row(const std::vector<double>& c) {
  std::vector<T> v(c.begin(), c.end());
  return Tensor<T>::from_col_major({1, static_cast<std::int64_t>(c.size())}, v);
}

// The generator's unitary factor of hermitian<T>(lambda, seed) (same seed), rounded to T.
template <class T>
Tensor<T> haar_t(std::int64_t n, std::uint64_t seed) {
  return round_to<T>(haar<gen_t<T>>(n, seed));
}

using tx::testing::error_of;
using tx::testing::has;

const std::vector<double> kRepeated{1.0, 2.0, 2.0, 4.0};  // eigenvalues with a repeated pair
const std::vector<double> kCoef{0.3, -1.1, -1.1, 2.0};    // equal on the pair

}  // namespace

// ---- eigh ----------------------------------------------------------------------------------------
TYPED_TEST(Degenerate, EighIdentityEigenvalueGradients) {
  using T = TypeParam;
  using R = real_t<T>;
  const std::int64_t n = 4;
  const Tensor<T> I = Tensor<T>::eye(n);
  auto [w, V] = la::eigh(I);
  for (R v : w.to_vector()) EXPECT_EQ(v, R(1));
  // d tr(A) = I, through eigh and eigvalsh.
  const Tensor<T> g1 = tx::grad([](const Tensor<T>& a) { return sum(la::eigh(a).first); }, I);
  const Tensor<T> g2 = tx::grad([](const Tensor<T>& a) { return sum(la::eigvalsh(a)); }, I);
  EXPECT_TRUE(all_finite(g1));
  expect_close(g1, I, 1e-14, "grad of sum(eigh(I).values)");
  expect_close(g2, I, 1e-14, "grad of sum(eigvalsh(I))");
}

TYPED_TEST(Degenerate, EighRepeatedEigenvalueGradients) {
  using T = TypeParam;
  using R = real_t<T>;
  const std::int64_t n = 4;
  const Tensor<T> A = hermitian<T>(kRepeated, 31);
  const Tensor<T> U = haar_t<T>(n, 31);
  auto [w, V] = la::eigh(A);
  const auto wv = w.to_vector();
  for (int i = 0; i < n; ++i) EXPECT_NEAR(wv[i], kRepeated[i], 1e-14 * 4 * n) << "eigenvalue " << i;
  // sum of eigenvalues: gradient I; eigenvalues weighted by c (equal on the pair): U diag(c) U^H.
  const Tensor<T> I = Tensor<T>::eye(n);
  expect_close(tx::grad([](const Tensor<T>& a) { return sum(la::eigh(a).first); }, A), I, 1e-13, "sum(eigenvalues)");
  const Tensor<R> c = Tensor<R>::from_col_major({n}, {R(kCoef[0]), R(kCoef[1]), R(kCoef[2]), R(kCoef[3])});
  const Tensor<T> want = matmul(mul(U, row<T>(kCoef)), U.mH());
  expect_close(tx::grad([&](const Tensor<T>& a) { return sum(mul(la::eigh(a).first, c)); }, A), want, 1e-13,
               "c . eigenvalues");
  expect_close(tx::grad([&](const Tensor<T>& a) { return sum(mul(la::eigvalsh(a), c)); }, A), want, 1e-13,
               "c . eigvalsh");
}

TYPED_TEST(Degenerate, EighInvariantProbeMatchesAnalytic) {
  using T = TypeParam;
  const std::int64_t n = 4;
  const Tensor<T> A = hermitian<T>(kRepeated, 32);
  const Tensor<T> U = haar_t<T>(n, 32);
  const Tensor<T> W = Tensor<T>::randn({n, n}, 33);
  // L = Re <W, V diag(c) V^H>: a spectral function, smooth while the pair stays apart from the rest.
  const auto loss = [&](const Tensor<T>& a) {
    const Tensor<T> V = la::eigh(a).second;
    return re_inner(W, matmul(mul(V, row<T>(kCoef)), V.mH()));
  };
  const Tensor<T> g = tx::grad(loss, A);
  ASSERT_TRUE(all_finite(g));
  // Daleckii-Krein: gA = U (G o herm(U^H W U)) U^H, G_ij = (c_i - c_j)/(l_i - l_j), 0 for l_i = l_j.
  std::vector<T> G(n * n, T(0));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (kRepeated[i] != kRepeated[j]) G[i + j * n] = T((kCoef[i] - kCoef[j]) / (kRepeated[i] - kRepeated[j]));
  const Tensor<T> M = matmul(U.mH(), matmul(W, U));
  const Tensor<T> H = mul(add(M, M.mH()), T(0.5));
  const Tensor<T> want = matmul(U, matmul(mul(Tensor<T>::from_col_major({n, n}, G), H), U.mH()));
  expect_close(g, want, 1e-10, "V diag(c) V^H against Daleckii-Krein");
  for (std::uint64_t s : {34, 35}) expect_fd(loss, A, g, herm_dir<T>(n, s), "V diag(c) V^H");
  // The same in a batch of two (the second element non-degenerate).
  const Tensor<T> A2 = tx::stack<T>({A, hermitian<T>({-1.0, 0.5, 2.0, 3.0}, 36)}, 2);
  const Tensor<T> W2 = tx::stack<T>({W, W}, 2);
  const Tensor<T> gb = tx::grad(
      [&](const Tensor<T>& a) {
        const Tensor<T> V = la::eigh(a).second;
        return re_inner(W2, matmul(mul(V, row<T>(kCoef)), V.mH()));
      },
      A2);
  expect_close(contiguous(slice(gb, 2, 0, 1).squeeze(2)), want, 1e-10, "batched, element 0");
}

TYPED_TEST(Degenerate, EighGaugeDependentLoss) {
  using T = TypeParam;
  using R = real_t<T>;
  const std::int64_t n = 4;
  const Tensor<T> A = hermitian<T>(kRepeated, 37);
  const Tensor<R> Wr = Tensor<R>::randn({n, n}, 38);
  // Re <W, |V|^2>: phase-invariant, but not invariant under rotations inside the repeated pair.
  const auto loss = [&](Policy pol) {
    return [&, pol](const Tensor<T>& a) {
      const Tensor<T> V = la::eigh(a, false, pol).second;
      return sum(mul(Wr, real(mul(conj(V), V))));
    };
  };
  const std::string msg = error_of([&] { tx::grad(loss(Policy{}), A); });
  EXPECT_TRUE(msg.rfind("[eigh]", 0) == 0) << "the default policy must throw naming the op, got: '" << msg << "'";
  EXPECT_TRUE(has(msg, "degenerate")) << msg;

  Policy ignore;
  ignore.on_gauge = Policy::OnGauge::Ignore;
  Tensor<T> g;
  EXPECT_NO_THROW(g = tx::grad(loss(ignore), A));
  EXPECT_TRUE(all_finite(g));

  Policy warn;
  warn.on_gauge = Policy::OnGauge::Warn;
  ::testing::internal::CaptureStderr();
  Tensor<T> gw;
  EXPECT_NO_THROW(gw = tx::grad(loss(warn), A));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(has(err, "tenax warning") && has(err, "[eigh]")) << "stderr: " << err;
  EXPECT_EQ(gw.to_vector(), g.to_vector());

  // Lorentzian broadening: finite, no gauge check for the pair.
  Policy lor;
  lor.mode = Policy::Mode::Lorentzian;
  Tensor<T> gl;
  EXPECT_NO_THROW(gl = tx::grad(loss(lor), A));
  EXPECT_TRUE(all_finite(gl));

  // Exact on exactly repeated eigenvalues (a diagonal matrix): 1/0 in the rule, so inf/NaN.
  Policy exact;
  exact.mode = Policy::Mode::Exact;
  const Tensor<T> D = diag_embed(Tensor<T>::from_col_major({n}, {T(1), T(2), T(2), T(4)}));
  const Tensor<R> wd = la::eigvalsh(D);
  ASSERT_EQ(wd.to_vector()[1], wd.to_vector()[2]);
  Tensor<T> ge;
  EXPECT_NO_THROW(ge = tx::grad(loss(exact), D));
  EXPECT_FALSE(all_finite(ge)) << "Exact policy on a repeated eigenvalue gave a finite gradient";
}

TYPED_TEST(Degenerate, EighPoliciesAgreeAwayFromDegeneracy) {
  using T = TypeParam;
  using R = real_t<T>;
  const std::int64_t n = 4;
  const Tensor<T> A = hermitian<T>({-1.0, 0.5, 2.0, 3.5}, 39);
  const Tensor<R> Wr = Tensor<R>::randn({n, n}, 40);
  const auto grad_with = [&](Policy pol) {
    return tx::grad(
        [&](const Tensor<T>& a) {
          const Tensor<T> V = la::eigh(a, false, pol).second;
          return sum(mul(Wr, real(mul(conj(V), V))));
        },
        A);
  };
  Policy exact, lor;
  exact.mode = Policy::Mode::Exact;
  lor.mode = Policy::Mode::Lorentzian;
  const Tensor<T> g = grad_with(Policy{});
  expect_close(grad_with(exact), g, 1e-14, "Exact vs Mask");
  expect_close(grad_with(lor), g, 1e-9, "Lorentzian vs Mask");  // epsilon / gap^2 ~ 1e-12
  expect_fd(
      [&](const Tensor<T>& a) {
        const Tensor<T> V = la::eigh(a).second;
        return sum(mul(Wr, real(mul(conj(V), V))));
      },
      A, g, herm_dir<T>(n, 41), "|V|^2 probe");
}

TYPED_TEST(Degenerate, EighPhaseGauge) {
  using T = TypeParam;
  const std::int64_t n = 4;
  const Tensor<T> A = hermitian<T>({-1.0, 0.5, 2.0, 3.5}, 42);
  const Tensor<T> W = Tensor<T>::randn({n, n}, 43);
  // Re <W, V> depends on each column's phase (complex) or sign (real, locally constant).
  const auto loss = [&](bool canonical) {
    return [&, canonical](const Tensor<T>& a) { return re_inner(W, la::eigh(a, false, {}, canonical).second); };
  };
  if constexpr (is_complex_v<T>) {
    const std::string msg = error_of([&] { tx::grad(loss(false), A); });
    EXPECT_TRUE(msg.rfind("[eigh]", 0) == 0 && has(msg, "phases")) << "got: '" << msg << "'";
  }
  Tensor<T> g;
  ASSERT_NO_THROW(g = tx::grad(loss(true), A));
  for (std::uint64_t s : {44, 45}) expect_fd(loss(true), A, g, herm_dir<T>(n, s), "canonical gauge");
  // The canonical vectors: first largest-magnitude entry of each column real and positive.
  const Tensor<T> V = la::eigh(A, false, {}, true).second;
  for (int j = 0; j < n; ++j) {
    int k = 0;
    for (int i = 1; i < n; ++i)
      if (std::abs(V.at({i, j})) > std::abs(V.at({k, j}))) k = i;
    EXPECT_GT(std::real(V.at({k, j})), 0);
    EXPECT_EQ(std::imag(std::complex<double>(V.at({k, j}))), 0);
  }
}

// ---- SVD -----------------------------------------------------------------------------------------
namespace {

// The analytic gradient of Re <W, U diag(c) V^H> for square A = U0 diag(s) V0^H:
//   gA = U0 [ (G- o (M + M^H) + G+ o (M - M^H)) / 2 ] V0^H,  M = U0^H W V0,
//   G-_jk = (c_j - c_k)/(s_j - s_k) (0 for s_j = s_k, the derivative of a piecewise-constant c),
//   G+_jk = (c_j + c_k)/(s_j + s_k).
template <class T>
Tensor<T> usv_probe_grad(const Tensor<T>& U0, const Tensor<T>& V0, const std::vector<double>& s,
                         const std::vector<double>& c, const Tensor<T>& W) {
  const auto n = static_cast<std::int64_t>(s.size());
  std::vector<T> gm(n * n, T(0)), gp(n * n, T(0));
  for (int j = 0; j < n; ++j)
    for (int k = 0; k < n; ++k) {
      if (s[j] != s[k]) gm[j + k * n] = T((c[j] - c[k]) / (s[j] - s[k]));
      gp[j + k * n] = T((c[j] + c[k]) / (s[j] + s[k]));
    }
  const Tensor<T> M = matmul(U0.mH(), matmul(W, V0));
  const Tensor<T> mid = mul(add(mul(Tensor<T>::from_col_major({n, n}, gm), add(M, M.mH())),
                                mul(Tensor<T>::from_col_major({n, n}, gp), sub(M, M.mH()))),
                            T(0.5));
  return matmul(U0, matmul(mid, V0.mH()));
}

}  // namespace

TYPED_TEST(Degenerate, SvdIdentityPolarFactor) {
  using T = TypeParam;
  using R = real_t<T>;
  const std::int64_t n = 4;
  const Tensor<T> I = Tensor<T>::eye(n);
  auto [U, S, Vh] = la::svd(I);
  for (R v : S.to_vector()) EXPECT_EQ(v, R(1));
  const Tensor<T> W = Tensor<T>::randn({n, n}, 51);
  // Re <W, U V^H>: U V^H is the polar factor, d(polar)(I)[D] = (D - D^H)/2, so gA = (W - W^H)/2.
  const auto loss = [&](const Tensor<T>& a) {
    auto [u, s, vh] = la::svd(a);
    return re_inner(W, matmul(u, vh));
  };
  const Tensor<T> g = tx::grad(loss, I);
  ASSERT_TRUE(all_finite(g));
  expect_close(g, mul(sub(W, W.mH()), T(0.5)), 1e-12, "polar factor at I");
  expect_fd(loss, I, g, Tensor<T>::randn({n, n}, 52), "polar factor at I");
  // The singular values: d sum(S) at I is U V^H = I.
  expect_close(tx::grad([](const Tensor<T>& a) { return sum(la::svdvals(a)); }, I), I, 1e-14, "sum(svdvals(I))");
  expect_close(tx::grad([](const Tensor<T>& a) { return sum(std::get<1>(la::svd(a))); }, I), I, 1e-14, "sum(svd(I).S)");
}

TYPED_TEST(Degenerate, SvdRepeatedInvariantProbeMatchesAnalytic) {
  using T = TypeParam;
  using G = gen_t<T>;
  const std::int64_t n = 4;
  const std::vector<double> s{3.0, 2.0, 2.0, 1.0}, c{0.5, -1.0, -1.0, 2.0};
  const Tensor<T> A = round_to<T>(usv<G>(n, n, s, 53));
  const Tensor<T> U0 = haar_t<T>(n, 53), V0 = haar_t<T>(n, 53 + 1000);
  const Tensor<T> W = Tensor<T>::randn({n, n}, 54);
  const auto loss = [&](const Tensor<T>& a) {
    auto [u, sv, vh] = la::svd(a);
    return re_inner(W, matmul(mul(u, row<T>(c)), vh));
  };
  const Tensor<T> g = tx::grad(loss, A);
  ASSERT_TRUE(all_finite(g));
  expect_close(g, usv_probe_grad(U0, V0, s, c, W), 1e-10, "U diag(c) V^H against the analytic gradient");
  for (std::uint64_t seed : {55, 56}) expect_fd(loss, A, g, Tensor<T>::randn({n, n}, seed), "U diag(c) V^H");
  // svdvals weighted by c (equal on the pair): U0 diag(c) V0^H.
  const Tensor<real_t<T>> cr = Tensor<real_t<T>>::from_col_major({n}, {0.5, -1.0, -1.0, 2.0});
  expect_close(tx::grad([&](const Tensor<T>& a) { return sum(mul(la::svdvals(a), cr)); }, A),
               matmul(mul(U0, row<T>(c)), V0.mH()), 1e-12, "c . svdvals");
}

TYPED_TEST(Degenerate, SvdRepeatedInvariantProbeTallAndWide) {
  using T = TypeParam;
  using G = gen_t<T>;
  const std::vector<double> s{3.0, 2.0, 2.0, 1.0}, c{0.5, -1.0, -1.0, 2.0};
  for (auto [m, n] : std::vector<std::pair<std::int64_t, std::int64_t>>{{6, 4}, {4, 6}}) {
    SCOPED_TRACE(std::to_string(m) + " x " + std::to_string(n));
    const Tensor<T> A = round_to<T>(usv<G>(m, n, s, 57));
    const Tensor<T> W = Tensor<T>::randn({m, n}, 58);
    const auto loss = [&](const Tensor<T>& a) {
      auto [u, sv, vh] = la::svd(a);
      return re_inner(W, matmul(mul(u, row<T>(c)), vh));
    };
    const Tensor<T> g = tx::grad(loss, A);
    ASSERT_TRUE(all_finite(g));
    for (std::uint64_t seed : {59, 60}) expect_fd(loss, A, g, Tensor<T>::randn({m, n}, seed), "U diag(c) V^H");
  }
}

TYPED_TEST(Degenerate, SvdGaugeDependentLoss) {
  using T = TypeParam;
  using R = real_t<T>;
  using G = gen_t<T>;
  const std::int64_t n = 4;
  const Tensor<T> A = round_to<T>(usv<G>(n, n, {3.0, 2.0, 2.0, 1.0}, 61));
  const Tensor<R> Wr = Tensor<R>::randn({n, n}, 62);
  // Re <W, |U|^2>: phase-invariant, not invariant under rotations inside the repeated pair.
  const auto loss = [&](Policy pol) {
    return [&, pol](const Tensor<T>& a) {
      const Tensor<T> U = std::get<0>(la::svd(a, false, pol));
      return sum(mul(Wr, real(mul(conj(U), U))));
    };
  };
  const std::string msg = error_of([&] { tx::grad(loss(Policy{}), A); });
  EXPECT_TRUE(msg.rfind("[svd]", 0) == 0) << "the default policy must throw naming the op, got: '" << msg << "'";
  EXPECT_TRUE(has(msg, "degenerate")) << msg;
  Policy ignore;
  ignore.on_gauge = Policy::OnGauge::Ignore;
  Tensor<T> g;
  EXPECT_NO_THROW(g = tx::grad(loss(ignore), A));
  EXPECT_TRUE(all_finite(g));
  Policy lor;
  lor.mode = Policy::Mode::Lorentzian;
  Tensor<T> gl;
  EXPECT_NO_THROW(gl = tx::grad(loss(lor), A));
  EXPECT_TRUE(all_finite(gl));
  Policy exact;
  exact.mode = Policy::Mode::Exact;
  const Tensor<T> D = diag_embed(Tensor<T>::from_col_major({n}, {T(3), T(2), T(2), T(1)}));
  const auto sd = la::svdvals(D).to_vector();
  ASSERT_EQ(sd[1], sd[2]);
  Tensor<T> ge;
  EXPECT_NO_THROW(ge = tx::grad(loss(exact), D));
  EXPECT_FALSE(all_finite(ge)) << "Exact policy on a repeated singular value gave a finite gradient";
}

TYPED_TEST(Degenerate, SvdPhaseGauge) {
  using T = TypeParam;
  using G = gen_t<T>;
  const std::int64_t m = 5, n = 4;
  const Tensor<T> A = round_to<T>(usv<G>(m, n, {3.0, 2.0, 1.5, 0.5}, 63));
  const Tensor<T> W = Tensor<T>::randn({m, n}, 64);
  // Re <W, U> depends on the column phases (complex) or signs (real).
  const auto loss = [&](bool canonical) {
    return [&, canonical](const Tensor<T>& a) { return re_inner(W, std::get<0>(la::svd(a, false, {}, canonical))); };
  };
  if constexpr (is_complex_v<T>) {
    const std::string msg = error_of([&] { tx::grad(loss(false), A); });
    EXPECT_TRUE(msg.rfind("[svd]", 0) == 0 && has(msg, "phases")) << "got: '" << msg << "'";
  }
  Tensor<T> g;
  ASSERT_NO_THROW(g = tx::grad(loss(true), A));
  for (std::uint64_t s : {65, 66}) expect_fd(loss(true), A, g, Tensor<T>::randn({m, n}, s), "canonical gauge");
  // A phase-invariant loss passes without the canonical gauge: U diag(c) V^H.
  EXPECT_NO_THROW(tx::grad(
      [&](const Tensor<T>& a) {
        auto [u, s, vh] = la::svd(a);
        return re_inner(W, matmul(mul(u, row<T>({1.0, -2.0, 0.5, 3.0})), vh));
      },
      A));
}
