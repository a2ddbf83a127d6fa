// Failures and bad input for the decompositions (TESTING.md "Bad input", DESIGN.md "Errors and bad
// input"): singular and non-positive-definite matrices (LinAlgError naming the op and the batch
// element; info per batch element in the _ex variants), inf/NaN input to every decomposition
// (returns or throws promptly, never hangs), malformed shapes (tenax::Error "[op] ..." naming
// shapes and dtype before any provider call), and empty matrices (results and gradients of the
// right shape).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "linalg/linalg_check_support.hpp"

namespace tx = tenax;
namespace la = tenax::linalg;
using tx::is_complex_v;
using tx::real_t;
using tx::Shape;
using tx::Tensor;
using namespace tenax::lcheck;

namespace {

// The message of the E that f throws (a test failure when it throws nothing or something else).
template <class E = tx::Error, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw another exception type: " << e.what();
    return "";
  }
  ADD_FAILURE() << "did not throw";
  return "";
}

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

#define EXPECT_HAS(msg, part) EXPECT_NE((msg).find(part), std::string::npos) << "message: " << (msg)

// Total provider calls of every routine.
std::int64_t total_calls() {
  std::int64_t t = 0;
  for (int r = 0; r < static_cast<int>(tx::cpu::Routine::kCount); ++r)
    t += tx::cpu::provider_calls(static_cast<tx::cpu::Routine>(r));
  return t;
}

// Contiguous copy of batch element b of a rank-3 tensor.
template <class T>
Tensor<T> element(const Tensor<T>& t, std::int64_t b) {
  return contiguous(slice(t, 2, b, b + 1).squeeze(2));
}

template <class T>
Tensor<T> well_conditioned(std::int64_t n, std::uint64_t seed) {
  return general<T>(Kind::Cond2, n, n, seed);
}

template <class T>
class Failures : public ::testing::Test {};
TYPED_TEST_SUITE(Failures, AllTypes);

}  // namespace

// ---- singular matrices ---------------------------------------------------------------------------
TYPED_TEST(Failures, SingularSolveAndInv) {
  using T = TypeParam;
  const std::int64_t n = 4;
  // Batch of three; element 1 has a zero third column, so U(3, 3) is exactly zero.
  Tensor<T> S = well_conditioned<T>(n, 2);
  for (std::int64_t i = 0; i < n; ++i) S.mutable_data()[i + 2 * n] = T(0);
  const Tensor<T> A = tx::stack<T>({well_conditioned<T>(n, 1), S, well_conditioned<T>(n, 3)}, 2);
  const Tensor<T> B = Tensor<T>::randn({n, 2, 3}, 4);

  std::string msg = message_of<la::LinAlgError>([&] { la::solve(A, B); });
  EXPECT_TRUE(starts_with(msg, "[solve]")) << msg;
  EXPECT_HAS(msg, "singular");
  EXPECT_HAS(msg, "U(3, 3)");
  EXPECT_HAS(msg, "batch element [1]");
  EXPECT_HAS(msg, "[4, 4, 3]");

  auto [X, info] = la::solve_ex(A, B);  // does not throw
  ASSERT_EQ(info.shape(), Shape({3}));
  EXPECT_EQ(info.to_vector(), (std::vector<std::int32_t>{0, 3, 0}));
  ASSERT_EQ(X.shape(), Shape({n, 2, 3}));
  EXPECT_TRUE(all_nan(element(X, 1)));
  for (std::int64_t b : {0, 2}) {  // the others are solved, exactly as on their own
    EXPECT_TRUE(all_finite(element(X, b)));
    EXPECT_EQ(element(X, b).to_vector(), la::solve(element(A, b), element(B, b)).to_vector());
  }

  msg = message_of<la::LinAlgError>([&] { la::inv(A); });
  EXPECT_TRUE(starts_with(msg, "[inv]")) << msg;
  EXPECT_HAS(msg, "batch element [1]");
  auto [Ai, infoi] = la::inv_ex(A);
  EXPECT_EQ(infoi.to_vector(), (std::vector<std::int32_t>{0, 3, 0}));
  EXPECT_TRUE(all_nan(element(Ai, 1)));
  EXPECT_TRUE(all_finite(element(Ai, 0)));
  EXPECT_TRUE(all_finite(element(Ai, 2)));

  // A single singular matrix: no batch element in the message.
  msg = message_of<la::LinAlgError>([&] { la::solve(S, element(B, 0)); });
  EXPECT_TRUE(starts_with(msg, "[solve]")) << msg;
  EXPECT_EQ(msg.find("batch element"), std::string::npos) << msg;
  auto [Xs, infos] = la::solve_ex(S, element(B, 0));
  EXPECT_EQ(infos.dim(), 0);
  EXPECT_EQ(infos.item(), 3);

  // Two batch dimensions (2, 2): the singular matrix at flat index 2 is element [0, 1].
  const Tensor<T> W = well_conditioned<T>(n, 5);
  const Tensor<T> A2 = reshape(tx::stack<T>({W, W, S, W}, 2), Shape({n, n, 2, 2}));
  msg = message_of<la::LinAlgError>([&] { la::solve(A2, Tensor<T>::randn({n, 1, 2, 2}, 6)); });
  EXPECT_HAS(msg, "batch element [0, 1]");
  auto [X2, info2] = la::solve_ex(A2, Tensor<T>::randn({n, 1, 2, 2}, 6));
  ASSERT_EQ(info2.shape(), Shape({2, 2}));
  EXPECT_EQ(info2.to_vector(), (std::vector<std::int32_t>{0, 0, 3, 0}));

  // A single singular A broadcast over a batch of right-hand sides: every element fails, and the
  // message names the matrix without a batch element.
  msg = message_of<la::LinAlgError>([&] { la::solve(S, Tensor<T>::randn({n, 1, 3}, 7)); });
  EXPECT_EQ(msg.find("batch element"), std::string::npos) << msg;
  auto [X3, info3] = la::solve_ex(S, Tensor<T>::randn({n, 1, 3}, 7));
  ASSERT_EQ(info3.shape(), Shape({3}));
  EXPECT_EQ(info3.to_vector(), (std::vector<std::int32_t>{3, 3, 3}));
  EXPECT_TRUE(all_nan(X3));
}

