// The differential AD oracle (issue: reliability): random compositions of two or three
// differentiable ops, on random well-conditioned inputs, checked by the generic harness: reverse
// mode vs forward mode vs central differences, second order (forward over reverse, reverse over
// reverse, reverse over forward) and a float64 recompute of the float32 result, to TESTING.md's
// tolerances. The compositions are drawn from a fixed seed, so a failure names a reproducible chain.
#include <gtest/gtest.h>

#include <complex>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "support/gradcheck.hpp"
#include "tenax/tenax.hpp"

namespace tx = tenax;
namespace la = tenax::linalg;
using tx::Tensor;

namespace {

constexpr std::int64_t kN = 3;

// Ops from n x n matrices to n x n matrices, each well defined and smooth on the values the
// previous ops produce (shifts by n I keep the linear algebra well conditioned).
template <class S>
struct Step {
  const char* name;
  std::function<Tensor<S>(const Tensor<S>&)> f;
};

template <class S>
Tensor<S> shifted(const Tensor<S>& x) {
  return x + Tensor<S>::eye(kN) * S(static_cast<double>(kN) + 1.0);
}
template <class S>
Tensor<S> fixed(std::uint64_t seed) {
  return Tensor<S>::randn({kN, kN}, seed) * S(0.5) + Tensor<S>::eye(kN) * S(2.0);
}

template <class S>
const std::vector<Step<S>>& matrix_steps() {
  static const std::vector<Step<S>> steps = {
      {"tanh", [](const Tensor<S>& x) { return tx::tanh(x); }},
      {"exp(0.3 x)", [](const Tensor<S>& x) { return tx::exp(x * S(0.3)); }},
      {"sigmoid", [](const Tensor<S>& x) { return tx::sigmoid(x); }},
      {"x * x + x", [](const Tensor<S>& x) { return x * x + x; }},
      {"matmul(x, C)", [](const Tensor<S>& x) { return tx::matmul(x, fixed<S>(11)); }},
      {"matmul(x^H, x)", [](const Tensor<S>& x) { return tx::matmul(x.mH(), x); }},
      {"inv(x + s I)", [](const Tensor<S>& x) { return la::inv(shifted(x)); }},
      {"solve(x + s I, C)", [](const Tensor<S>& x) { return la::solve(shifted(x), fixed<S>(12)); }},
      {"solve_triangular(x + s I, C)",
       [](const Tensor<S>& x) { return la::solve_triangular(shifted(x), fixed<S>(13), /*upper=*/true); }},
      {"qr(x + s I).Q (positive diag)",
       [](const Tensor<S>& x) { return la::qr(shifted(x), la::QrMode::Reduced, true).first; }},
      {"qr(x + s I).R (positive diag)",
       [](const Tensor<S>& x) { return la::qr(shifted(x), la::QrMode::Reduced, true).second; }},
      {"cholesky(x^H x + I)",
       [](const Tensor<S>& x) { return la::cholesky(tx::matmul(x.mH(), x) + Tensor<S>::eye(kN)); }},
      {"matrix_exp(0.3 x)", [](const Tensor<S>& x) { return la::matrix_exp(x * S(0.3)); }},
      {"pinv(x + s I)", [](const Tensor<S>& x) { return la::pinv(shifted(x)); }},
      {"lstsq(x + s I, C).solution", [](const Tensor<S>& x) { return la::lstsq(shifted(x), fixed<S>(14)).solution; }},
      {"lu(x + s I): L + U",
       [](const Tensor<S>& x) {
         auto [P, L, U] = la::lu(shifted(x));
         return L + U;
       }},
  };
  return steps;
}

// Final ops (matrix -> tensor) that end a chain.
template <class S>
const std::vector<Step<S>>& final_steps() {
  static const std::vector<Step<S>> steps = {
      {"identity", [](const Tensor<S>& x) { return x; }},
      {"sum over rows", [](const Tensor<S>& x) { return tx::sum(x, {0}); }},
      {"det(x + s I)", [](const Tensor<S>& x) { return la::det(shifted(x)); }},
      {"slogdet(x + s I).logabs", [](const Tensor<S>& x) { return tx::cast<S>(la::slogdet(shifted(x)).second); }},
      {"svdvals(x + s I)", [](const Tensor<S>& x) { return tx::cast<S>(la::svdvals(shifted(x))); }},
      {"eigvalsh(x + x^H + D)",
       [](const Tensor<S>& x) {
         // D spreads the eigenvalues apart (the rule divides by their gaps).
         const auto D = tx::diag_embed(Tensor<S>::from_col_major({kN}, {S(0.0), S(4.0), S(8.0)}));
         return tx::cast<S>(la::eigvalsh(x + x.mH() + D));
       }},
      {"vector_norm(x, 3) over rows", [](const Tensor<S>& x) { return tx::cast<S>(la::vector_norm(x, 3.0, {0})); }},
      {"cond(x + s I + C, fro)",
       [](const Tensor<S>& x) { return tx::cast<S>(la::cond(shifted(x) + fixed<S>(15), "fro")); }},
      {"real(eigvals(x + D))",
       [](const Tensor<S>& x) {
         const auto D = tx::diag_embed(Tensor<S>::from_col_major({kN}, {S(0.0), S(4.0), S(8.0)}));
         return tx::cast<S>(tx::real(la::eigvals(x + D)));
       }},
      {"prod over columns", [](const Tensor<S>& x) { return tx::prod(x, {1}); }},
  };
  return steps;
}

struct Chain {
  std::vector<std::size_t> steps;
  std::size_t last;
};

std::vector<Chain> chains(std::size_t count, std::uint64_t seed, std::size_t n_steps, std::size_t n_final) {
  std::mt19937_64 rng(seed);
  std::vector<Chain> out;
  for (std::size_t c = 0; c < count; ++c) {
    Chain ch;
    const std::size_t len = 1 + rng() % 2;  // one or two matrix steps, then a final op
    for (std::size_t k = 0; k < len; ++k) ch.steps.push_back(rng() % n_steps);
    ch.last = rng() % n_final;
    out.push_back(ch);
  }
  return out;
}

template <class T>
class AdOracle : public ::testing::Test {};
using Types = ::testing::Types<double, std::complex<double>>;
TYPED_TEST_SUITE(AdOracle, Types);

TYPED_TEST(AdOracle, RandomCompositionsAgreeAcrossModes) {
  using T = TypeParam;
  const auto& steps = matrix_steps<T>();
  const auto& finals = final_steps<T>();
  int k = 0;
  for (const Chain& ch : chains(32, 2026, steps.size(), finals.size())) {
    std::string name;
    for (std::size_t s : ch.steps) name += std::string(steps[s].name) + " -> ";
    name += finals[ch.last].name;
    SCOPED_TRACE("chain " + std::to_string(k) + ": " + name);
    auto chain = [ch](const auto& x) {
      using S = typename std::decay_t<decltype(x)>::value_type;
      auto y = x;
      for (std::size_t s : ch.steps) y = matrix_steps<S>()[s].f(y);
      return final_steps<S>()[ch.last].f(y);
    };
    // eigvalsh and svdvals compute their vectors only under AD, through another LAPACK path whose
    // values differ by rounding; the harness compares values bit for bit, so the value comes from a
    // call without AD and the derivatives from the call with AD.
    auto f = tx::testing::value_from_plain_call(chain);
    const Tensor<T> x = Tensor<T>::randn({kN, kN}, 100 + static_cast<std::uint64_t>(k)) * T(0.5);
    tx::testing::GradOptions o;
    o.seed = 7 + static_cast<std::uint64_t>(k);
    // float32 rounding is amplified along a chain (each linear-algebra step multiplies it by its
    // condition number); the single-op tests keep 1e-4, a chain of up to three ops gets 1e-3
    // (largest seen: 1.8e-4, lu -> inv -> svdvals in complex64).
    o.f32_rtol = 1e-3;
    tx::testing::expect_ad(o, f, x);
    ++k;
  }
}

}  // namespace