TYPED_TEST(Failures, CholeskyNotPositiveDefinite) {
  using T = TypeParam;
  const Tensor<T> good = hermitian_of<T>(Kind::Cond2, 4, 8, true);
  // Leading minors of diag(1, 2, -1, 4): 1, 2, -2, -8, so the first non-positive one has order 3.
  const Tensor<T> bad = diag_embed(Tensor<T>::from_col_major({4}, {T(1), T(2), T(-1), T(4)}));
  for (bool upper : {false, true}) {
    SCOPED_TRACE(upper ? "upper" : "lower");
    std::string msg = message_of<la::LinAlgError>([&] { la::cholesky(bad, upper); });
    EXPECT_TRUE(starts_with(msg, "[cholesky]")) << msg;
    EXPECT_HAS(msg, "not positive definite");
    EXPECT_HAS(msg, "order 3");
    EXPECT_HAS(msg, std::string("(input shape [4, 4], ") + tx::dtype_traits<T>::name + " on cpu)");
    auto [L, info] = la::cholesky_ex(bad, upper);
    EXPECT_EQ(info.item(), 3);
    EXPECT_TRUE(all_nan(L));

    const Tensor<T> A = tx::stack<T>({good, bad}, 2);
    msg = message_of<la::LinAlgError>([&] { la::cholesky(A, upper); });
    EXPECT_HAS(msg, "order 3");
    EXPECT_HAS(msg, "batch element [1]");
    auto [Lb, infob] = la::cholesky_ex(A, upper);
    EXPECT_EQ(infob.to_vector(), (std::vector<std::int32_t>{0, 3}));
    EXPECT_TRUE(all_finite(element(Lb, 0)));
    EXPECT_TRUE(all_nan(element(Lb, 1)));
  }
  // A zero matrix fails at order 1; an indefinite one whose first pivot is negative too.
  EXPECT_EQ(la::cholesky_ex(Tensor<T>::zeros({3, 3})).second.item(), 1);
  EXPECT_HAS(message_of<la::LinAlgError>([&] { la::cholesky(Tensor<T>::zeros({3, 3})); }), "order 1");
  EXPECT_EQ(la::cholesky_ex(tx::neg(good)).second.item(), 1);
}

// ---- inf / NaN input -----------------------------------------------------------------------------
namespace {

template <class T>
std::vector<std::pair<std::string, T>> bad_values() {
  using R = real_t<T>;
  const R nan = std::numeric_limits<R>::quiet_NaN(), inf = std::numeric_limits<R>::infinity();
  std::vector<std::pair<std::string, T>> v{{"NaN", T(nan)}, {"+Inf", T(inf)}, {"-Inf", T(-inf)}};
  if constexpr (is_complex_v<T>) {
    v.push_back({"i Inf", T(R(0), inf)});
    v.push_back({"i NaN", T(R(1), nan)});
  }
  return v;
}

// Expects f() to throw a LinAlgError "[op] the input contains inf or NaN ..." (naming `element` when
// given) within a few seconds.
template <class F>
void expect_nonfinite_error(const std::string& op, const char* element, F f) {
  SCOPED_TRACE(op);
  std::string msg;
  try {
    within(10, op, f);
    ADD_FAILURE() << op << " accepted a non-finite input";
  } catch (const la::LinAlgError& e) {
    msg = e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << op << " threw something other than a LinAlgError: " << e.what();
  }
  EXPECT_TRUE(starts_with(msg, "[" + op + "]")) << msg;
  EXPECT_HAS(msg, "inf or NaN");
  if (element) EXPECT_HAS(msg, element);
}

}  // namespace

// detail::all_finite (the finiteness scan of the kernels and the solve rules): every length
// around its eight-lane blocks, with one inf, -inf or NaN at every position, in either part of a
// complex entry; and the largest finite values and -0 count as finite.
TYPED_TEST(Failures, AllFiniteScan) {
  using T = TypeParam;
  using R = real_t<T>;
  for (std::int64_t n : {0, 1, 7, 8, 9, 16, 17, 33}) {
    std::vector<T> v(static_cast<std::size_t>(n), T(std::numeric_limits<R>::max()));
    if (n > 0) v[0] = T(R(-0.0));
    EXPECT_TRUE(tx::detail::all_finite(v.data(), n)) << n;
    for (R bad :
         {std::numeric_limits<R>::infinity(), -std::numeric_limits<R>::infinity(), std::numeric_limits<R>::quiet_NaN()})
      for (std::int64_t i = 0; i < n; ++i)
        for (int part = 0; part < (is_complex_v<T> ? 2 : 1); ++part) {
          auto w = v;
          if constexpr (is_complex_v<T>)
            w[static_cast<std::size_t>(i)] = part ? T(R(1), bad) : T(bad, R(1));
          else
            w[static_cast<std::size_t>(i)] = T(bad);
          EXPECT_FALSE(tx::detail::all_finite(w.data(), n)) << n << " " << i << " " << part << " " << bad;
        }
  }
}

TYPED_TEST(Failures, NonFiniteInputNeverHangs) {
  using T = TypeParam;
  using R = real_t<T>;
  const std::int64_t n = 4;
  for (const auto& [vname, val] : bad_values<T>()) {
    SCOPED_TRACE(vname);
    Tensor<T> H = hermitian_of<T>(Kind::Cond2, n, 9, true);  // HPD, so only the bad value matters
    Tensor<T> Bad = clone(H);
    Bad.mutable_data()[2 + 1 * n] = val;  // in the lower triangle (read by every op)
    const Tensor<T> rhs = Tensor<T>::randn({n, 2}, 10);
    const Tensor<T> Rect = Tensor<T>::randn({n + 2, n}, 11);
    Tensor<T> BadRect = clone(Rect);
    BadRect.mutable_data()[3] = val;
    // A batch of three whose element [1] is the bad one.
    const Tensor<T> Batch = tx::stack<T>({H, Bad, H}, 2);
    const Tensor<T> RectBatch = tx::stack<T>({Rect, BadRect, Rect}, 2);

    for (const bool batched : {false, true}) {
      SCOPED_TRACE(batched ? "batch element [1]" : "single matrix");
      const Tensor<T>& A = batched ? Batch : Bad;
      const Tensor<T>& M = batched ? RectBatch : BadRect;
      const char* el = batched ? "batch element [1]" : nullptr;
      const Tensor<T> B = batched ? Tensor<T>::randn({n, 2, 3}, 12) : rhs;
      expect_nonfinite_error("solve", el, [=] { la::solve(A, B); });
      expect_nonfinite_error("inv", el, [=] { la::inv(A); });
      expect_nonfinite_error("lu_factor", el, [=] { la::lu_factor(M); });
      expect_nonfinite_error("cholesky", el, [=] { la::cholesky(A); });
      expect_nonfinite_error("qr", el, [=] { la::qr(M); });
      expect_nonfinite_error("eigh", el, [=] { la::eigh(A); });
      expect_nonfinite_error("eigvalsh", el, [=] { la::eigvalsh(A); });
      expect_nonfinite_error("svd", el, [=] { la::svd(M); });
      expect_nonfinite_error("svd", el, [=] { la::svd(M, true); });
      expect_nonfinite_error("svdvals", el, [=] { la::svdvals(M); });
      expect_nonfinite_error("svd", el, [=] { la::svd(A); });

      // The _ex variants report info = -1 for that element and do not throw.
      const auto bad_info = [&](const Tensor<std::int32_t>& info) {
        const auto v = info.to_vector();
        return batched ? v == std::vector<std::int32_t>{0, -1, 0} : v == std::vector<std::int32_t>{-1};
      };
      within(10, "solve_ex", [=] {
        auto [X, info] = la::solve_ex(A, B);
        EXPECT_TRUE(bad_info(info));
        EXPECT_TRUE(all_nan(batched ? element(X, 1) : X));
      });
      within(10, "inv_ex", [=] { EXPECT_TRUE(bad_info(la::inv_ex(A).second)); });
      within(10, "lu_factor_ex", [=] { EXPECT_TRUE(bad_info(std::get<2>(la::lu_factor_ex(M)))); });
      within(10, "cholesky_ex", [=] {
        auto [L, info] = la::cholesky_ex(A);
        EXPECT_TRUE(bad_info(info));
        EXPECT_TRUE(all_nan(batched ? element(L, 1) : L));
      });
      // slogdet and det return NaN for that element (documented), the others are finite.
      within(10, "slogdet", [=] {
        auto [s, l] = la::slogdet(A);
        const auto lv = l.to_vector();
        const auto sv = s.to_vector();
        ASSERT_EQ(lv.size(), batched ? 3u : 1u);
        const std::size_t b = batched ? 1 : 0;
        EXPECT_TRUE(std::isnan(lv[b]));
        EXPECT_TRUE(std::isnan(std::real(sv[b])));
        if (batched) {
          EXPECT_TRUE(std::isfinite(lv[0]));
          EXPECT_TRUE(std::isfinite(lv[2]));
        }
        const auto dv = la::det(A).to_vector();
        EXPECT_TRUE(std::isnan(std::real(dv[b])));
      });
      // Derivatives through the _ex variants: the failed element's derivatives are NaN (its
      // factors are NaN), the others' are finite, and its saved pivots (identity interchanges,
      // getrf never ran) are never used as row indices out of range (the sanitizer stage of
      // .ci/run checks the reads).
      const auto nan_only_there = [&](const std::string& what, const auto& t) {
        SCOPED_TRACE(what);
        if (!batched) {
          EXPECT_TRUE(all_nan(t));
          return;
        }
        const std::int64_t last = t.dim() - 1;  // the batch dimension
        const auto el = [&](std::int64_t b) { return tx::contiguous(tx::slice(t, static_cast<int>(last), b, b + 1)); };
        EXPECT_TRUE(all_nan(el(1)));
        EXPECT_TRUE(all_finite(el(0)));
        EXPECT_TRUE(all_finite(el(2)));
      };
      const auto derivatives_fail_alone = [&](const char* what, auto&& loss, const auto& at) {
        within(10, what, [&] {
          using X = std::decay_t<decltype(at)>;
          nan_only_there(std::string(what) + " grad",
                         tx::grad([&](const X& a) { return tx::real(tx::sum(loss(a))); }, at));
          nan_only_there(std::string(what) + " jvp", tx::jvp(loss, at, X::ones(at.shape())).second);
        });
      };
      derivatives_fail_alone(
          "solve_ex", [&](const Tensor<T>& a) { return la::solve_ex(a, B).first; }, A);
      derivatives_fail_alone(
          "solve_ex wrt B", [&](const Tensor<T>& b) { return la::solve_ex(A, b).first; }, B);
      derivatives_fail_alone(
          "inv_ex", [&](const Tensor<T>& a) { return la::inv_ex(a).first; }, A);
      derivatives_fail_alone(
          "lu_factor_ex", [&](const Tensor<T>& a) { return std::get<0>(la::lu_factor_ex(a)); }, M);
      derivatives_fail_alone(
          "lu_factor_ex + lu_solve",
          [&](const Tensor<T>& a) {
            auto [LU, piv, info] = la::lu_factor_ex(a);
            return la::lu_solve(LU, piv, B, la::Trans::C);
          },
          A);
      derivatives_fail_alone(
          "slogdet_ex", [&](const Tensor<T>& a) { return std::get<1>(la::slogdet_ex(a)); }, A);
      derivatives_fail_alone(
          "det", [&](const Tensor<T>& a) { return la::det(a); }, A);
      // Second order (the rules' higher-order branches solve again: without raising for the
      // failed element).
      const Tensor<T> V = Tensor<T>::randn(A.shape(), 13);
      within(10, "slogdet_ex and det hvp", [&] {
        nan_only_there(
            "slogdet_ex hvp",
            tx::hvp([&](const Tensor<T>& a) { return tx::real(tx::sum(std::get<1>(la::slogdet_ex(a)))); }, A, V));
        nan_only_there("det hvp", tx::hvp([&](const Tensor<T>& a) { return tx::real(tx::sum(la::det(a))); }, A, V));
      });
      if (batched) {
        // An exactly singular element next to the failed one: det's rule takes the adjugate (an
        // SVD) for it, which must not raise for the failed element either.
        auto Sing = tx::clone(H);
        for (std::int64_t i = 0; i < n; ++i) Sing.mutable_data()[i] = T(0);
        const Tensor<T> Mixed = tx::stack<T>({Sing, Bad, H}, 2);
        within(10, "det grad with singular and failed elements", [&] {
          nan_only_there("det grad (mixed)",
                         tx::grad([&](const Tensor<T>& a) { return tx::real(tx::sum(la::det(a))); }, Mixed));
        });
      }

      // The gradient path: a recorded input fails the same way.
      expect_nonfinite_error("svdvals", el, [=] { la::svdvals(M.requires_grad()); });
      expect_nonfinite_error("eigvalsh", el, [=] { la::eigvalsh(A.requires_grad()); });
    }
    // Only the referenced triangle is read by eigh and cholesky: a bad value in the other one is
    // ignored.
    Tensor<T> Upper = clone(H);
    Upper.mutable_data()[1 + 2 * n] = val;
    within(10, "eigh with a bad unreferenced triangle", [=] {
      auto [w, V] = la::eigh(Upper);
      EXPECT_TRUE(all_finite(w));
      EXPECT_EQ(w.to_vector(), la::eigh(H).first.to_vector());
      EXPECT_TRUE(all_finite(la::cholesky(Upper)));
    });
    expect_nonfinite_error("eigh", nullptr, [=] { la::eigh(Upper, true); });
    expect_nonfinite_error("cholesky", nullptr, [=] { la::cholesky(Upper, true); });
    (void)R(0);
  }
}

// Pivots are row indices: lu_solve rejects values outside 1..n before any row is read (a user may
// pass pivots that lu_factor did not make).
TYPED_TEST(Failures, LuSolveRejectsPivotsOutOfRange) {
  using T = TypeParam;
  const std::int64_t n = 4;
  const Tensor<T> A = well_conditioned<T>(n, 21), B = Tensor<T>::randn({n, 2}, 22);
  const auto factors = la::lu_factor(A);
  const Tensor<T>& LU = factors.first;
  const Tensor<std::int32_t>& piv = factors.second;
  for (const std::int32_t bad : {0, -3, 5, 1 << 30}) {
    SCOPED_TRACE("pivot value " + std::to_string(bad));
    Tensor<std::int32_t> p = tx::clone(piv);
    p.mutable_data()[2] = bad;
    for (const auto trans : {la::Trans::N, la::Trans::C}) {
      const std::string msg = message_of([&] { la::lu_solve(LU, p, B, trans); });
      EXPECT_TRUE(starts_with(msg, "[lu_solve]")) << msg;
      EXPECT_HAS(msg, "pivot 2 of matrix 0 is " + std::to_string(bad) + ", outside 1..4");
      EXPECT_HAS(msg, "(int32 pivots, broadcast to the batch: shape [4] on cpu");
    }
  }
  // Batch shapes that do not broadcast are a shape error naming both.
  const auto f2 = la::lu_factor(tx::stack<T>({A, well_conditioned<T>(n, 24)}, 2));
  const std::string msg = message_of([&] { la::lu_solve(f2.first, f2.second, Tensor<T>::randn({n, 2, 3}, 23)); });
  EXPECT_TRUE(starts_with(msg, "[lu_solve]")) << msg;
  EXPECT_HAS(msg, "the batch shapes of LU [2] and B [3] do not broadcast");
}

// lu_factor accepts a singular A (its info reports the zero pivot); solving with those factors
// raises, naming the batch element, instead of returning inf/NaN. Also when traced and compiled.
TYPED_TEST(Failures, LuSolveRaisesOnSingularFactors) {
  using T = TypeParam;
  const std::int64_t n = 3;
  Tensor<T> S = tx::clone(well_conditioned<T>(n, 24));
  for (std::int64_t i = 0; i < n; ++i) S.mutable_data()[i + 1 * n] = T(0);  // column 1: U(2, 2) = 0
  const Tensor<T> A = tx::stack<T>({well_conditioned<T>(n, 25), S}, 2), B = Tensor<T>::randn({n, 2, 2}, 26);
  // Named, not structured, bindings: the lambda below captures them (clang < 16 cannot).
  const auto factors = la::lu_factor(A);
  const Tensor<T>& LU = factors.first;
  const Tensor<std::int32_t>& piv = factors.second;
  for (const auto trans : {la::Trans::N, la::Trans::T, la::Trans::C}) {
    const std::string msg = message_of([&] { la::lu_solve(LU, piv, B, trans); });
    EXPECT_TRUE(starts_with(msg, "[lu_solve]")) << msg;
    EXPECT_HAS(msg, "is exactly zero");
    EXPECT_HAS(msg, "batch element [1]");
  }
  // The regular matrix alone solves.
  const auto [LU0, piv0] = la::lu_factor(element(A, 0));
  EXPECT_TRUE(all_finite(la::lu_solve(LU0, piv0, element(B, 0))));
  // Compiled: the check is a step of the program, run on each run's factors.
  auto f = [](const Tensor<T>& a, const Tensor<T>& b) {
    const auto [lu, p] = la::lu_factor(a);
    return la::lu_solve(lu, p, b);
  };
  const Tensor<T> Ok = tx::stack<T>({well_conditioned<T>(n, 25), well_conditioned<T>(n, 27)}, 2);
  auto c = tx::compile(f, Ok, B);
  EXPECT_TRUE(all_finite(c(Ok, B)));
  const std::string msg = message_of([&] { (void)c(A, B); });
  EXPECT_TRUE(starts_with(msg, "[lu_solve]")) << msg;
}

// ---- malformed shapes ----------------------------------------------------------------------------
namespace {

// f throws tenax::Error "[op] ..." whose message contains every part, and no provider routine ran.
template <class F>
void expect_shape_error(const std::string& op, std::initializer_list<std::string> parts, F f) {
  tx::cpu::reset_provider_calls();
  const std::string msg = message_of<tx::Error>(f);
  EXPECT_TRUE(starts_with(msg, "[" + op + "]")) << msg;
  for (const auto& p : parts) EXPECT_HAS(msg, p);
  EXPECT_EQ(total_calls(), 0) << "a provider routine ran before the shape check: " << msg;
}

}  // namespace

TYPED_TEST(Failures, ShapeErrorsBeforeAnyKernel) {
  using T = TypeParam;
  const std::string dt = tx::dtype_traits<T>::name;
  const auto t = [](Shape s) { return Tensor<T>::randn(s, 3); };
  const auto sq = t({3, 3});
  // Non-square where square is needed.
  expect_shape_error("solve", {"[3, 4]", dt}, [&] { la::solve(t({3, 4}), t({3, 2})); });
  expect_shape_error("solve", {"[3, 4]", dt}, [&] { la::solve_ex(t({3, 4}), t({3, 2})); });
  expect_shape_error("inv", {"[3, 4]", dt}, [&] { la::inv(t({3, 4})); });
  expect_shape_error("inv", {"[4, 3, 2]", dt}, [&] { la::inv_ex(t({4, 3, 2})); });
  expect_shape_error("cholesky", {"[3, 4]", dt}, [&] { la::cholesky(t({3, 4})); });
  expect_shape_error("cholesky", {"[3, 4]", dt}, [&] { la::cholesky_ex(t({3, 4}), true); });
  expect_shape_error("eigh", {"[4, 3]", dt}, [&] { la::eigh(t({4, 3})); });
  expect_shape_error("eigvalsh", {"[4, 3]", dt}, [&] { la::eigvalsh(t({4, 3})); });
  expect_shape_error("slogdet", {"[2, 3]", dt}, [&] { la::slogdet(t({2, 3})); });
  // An empty but non-square matrix is still non-square.
  expect_shape_error("solve", {"[0, 3]", dt}, [&] { la::solve(t({0, 3}), t({0, 1})); });
  expect_shape_error("cholesky", {"[3, 0]", dt}, [&] { la::cholesky(t({3, 0})); });
  expect_shape_error("det", {"[2, 3]", dt}, [&] { la::det(t({2, 3})); });
  // Mismatched right-hand sides.
  expect_shape_error("solve", {"[3, 3]", "[4, 2]", dt}, [&] { la::solve(sq, t({4, 2})); });
  expect_shape_error("solve", {"[3, 3]", "[4]", dt}, [&] { la::solve(sq, t({4})); });
  expect_shape_error("solve", {"[3, 3]", "[2, 4]", dt}, [&] { la::solve(sq, t({2, 4}), false); });
  expect_shape_error("solve", {"[3, 3]", "[3, 2]", dt}, [&] { la::solve(sq, t({3, 2}), false); });
  // Batch shapes that do not broadcast.
  expect_shape_error("solve", {"[3, 3, 2]", "[3, 1, 3]", dt}, [&] { la::solve(t({3, 3, 2}), t({3, 1, 3})); });
  expect_shape_error("solve", {"[3, 3, 2]", "[3, 1, 3, 4]", dt}, [&] { la::solve(t({3, 3, 2}), t({3, 1, 3, 4})); });
  expect_shape_error("solve", {"[3, 3, 2]", "[3, 1, 3]", dt}, [&] { la::solve_ex(t({3, 3, 2}), t({3, 1, 3})); });
  // Rank < 2.
  for (const Shape& s : {Shape{3}, Shape{}}) {
    std::ostringstream o;
    o << s;
    const std::string ss = o.str();
    expect_shape_error("solve", {ss, dt}, [&] { la::solve(t(s), t({3, 1})); });
    expect_shape_error("inv", {ss, dt}, [&] { la::inv(t(s)); });
    expect_shape_error("cholesky", {ss, dt}, [&] { la::cholesky(t(s)); });
    expect_shape_error("eigh", {ss, dt}, [&] { la::eigh(t(s)); });
    expect_shape_error("eigvalsh", {ss, dt}, [&] { la::eigvalsh(t(s)); });
    expect_shape_error("slogdet", {ss, dt}, [&] { la::slogdet(t(s)); });
    expect_shape_error("det", {ss, dt}, [&] { la::det(t(s)); });
    expect_shape_error("qr", {ss, dt}, [&] { la::qr(t(s)); });
    expect_shape_error("svd", {ss, dt}, [&] { la::svd(t(s)); });
    expect_shape_error("svdvals", {ss, dt}, [&] { la::svdvals(t(s)); });
    expect_shape_error("lu_factor", {ss, dt}, [&] { la::lu_factor(t(s)); });
    expect_shape_error("lu_factor", {ss, dt}, [&] { la::lu_factor_ex(t(s)); });
  }
  // lu_solve with mismatched factors.
  // Named, not structured, bindings: lambdas below capture them (clang < 16 cannot).
  const auto lu = la::lu_factor(t({3, 3}));
  const auto& LU = lu.first;
  const auto& piv = lu.second;
  expect_shape_error("lu_solve", {"[3, 3]", "[4, 2]"}, [&] { la::lu_solve(LU, piv, t({4, 2})); });
  expect_shape_error("lu_solve", {"[3, 4]"}, [&] { la::lu_solve(t({3, 4}), piv, t({3, 2})); });
  expect_shape_error("lu_solve", {"[2]"}, [&] { la::lu_solve(LU, Tensor<std::int32_t>::ones({2}), t({3, 2})); });
}

TYPED_TEST(Failures, ShapeErrorMessagesNameTheDtype) {
  // Every message above names the dtype, including lu_solve's.
  using T = TypeParam;
  const std::string dt = tx::dtype_traits<T>::name;
  const auto t = [](Shape s) { return Tensor<T>::randn(s, 3); };
  // Named, not structured, bindings: lambdas below capture them (clang < 16 cannot).
  const auto lu = la::lu_factor(t({3, 3}));
  const auto& LU = lu.first;
  const auto& piv = lu.second;
  expect_shape_error("lu_solve", {"[3, 3]", "[4, 2]", dt}, [&] { la::lu_solve(LU, piv, t({4, 2})); });
  expect_shape_error("lu_solve", {"[2]", dt}, [&] { la::lu_solve(LU, Tensor<std::int32_t>::ones({2}), t({3, 2})); });
  expect_shape_error("lu_solve", {"[3, 3, 2]", "[3, 1, 3]", dt}, [&] {
    la::lu_solve(t({3, 3, 2}), Tensor<std::int32_t>::ones({3, 2}), t({3, 1, 3}));
  });
  // The triangular ops name both shapes and the dtype, for the order and for the batch.
  for (const bool left : {true, false}) {
    expect_shape_error("solve_triangular", {"[3, 3]", "[4, 4]", dt}, [&] {
      la::solve_triangular(t({3, 3}), t({4, 4}), false, left);
    });
    expect_shape_error("solve_triangular", {"[3, 3, 2]", "[3, 3, 3]", dt}, [&] {
      la::solve_triangular(t({3, 3, 2}), t({3, 3, 3}), false, left);
    });
    expect_shape_error("triangular_matmul", {"[3, 3, 2]", "[3, 3, 3]", dt}, [&] {
      la::triangular_matmul(t({3, 3, 2}), t({3, 3, 3}), false, left);
    });
  }
  // An undefined operand is named by the op, not only as an undefined tensor.
  expect_shape_error("solve", {"undefined input B", "[3, 3]"}, [&] { la::solve(t({3, 3}), Tensor<T>()); });
  expect_shape_error("lu_solve", {"undefined pivots"}, [&] { la::lu_solve(LU, Tensor<std::int32_t>(), t({3, 2})); });
  expect_shape_error("lu_solve", {"undefined input B"}, [&] { la::lu_solve(LU, piv, Tensor<T>()); });
  expect_shape_error("lu_solve", {"undefined input LU"}, [&] { la::lu_solve(Tensor<T>(), piv, t({3, 2})); });
  expect_shape_error("solve_triangular", {"undefined input B"}, [&] {
    la::solve_triangular(t({3, 3}), Tensor<T>(), false);
  });
  expect_shape_error("solve_triangular", {"undefined input A"}, [&] {
    la::solve_triangular(Tensor<T>(), t({3, 3}), false);
  });
  expect_shape_error("qr", {"undefined input A"}, [&] { la::qr(Tensor<T>()); });
  // A non-matrix or non-square operand is named too.
  expect_shape_error("lu_solve", {"expected B to be a matrix", "[3]", dt}, [&] { la::lu_solve(LU, piv, t({3})); });
  expect_shape_error("lu_solve", {"expected LU to hold square matrices", "[3, 2]", dt}, [&] {
    la::lu_solve(t({3, 2}), piv, t({3, 2}));
  });
  expect_shape_error("cholesky", {"expected A to hold square matrices", "[3, 2]", dt}, [&] {
    la::cholesky(t({3, 2}));
  });
}

// ---- empty matrices ------------------------------------------------------------------------------
namespace {

// Records x, evaluates loss(x) (a real scalar built from the op's outputs), runs backward, and
// checks the gradient has x's shape.
template <class T, class F>
void expect_empty_grad(const char* op, const Tensor<T>& x, F loss) {
  SCOPED_TRACE(op);
  const Tensor<T> xr = x.requires_grad();
  try {
    loss(xr).backward();
  } catch (const std::exception& e) {
    ADD_FAILURE() << op << " on shape " << x.shape() << ": the backward pass threw: " << e.what();
    return;
  }
  ASSERT_TRUE(xr.grad().defined()) << op << " on shape " << x.shape() << ": no gradient";
  EXPECT_EQ(xr.grad().shape(), x.shape()) << op;
}

template <class T>
Tensor<real_t<T>> rsum(const Tensor<T>& y) {
  if constexpr (is_complex_v<T>)
    return sum(real(y));
  else
    return sum(y);
}

}  // namespace

TYPED_TEST(Failures, EmptySquareMatrices) {
  using T = TypeParam;
  using R = real_t<T>;
  // (shape of A, batch shape)
  const std::vector<std::pair<Shape, Shape>> cases{{{0, 0}, {}}, {{0, 0, 2}, {2}}, {{3, 3, 0}, {0}}, {{0, 0, 0}, {0}}};
  for (const auto& c : cases) {
    const auto& s = c.first;
    const auto& batch = c.second;
    std::ostringstream o;
    o << "A of shape " << s;
    SCOPED_TRACE(o.str());
    const std::int64_t n = s[0];
    const Tensor<T> A = Tensor<T>::zeros(s);
    const auto mshape = [&](std::int64_t r, std::int64_t c) { return tx::detail::with_batch(r, c, batch); };
    Shape vshape{n};
    for (auto d : batch) vshape.push_back(d);
    // solve: X has B's shape; gradients for A and B.
    const Tensor<T> B = Tensor<T>::zeros(mshape(n, 2));
    EXPECT_EQ(la::solve(A, B).shape(), mshape(n, 2));
    EXPECT_EQ(la::solve_ex(A, B).second.shape(), batch);
    {
      const Tensor<T> Ar = A.requires_grad(), Br = B.requires_grad();
      rsum(la::solve(Ar, Br)).backward();
      ASSERT_TRUE(Ar.grad().defined() && Br.grad().defined());
      EXPECT_EQ(Ar.grad().shape(), s);
      EXPECT_EQ(Br.grad().shape(), B.shape());
    }
    EXPECT_EQ(la::inv(A).shape(), s);
    expect_empty_grad("inv", A, [](const Tensor<T>& a) { return rsum(la::inv(a)); });
    // qr
    auto [Q, Rr] = la::qr(A);
    EXPECT_EQ(Q.shape(), s);
    EXPECT_EQ(Rr.shape(), s);
    expect_empty_grad("qr", A, [](const Tensor<T>& a) {
      auto [q, r] = la::qr(a);
      return add(rsum(q), rsum(r));
    });
    // eigh / eigvalsh
    auto [w, V] = la::eigh(A);
    EXPECT_EQ(w.shape(), vshape);
    EXPECT_EQ(V.shape(), s);
    expect_empty_grad("eigh", A, [](const Tensor<T>& a) {
      auto [ww, vv] = la::eigh(a);
      return add(sum(ww), rsum(vv));
    });
    expect_empty_grad("eigvalsh", A, [](const Tensor<T>& a) { return sum(la::eigvalsh(a)); });
    // svd / svdvals
    EXPECT_EQ(la::svdvals(A).shape(), vshape);
    expect_empty_grad("svdvals", A, [](const Tensor<T>& a) { return sum(la::svdvals(a)); });
    expect_empty_grad("svd", A, [](const Tensor<T>& a) {
      auto [u, ss, vh] = la::svd(a);
      return add(add(rsum(u), sum(ss)), rsum(vh));
    });
    // cholesky
    EXPECT_EQ(la::cholesky(A).shape(), s);
    EXPECT_EQ(la::cholesky_ex(A).second.shape(), batch);
    expect_empty_grad("cholesky", A, [](const Tensor<T>& a) { return rsum(la::cholesky(a)); });
    // det / slogdet: the determinant of a 0 x 0 matrix is 1 (sign 1, log|det| 0).
    auto [sg, ld] = la::slogdet(A);
    EXPECT_EQ(sg.shape(), batch);
    EXPECT_EQ(ld.shape(), batch);
    const Tensor<T> d = la::det(A);
    EXPECT_EQ(d.shape(), batch);
    if (n == 0) {
      for (T v : sg.to_vector()) EXPECT_EQ(v, T(1));
      for (R v : ld.to_vector()) EXPECT_EQ(v, R(0));
      for (T v : d.to_vector()) EXPECT_EQ(v, T(1));
    }
    expect_empty_grad("slogdet", A, [](const Tensor<T>& a) { return sum(la::slogdet(a).second); });
    expect_empty_grad("det", A, [](const Tensor<T>& a) { return rsum(la::det(a)); });
    // lu
    auto [P, L, U] = la::lu(A);
    EXPECT_EQ(L.shape(), s);
    expect_empty_grad("lu", A, [](const Tensor<T>& a) {
      auto [p, l, u] = la::lu(a);
      return add(rsum(l), rsum(u));
    });
  }
}

TYPED_TEST(Failures, EmptyRectangularMatrices) {
  using T = TypeParam;
  for (const Shape& s : {Shape{0, 3}, Shape{3, 0}, Shape{0, 3, 2}, Shape{4, 3, 0}}) {
    std::ostringstream o;
    o << "A of shape " << s;
    SCOPED_TRACE(o.str());
    const std::int64_t m = s[0], n = s[1], k = std::min(m, n);
    const Tensor<T> A = Tensor<T>::zeros(s);
    const Shape batch = tx::detail::mat_batch_shape(s);
    const auto mshape = [&](std::int64_t r, std::int64_t c) { return tx::detail::with_batch(r, c, batch); };
    auto [Q, R] = la::qr(A);
    EXPECT_EQ(Q.shape(), mshape(m, k));
    EXPECT_EQ(R.shape(), mshape(k, n));
    expect_empty_grad("qr", A, [](const Tensor<T>& a) {
      auto [q, r] = la::qr(a);
      return add(rsum(q), rsum(r));
    });
    Shape sv{k};
    for (auto d : batch) sv.push_back(d);
    EXPECT_EQ(la::svdvals(A).shape(), sv);
    expect_empty_grad("svdvals", A, [](const Tensor<T>& a) { return sum(la::svdvals(a)); });
    auto [U, S, Vh] = la::svd(A);
    EXPECT_EQ(U.shape(), mshape(m, k));
    EXPECT_EQ(S.shape(), sv);
    EXPECT_EQ(Vh.shape(), mshape(k, n));
    expect_empty_grad("svd", A, [](const Tensor<T>& a) {
      auto [u, ss, vh] = la::svd(a);
      return add(add(rsum(u), sum(ss)), rsum(vh));
    });
    // Full factors of an empty A are identities (m x m and n x n), as is complete QR's Q.
    const auto eye_of = [&](std::int64_t r) {
      return tx::contiguous(tx::expand(Tensor<T>::eye(r), mshape(r, r))).to_vector();
    };
    auto [Uf, Sf, Vhf] = la::svd(A, true);
    EXPECT_EQ(Uf.shape(), mshape(m, m));
    EXPECT_EQ(Vhf.shape(), mshape(n, n));
    EXPECT_EQ(Uf.to_vector(), eye_of(m));
    EXPECT_EQ(Vhf.to_vector(), eye_of(n));
    auto [Qc, Rc] = la::qr(A, la::QrMode::Complete);
    EXPECT_EQ(Qc.shape(), mshape(m, m));
    EXPECT_EQ(Rc.shape(), mshape(m, n));
    EXPECT_EQ(Qc.to_vector(), eye_of(m));
    auto [P, L, Uu] = la::lu(A);
    EXPECT_EQ(P.shape(), mshape(m, m));
    EXPECT_EQ(L.shape(), mshape(m, k));
    EXPECT_EQ(Uu.shape(), mshape(k, n));
    expect_empty_grad("lu", A, [](const Tensor<T>& a) {
      auto [p, l, u] = la::lu(a);
      return add(rsum(l), rsum(u));
    });
  }
}

TYPED_TEST(Failures, EmptyRightHandSide) {
  using T = TypeParam;
  // n x 0 right-hand sides: an empty solution, a zero gradient for A, an empty one for B.
  const Tensor<T> A = well_conditioned<T>(3, 21);
  for (const Shape& bs : {Shape{3, 0}, Shape{3, 0, 2}}) {
    const Tensor<T> Ab = bs.size() == 2 ? A : tx::stack<T>({A, A}, 2);
    const Tensor<T> Ar = Ab.requires_grad(), Br = Tensor<T>::zeros(bs).requires_grad();
    const Tensor<T> X = la::solve(Ar, Br);
    EXPECT_EQ(X.shape(), bs);
    rsum(X).backward();
    ASSERT_TRUE(Ar.grad().defined() && Br.grad().defined());
    EXPECT_EQ(Ar.grad().shape(), Ab.shape());
    EXPECT_EQ(Br.grad().shape(), bs);
    for (T v : Ar.grad().to_vector()) EXPECT_EQ(v, T(0));
  }
}

// Fuzz findings: empty matrices with an astronomically large batch (numel 0) must not allocate per
// batch element or loop over it: ops whose outputs are empty return at once, ops with batch-shaped
// outputs (info, determinants) fail their allocation with a tenax::Error.
TYPED_TEST(Failures, EmptyMatricesWithAHugeBatch) {
  using T = TypeParam;
  const std::int64_t huge = std::int64_t{1} << 40;
  const Tensor<T> A = Tensor<T>::zeros({0, 0, huge}), B = Tensor<T>::zeros({0, 2, huge});
  within(10, "solve_triangular", [=] { EXPECT_EQ(la::solve_triangular(A, B, true).numel(), 0); });
  within(10, "matmul", [=] { EXPECT_EQ(tx::matmul(A, B).numel(), 0); });
  for (const char* op : {"solve", "lu_factor", "cholesky", "det", "eigvalsh", "svdvals"}) {
    within(10, op, [=] {
      try {
        const std::string o = op;
        if (o == "solve") (void)la::solve(A, B);
        if (o == "lu_factor") (void)la::lu_factor(A);
        if (o == "cholesky") (void)la::cholesky(A);
        if (o == "det") (void)la::det(A);
        if (o == "eigvalsh") (void)la::eigvalsh(A);
        if (o == "svdvals") (void)la::svdvals(A);
      } catch (const tx::Error&) {
        // the batch-shaped outputs cannot be allocated: a clear error is the right outcome
      }
    });
  }
}
