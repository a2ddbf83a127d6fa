// The function transforms over several inputs and outputs (vjp, jvp, hvp, argnums) and the full
// Jacobians and Hessians (jacrev, jacfwd, hessian): values against closed forms, finite differences
// and loops of single jvp/vjp calls, their layout, complex conventions, nesting, linalg ops, errors,
// and traced == compiled == eager bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include <tenax/tenax.hpp>

#include "support/expect.hpp"
#include "support/matrices.hpp"
#include "support/messages.hpp"
#include "trace/trace_support.hpp"

namespace tx = tenax;
using tx::testing::expect_close;
using tx::testing::expect_error;

namespace {

using TD = tx::Tensor<double>;
using TZ = tx::Tensor<tx::c128>;

// A column-major m x n matrix of the Jacobian block J (shape y ++ x).
template <class T>
tx::Tensor<T> as_matrix(const tx::Tensor<T>& J, std::int64_t m) {
  return tx::reshape(J, tx::Shape{m, J.numel() / m});
}

// The Jacobian of f at x (real, one input, one output) by central differences, as an m x n matrix.
template <class F>
TD fd_jacobian(F f, const TD& x) {
  const std::int64_t n = x.numel();
  const std::vector<double> xv = x.to_vector();
  std::vector<double> cols;
  std::int64_t m = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    const double h = 1e-6 * std::max(1.0, std::abs(xv[static_cast<std::size_t>(j)]));
    auto at = [&](double s) {
      std::vector<double> v = xv;
      v[static_cast<std::size_t>(j)] += s * h;
      return f(TD::from_col_major(x.shape(), v)).to_vector();
    };
    const auto p = at(1), q = at(-1);
    m = static_cast<std::int64_t>(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) cols.push_back((p[i] - q[i]) / (2 * h));
  }
  return TD::from_col_major({m, n}, cols);
}

TD mlp_like(const TD& W, const TD& x) { return tx::tanh(tx::matmul(W, x)); }

TEST(Jacobian, VectorMapClosedFormAndLayout) {
  const TD W = TD::randn({4, 5}, 1), x = TD::randn({5, 1}, 2);
  auto f = [&](const TD& v) { return mlp_like(W, v); };
  const TD Jr = tx::jacrev(f, x), Jf = tx::jacfwd(f, x);
  ASSERT_EQ(Jr.shape(), (tx::Shape{4, 1, 5, 1}));
  ASSERT_EQ(Jf.shape(), (tx::Shape{4, 1, 5, 1}));
  // J = diag(1 - tanh(Wx)^2) W.
  const TD t = tx::tanh(tx::matmul(W, x));
  const TD want = tx::mul(tx::rsub(tx::mul(t, t), 1.0), W);
  expect_close(as_matrix(Jr, 4), want, 1e-13, "jacrev");
  expect_close(as_matrix(Jf, 4), want, 1e-13, "jacfwd");
  expect_close(as_matrix(Jr, 4), fd_jacobian(f, x), 1e-8, "jacrev vs finite differences");
}

TEST(Jacobian, MatrixShapesColumnsAreJvpsRowsAreVjps) {
  // y: 3 x 2 from x: 2 x 2; the block has shape [3, 2, 2, 2]; as a 6 x 4 matrix its column j is
  // J e_j (a jvp) and its row i is J^T e_i (a vjp), both flattened column-major.
  const TD A = TD::randn({3, 2}, 3), x = TD::randn({2, 2}, 4);
  auto f = [&](const TD& v) { return tx::exp(tx::matmul(A, tx::sin(v))); };
  const TD Jr = tx::jacrev(f, x), Jf = tx::jacfwd(f, x);
  ASSERT_EQ(Jr.shape(), (tx::Shape{3, 2, 2, 2}));
  const TD M = as_matrix(Jr, 6);
  expect_close(as_matrix(Jf, 6), M, 1e-14, "jacfwd == jacrev");
  const auto [y, pull] = tx::vjp(f, x);
  for (std::int64_t j = 0; j < 4; ++j) {
    std::vector<double> e(4, 0.0);
    e[static_cast<std::size_t>(j)] = 1;
    const TD col = tx::jvp(f, x, TD::from_col_major({2, 2}, e)).second;
    expect_close(tx::reshape(col, {6}), tx::reshape(tx::slice(M, 1, j, j + 1, 1), {6}), 1e-14,
                 "column " + std::to_string(j));
  }
  for (std::int64_t i = 0; i < 6; ++i) {
    std::vector<double> e(6, 0.0);
    e[static_cast<std::size_t>(i)] = 1;
    const TD row = pull(TD::from_col_major({3, 2}, e));
    expect_close(tx::reshape(row, {4}), tx::reshape(tx::slice(M, 0, i, i + 1, 1), {4}), 1e-14,
                 "row " + std::to_string(i));
  }
}

TEST(Jacobian, SeveralInputsAndOutputs) {
  const TD x = TD::randn({3}, 5), y = TD::randn({3}, 6);
  auto f = [](const TD& a, const TD& b) { return std::tuple{tx::mul(a, tx::square(b)), tx::sum(tx::exp(a))}; };
  const auto Jr = tx::jacrev(f, x, y);
  const auto Jf = tx::jacfwd(f, x, y);
  // d(a b^2)/da = diag(b^2), d(a b^2)/db = diag(2 a b), d(sum exp a)/da = exp(a), /db = 0.
  const TD d0 = std::get<0>(std::get<0>(Jr)), d1 = std::get<1>(std::get<0>(Jr));
  const TD s0 = std::get<0>(std::get<1>(Jr)), s1 = std::get<1>(std::get<1>(Jr));
  ASSERT_EQ(d0.shape(), (tx::Shape{3, 3}));
  ASSERT_EQ(s0.shape(), (tx::Shape{3}));  // a scalar output: the input's shape
  const TD I = TD::eye(3);
  expect_close(d0, tx::mul(I, tx::reshape(tx::square(y), {3, 1})), 1e-14, "d0");
  expect_close(d1, tx::mul(I, tx::reshape(tx::mul(tx::mul(x, y), 2.0), {3, 1})), 1e-14, "d1");
  expect_close(s0, tx::exp(x), 1e-14, "s0");
  EXPECT_EQ(s1.to_vector(), std::vector<double>(3, 0.0));
  expect_close(std::get<1>(std::get<0>(Jf)), d1, 1e-15, "jacfwd d1");
  expect_close(std::get<0>(std::get<1>(Jf)), s0, 1e-15, "jacfwd s0");
}

TEST(Jacobian, ThroughLinalgAgainstFiniteDifferences) {
  const TD A = tx::testing::spd<double>(4, {}, 7), b = TD::randn({4, 2}, 8);
  auto f = [&](const TD& M) { return tx::linalg::solve(M, b); };
  const TD Jr = tx::jacrev(f, A), Jf = tx::jacfwd(f, A);
  ASSERT_EQ(Jr.shape(), (tx::Shape{4, 2, 4, 4}));
  expect_close(as_matrix(Jr, 8), fd_jacobian(f, A), 1e-7, "solve: jacrev vs fd");
  expect_close(as_matrix(Jf, 8), as_matrix(Jr, 8), 1e-13, "solve: jacfwd vs jacrev");
  auto g = [](const TD& M) { return tx::linalg::eigvalsh(tx::add(M, tx::transpose(M, 0, 1))); };
  expect_close(as_matrix(tx::jacrev(g, A), 4), fd_jacobian(g, A), 1e-7, "eigvalsh: jacrev vs fd");
  expect_close(tx::jacfwd(g, A), tx::jacrev(g, A), 1e-12, "eigvalsh: jacfwd vs jacrev");
}

TEST(Jacobian, ComplexConventions) {
  // Holomorphic: f(z) = z^2 + M z has J = diag(2z) + M, from both modes.
  const TZ M = TZ::randn({3, 3}, 9), z = TZ::randn({3}, 10);
  auto f = [&](const TZ& v) { return tx::add(tx::mul(v, v), tx::reshape(tx::matmul(M, tx::reshape(v, {3, 1})), {3})); };
  const TZ want = tx::add(tx::mul(TZ::eye(3), tx::reshape(tx::mul(z, tx::c128(2)), {3, 1})), M);
  expect_close(tx::jacrev(f, z), want, 1e-14, "holomorphic jacrev");
  expect_close(tx::jacfwd(f, z), want, 1e-14, "holomorphic jacfwd");
  // A real input of a complex output: J's real directions, from both modes (jacrev with two
  // pullbacks per row). g(x) = (1 + 2i) x^2 + i x has J = diag((2 + 4i) x + i).
  const TD x = TD::randn({3}, 11);
  auto g = [](const TD& v) {
    const TZ c = tx::cast<tx::c128>(v);
    return tx::add(tx::mul(tx::mul(c, c), tx::c128(1, 2)), tx::mul(c, tx::c128(0, 1)));
  };
  std::vector<tx::c128> d;
  for (double v : x.to_vector()) d.push_back(tx::c128(2 * v, 4 * v + 1));
  const TZ wantg = tx::mul(TZ::eye(3), TZ::from_col_major({3, 1}, d));
  expect_close(tx::jacrev(g, x), wantg, 1e-14, "real -> complex jacrev");
  expect_close(tx::jacfwd(g, x), wantg, 1e-14, "real -> complex jacfwd");
  // A real output of a complex input has no complex-linear Jacobian.
  auto h = [](const TZ& v) { return tx::abs(v); };
  expect_error([&] { tx::jacrev(h, z); }, "[jacrev] a real output (f64) of a complex input (c128)");
  expect_error([&] { tx::jacfwd(h, z); }, "[jacfwd] a real output (f64) of a complex input (c128)");
}

TEST(Hessian, ClosedFormAndHvpLoops) {
  const TD A = TD::randn({4, 4}, 12), x = TD::randn({4, 1}, 13);
  auto f = [&](const TD& v) {
    return tx::add(tx::sum(tx::mul(tx::square(v), v)), tx::sum(tx::mul(v, tx::matmul(A, v))));
  };
  const TD H = tx::hessian(f, x);
  ASSERT_EQ(H.shape(), (tx::Shape{4, 1, 4, 1}));
  // H = diag(6 x) + A + A^T.
  const TD want = tx::add(tx::mul(TD::eye(4), tx::mul(x, 6.0)), tx::add(A, tx::transpose(A, 0, 1)));
  expect_close(as_matrix(H, 4), want, 1e-13, "closed form");
  for (std::int64_t j = 0; j < 4; ++j) {
    std::vector<double> e(4, 0.0);
    e[static_cast<std::size_t>(j)] = 1;
    const TD hv = tx::hvp(f, x, TD::from_col_major({4, 1}, e));
    expect_close(tx::reshape(hv, {4}), tx::reshape(tx::slice(as_matrix(H, 4), 1, j, j + 1, 1), {4}), 1e-13,
                 "hvp column");
  }
}

TEST(Hessian, BatchedReversePassAgainstHvpLoops) {
  // An mlp loss (matmul, broadcast bias, relu, mean of squares) in W: every op of its gradient's
  // graph takes batched cotangents, so the Hessian's rows come from one reverse pass. Against hvp
  // (forward over reverse, one direction at a time) and jacfwd of grad (full passes: grad runs a
  // backward pass of its own). jacrev of the loss's vector residual is checked against jacfwd.
  const TD X = TD::randn({6, 3}, 51), T = TD::randn({6, 2}, 52), b = TD::randn({1, 2}, 53), W = TD::randn({3, 2}, 54);
  auto residual = [&](const TD& w) { return tx::sub(tx::relu(tx::add(tx::matmul(X, w), b)), T); };
  auto loss = [&](const TD& w) { return tx::mean(tx::square(residual(w))); };
  const TD H = tx::hessian(loss, W);
  ASSERT_EQ(H.shape(), (tx::Shape{3, 2, 3, 2}));
  const TD Hm = as_matrix(H, 6);
  for (std::int64_t j = 0; j < 6; ++j) {
    std::vector<double> e(6, 0.0);
    e[static_cast<std::size_t>(j)] = 1;
    const TD hv = tx::hvp(loss, W, TD::from_col_major({3, 2}, e));
    expect_close(tx::reshape(hv, {6}), tx::reshape(tx::slice(Hm, 1, j, j + 1, 1), {6}), 1e-14,
                 "hvp column " + std::to_string(j));
  }
  expect_close(H, tx::jacfwd([&](const TD& w) { return tx::grad(loss, w); }, W), 1e-14, "jacfwd of grad");
  expect_close(tx::jacrev(residual, W), tx::jacfwd(residual, W.requires_grad()), 1e-14, "jacrev vs full jvps");
  tx::ttest::expect_compiled_matches_eager(
      "hessian", [&](const TD& w) { return tx::hessian(loss, w); }, std::tuple{W}, std::tuple{tx::mul(W, 0.5)});
}

TEST(Hessian, SeveralInputsThroughLinalg) {
  // f(A, b) = b^T A^-1 b for SPD A: blocks H[i][j] = d grad_i / d x_j, each against finite
  // differences of the gradient, and the tuple hvp against the blocks.
  const TD A = tx::testing::spd<double>(3, {}, 14), b = TD::randn({3, 1}, 15);
  auto f = [](const TD& M, const TD& v) { return tx::sum(tx::mul(v, tx::linalg::solve(M, v))); };
  const auto H = tx::hessian(f, A, b);
  const TD HAA = std::get<0>(std::get<0>(H)), HAb = std::get<1>(std::get<0>(H));
  const TD HbA = std::get<0>(std::get<1>(H)), Hbb = std::get<1>(std::get<1>(H));
  ASSERT_EQ(HAA.shape(), (tx::Shape{3, 3, 3, 3}));
  ASSERT_EQ(HAb.shape(), (tx::Shape{3, 3, 3, 1}));
  ASSERT_EQ(HbA.shape(), (tx::Shape{3, 1, 3, 3}));
  auto gA = [&](const TD& M) { return std::get<0>(tx::grad(f, M, b)); };
  auto gb = [&](const TD& v) { return std::get<1>(tx::grad(f, A, v)); };
  expect_close(as_matrix(HAA, 9), fd_jacobian(gA, A), 1e-6, "H_AA");
  expect_close(as_matrix(Hbb, 3), fd_jacobian(gb, b), 1e-6, "H_bb");
  // Symmetry of the mixed blocks: H_Ab (9 x 3) is H_bA (3 x 9) transposed.
  expect_close(as_matrix(HAb, 9), tx::transpose(as_matrix(HbA, 3), 0, 1), 1e-12, "H_Ab = H_bA^T");
  const TD vA = TD::randn({3, 3}, 16), vb = TD::randn({3, 1}, 17);
  const auto [hA, hb] = tx::hvp(f, std::tuple{A, b}, std::tuple{vA, vb});
  const TD wantA = tx::add(tx::reshape(tx::matmul(as_matrix(HAA, 9), tx::reshape(vA, {9, 1})), {3, 3}),
                           tx::reshape(tx::matmul(as_matrix(HAb, 9), vb), {3, 3}));
  expect_close(hA, wantA, 1e-12, "tuple hvp, A part");
  const TD wantb = tx::add(tx::matmul(as_matrix(HbA, 3), tx::reshape(vA, {9, 1})), tx::matmul(as_matrix(Hbb, 3), vb));
  expect_close(hb, wantb, 1e-12, "tuple hvp, b part");
}

TEST(Transforms, SeveralInputsVjpJvpAndArgnums) {
  const TD x = TD::randn({2, 3}, 18), y = TD::randn({3, 2}, 19), z = TD::randn({2, 2}, 20);
  auto f = [](const TD& a, const TD& b, const TD& c) { return std::pair{tx::matmul(a, b), tx::mul(c, tx::sum(a))}; };
  const auto [val, pull] = tx::vjp(f, x, y, z);
  const TD g0 = TD::randn({2, 2}, 21), g1 = TD::randn({2, 2}, 22);
  const auto [gx, gy, gz] = pull(std::pair{g0, g1});
  // L = <g0, a b> + <g1, c sum(a)>: gx = g0 b^T + sum(g1 c), gy = a^T g0, gz = g1 sum(a).
  expect_close(gx, tx::add(tx::matmul(g0, tx::transpose(y, 0, 1)), tx::sum(tx::mul(g1, z))), 1e-14, "gx");
  expect_close(gy, tx::matmul(tx::transpose(x, 0, 1), g0), 1e-14, "gy");
  expect_close(gz, tx::mul(g1, tx::sum(x)), 1e-14, "gz");
  // An undefined cotangent in a structure is zero.
  const auto [hx, hy, hz] = pull(std::pair{g0, TD()});
  expect_close(hx, tx::matmul(g0, tx::transpose(y, 0, 1)), 1e-14, "zero second cotangent");
  EXPECT_EQ(hz.to_vector(), std::vector<double>(4, 0.0));
  // jvp over a tuple of primals; an undefined tangent is zero; <g, J d> == <J^T g, d>.
  const TD dx = TD::randn({2, 3}, 23), dz = TD::randn({2, 2}, 24);
  const auto [v2, t2] = tx::jvp(f, std::tuple{x, y, z}, std::tuple{dx, TD(), dz});
  tx::ttest::expect_bitwise(v2.first, val.first, "jvp value");
  const double lhs = tx::sum(tx::mul(g0, t2.first)).item() + tx::sum(tx::mul(g1, t2.second)).item();
  const double rhs = tx::sum(tx::mul(gx, dx)).item() + tx::sum(tx::mul(gz, dz)).item();
  EXPECT_NEAR(lhs, rhs, 1e-12 * std::abs(rhs));
  // argnums: the gradients of the chosen arguments only.
  auto loss = [](const TD& a, const TD& b, const TD& c) { return tx::sum(tx::mul(tx::matmul(a, b), c)); };
  const auto all = tx::grad(loss, x, y, z);
  const auto [ga, gc] = tx::grad(loss, tx::argnums<0, 2>, x, y, z);
  tx::ttest::expect_bitwise(ga, std::get<0>(all), "argnums 0");
  tx::ttest::expect_bitwise(gc, std::get<2>(all), "argnums 2");
  const TD only_b = tx::grad(loss, tx::argnums<1>, x, y, z);
  tx::ttest::expect_bitwise(only_b, std::get<1>(all), "argnums 1");
  const TD Jb = tx::jacrev([](const TD& a, const TD& b) { return tx::matmul(a, b); }, tx::argnums<1>, x, y);
  EXPECT_EQ(Jb.shape(), (tx::Shape{2, 2, 3, 2}));
}

TEST(Transforms, NestedJacobians) {
  // jacfwd of jacrev and jacrev of jacfwd are the Hessian (of a scalar function).
  const TD x = TD::randn({3}, 25);
  auto f = [](const TD& v) { return tx::sum(tx::mul(tx::sin(v), tx::exp(tx::mul(v, 0.5)))); };
  auto gr = [&](const TD& v) { return tx::jacrev(f, v); };
  auto gf = [&](const TD& v) { return tx::jacfwd(f, v); };
  const TD H = tx::hessian(f, x);
  expect_close(tx::jacfwd(gr, x), H, 1e-13, "jacfwd(jacrev)");
  expect_close(tx::jacrev(gf, x), H, 1e-13, "jacrev(jacfwd)");
  expect_close(tx::jacfwd(gf, x), H, 1e-13, "jacfwd(jacfwd)");
  // The gradient of a function of a Jacobian: d/dx sum(J(x)^2) against finite differences.
  auto k = [&](const TD& v) {
    return tx::sum(tx::square(tx::jacrev([](const TD& u) { return tx::sin(tx::mul(u, u)); }, v)));
  };
  expect_close(tx::reshape(tx::grad(k, x), {1, 3}), fd_jacobian(k, x), 1e-7, "grad of a Jacobian");
}

TEST(Transforms, TracedAndCompiledBitForBit) {
  const TD W = TD::randn({3, 4}, 26), x0 = TD::randn({4, 1}, 27), x1 = TD::randn({4, 1}, 28);
  auto f = [&](const TD& v) { return mlp_like(W, v); };
  auto loss = [&](const TD& v) { return tx::sum(tx::square(mlp_like(W, v))); };
  tx::ttest::expect_compiled_matches_eager(
      "jacrev", [&](const TD& v) { return tx::jacrev(f, v); }, std::tuple{x0}, std::tuple{x1});
  tx::ttest::expect_compiled_matches_eager(
      "jacfwd", [&](const TD& v) { return tx::jacfwd(f, v); }, std::tuple{x0}, std::tuple{x1});
  tx::ttest::expect_compiled_matches_eager(
      "hessian", [&](const TD& v) { return tx::hessian(loss, v); }, std::tuple{x0}, std::tuple{x1});
  // Batched through solve (whose rules move the directions into the right-hand side's columns).
  const TD S = tx::testing::spd<double>(4, {}, 30);
  auto sm = [&](const TD& v) { return tx::linalg::solve(S, tx::tanh(v)); };
  tx::ttest::expect_compiled_matches_eager(
      "jacrev of solve", [&](const TD& v) { return tx::jacrev(sm, v); }, std::tuple{x0}, std::tuple{x1});
  tx::ttest::expect_compiled_matches_eager(
      "jacfwd of solve", [&](const TD& v) { return tx::jacfwd(sm, v); }, std::tuple{x0}, std::tuple{x1});
  // The graph transforms: jacrev(trace(f)) compiled == eager jacrev.
  const auto g = tx::trace(f, x0);
  const auto p = tx::compile(tx::jacrev(g));
  tx::ttest::expect_bitwise(p(x1), tx::jacrev(f, x1), "compile(jacrev(trace(f)))");
  tx::ttest::expect_bitwise(tx::compile(tx::jacfwd(g))(x1), tx::jacfwd(f, x1), "compile(jacfwd(trace(f)))");
  tx::ttest::expect_bitwise(tx::compile(tx::hessian(tx::trace(loss, x0)))(x1), tx::hessian(loss, x1),
                            "compile(hessian(trace(loss)))");
}

TEST(Jacobian, JacfwdReplayEqualsFullPassesBitForBit) {
  // At the top level jacfwd replays the recorded tangent steps; an input that requires grad (so that
  // the Jacobian is differentiable) takes a full jvp per direction. Same rules on the same values.
  const TD A = tx::testing::spd<double>(4, {}, 31), x = TD::randn({4, 2}, 32);
  const auto cexp = tx::custom_op(
      "cexp", [](const TD& v) { return tx::exp(v); }, [](const TD&, const TD& y, const TD& d) { return tx::mul(d, y); },
      [](const TD&, const TD& y, const TD& g) { return tx::mul(g, y); });
  auto f = [&](const TD& v) {
    const TD h = tx::checkpoint([&](const TD& u) { return tx::tanh(tx::matmul(A, u)); }, v);
    return std::tuple{tx::linalg::solve(A, cexp(h)), tx::sum(tx::square(v))};
  };
  const auto fast = tx::jacfwd(f, x);
  const auto full = tx::jacfwd(f, x.requires_grad());
  tx::ttest::expect_bitwise(std::get<0>(fast), std::get<0>(full), "solve block");
  tx::ttest::expect_bitwise(std::get<1>(fast), std::get<1>(full), "sum block");
  expect_close(std::get<0>(fast), std::get<0>(tx::jacrev(f, x)), 1e-13, "jacfwd vs jacrev");
  // A function that runs a backward pass of its own (grad inside) is not replayed: still right.
  auto g = [](const TD& v) { return tx::grad([](const TD& u) { return tx::sum(tx::mul(tx::sin(u), u)); }, v); };
  expect_close(tx::jacfwd(g, x), tx::hessian([](const TD& u) { return tx::sum(tx::mul(tx::sin(u), u)); }, x), 1e-13,
               "jacfwd of grad");
}

TEST(Jacobian, JacfwdBatchedDirectionsAgreeWithFullPasses) {
  // Functions made only of ops whose JVP rules take a batch of tangents: jacfwd pushes all
  // directions at once. Against full jvp passes per direction (an input that requires grad) and
  // jacrev. The values mix ranks (a vector input against matrices, a rank-3 batch), broadcast a
  // bias, reduce (sum, mean, keepdim or not), reshape, transpose, expand, slice and cast.
  const TD M = TD::randn({3, 4}, 41), B = TD::randn({4, 3, 3}, 42), b = TD::randn({1, 4}, 43);
  auto check = [](auto f, const auto& x, const std::string& what) {
    const auto fast = tx::jacfwd(f, x);
    const auto full = tx::jacfwd(f, x.requires_grad());
    EXPECT_EQ(fast.shape(), full.shape()) << what;
    expect_close(fast, full, 1e-14, what + ": batched vs full passes");
    expect_close(fast, tx::jacrev(f, x), 1e-13, what + ": batched vs jacrev");
    EXPECT_EQ(tx::jacfwd_plan(f, x).modes[0], tx::JacfwdPlan::Mode::batched) << what;
  };
  // A vector (rank 1) scaling the rows of a matrix: its tangent is padded to the matrix's rank.
  check([&](const TD& v) { return tx::tanh(tx::mul(v, M)); }, TD::randn({3}, 44), "vector times matrix");
  // An mlp-like loss: matmul, broadcast bias, relu, square, mean.
  const TD X = TD::randn({5, 3}, 45), T = TD::randn({5, 4}, 46);
  check([&](const TD& W) { return tx::mean(tx::square(tx::sub(tx::relu(tx::add(tx::matmul(X, W), b)), T))); }, M,
        "mlp loss");
  // Batched matmul (rank 3), a transpose, reshape, expand, slice, and sums over some axes.
  auto z = [&](const TD& W) {
    const TD y = tx::matmul(B, tx::expand(tx::reshape(W, {3, 4, 1}), {3, 4, 3}));  // 4 x 4 x 3
    return tx::exp(tx::slice(tx::transpose(y, 0, 1), 0, 1, 4, 2));                 // 2 x 4 x 3
  };
  check([&](const TD& W) { return tx::sum(z(W), {1}, false); }, M, "batched matmul, sum over an axis");
  check([&](const TD& W) { return tx::sum(tx::sin(z(W)), {0, 2}, true); }, M, "sum keepdim");
  check([&](const TD& W) { return tx::cast<tx::c128>(tx::sum(z(W))); }, M, "cast to complex");
  // solve: the directions join the right-hand side's columns; in B, in A, with a batch of A.
  const TD S = tx::testing::spd<double>(3, {}, 55), S2 = tx::testing::spd<double>(3, {2}, 56);
  check([&](const TD& v) { return tx::linalg::solve(S, tx::tanh(v)); }, TD::randn({3, 2}, 57), "solve in B");
  check(
      [&](const TD& a) {
        return tx::linalg::solve(tx::add(S, a), TD::ones({3, 1}));
      },
      TD::randn({3, 3}, 58), "solve in A");
  check([&](const TD& v) { return tx::linalg::solve(S2, tx::exp(v)); }, TD::randn({3, 1}, 59), "batched A");
}

TEST(Jacobian, BatchesOfDirectionsGiveTheSameBlocks) {
  // With a small budget (detail::batch_elements) the directions run in several batches, the last
  // one shorter: the same blocks, bit for bit, as one batch.
  const TD S = tx::testing::spd<double>(5, {}, 60), X = TD::randn({4, 5}, 61), W = TD::randn({5, 3}, 62);
  auto f = [&](const TD& w) { return tx::linalg::solve(S, tx::tanh(tx::mul(w, 2.0))); };
  auto loss = [&](const TD& w) { return tx::mean(tx::square(tx::relu(tx::matmul(X, w)))); };
  const TD fwd = tx::jacfwd(f, W), rev = tx::jacrev(f, W), hes = tx::hessian(loss, W);
  std::int64_t& budget = tx::detail::batch_elements();
  const std::int64_t saved = budget;
  for (std::int64_t b : {1, 20, 64}) {
    budget = b;
    tx::ttest::expect_bitwise(tx::jacfwd(f, W), fwd, "jacfwd in batches, budget " + std::to_string(b));
    tx::ttest::expect_bitwise(tx::jacrev(f, W), rev, "jacrev in batches, budget " + std::to_string(b));
    tx::ttest::expect_bitwise(tx::hessian(loss, W), hes, "hessian in batches, budget " + std::to_string(b));
  }
  budget = saved;
  expect_close(fwd, rev, 1e-13, "jacfwd vs jacrev");
}

TEST(Jacobian, JacfwdPlanNamesTheOpsThatTakeNoBatch) {
  const TD A = tx::testing::spd<double>(3, {}, 47), x = TD::randn({3, 1}, 48);
  auto f = [&](const TD& v) { return tx::linalg::eigvalsh(tx::add(A, tx::matmul(v, tx::transpose(v, 0, 1)))); };
  const tx::JacfwdPlan plan = tx::jacfwd_plan(f, x);
  ASSERT_EQ(plan.modes.size(), 1u);
  EXPECT_EQ(plan.modes[0], tx::JacfwdPlan::Mode::replayed);
  EXPECT_EQ(plan.unbatched, std::vector<std::string>{"eigh"});
  expect_close(tx::jacfwd(f, x), tx::jacrev(f, x), 1e-13, "replayed per direction");
  EXPECT_EQ(tx::jacfwd_plan(f, x.requires_grad()).modes[0], tx::JacfwdPlan::Mode::full);
}

TEST(Transforms, Errors) {
  const TD x = TD::randn({2, 2, 2, 2, 2}, 29);
  expect_error([&] { tx::jacrev([](const TD& v) { return v; }, x); },
               "[jacrev] the Jacobian of an output of shape [2, 2, 2, 2, 2] with respect to an input of shape [2, 2, "
               "2, 2, 2] would have rank 10");
  const TD a = TD::randn({2}, 30);
  auto f = [](const TD& u, const TD& v) { return tx::mul(u, v); };
  expect_error(
      [&] {
        tx::jvp(f, std::tuple{a, a}, std::tuple{a, TD::ones({3})});
      },
      "[jvp] tangent 1 of shape [3] on cpu for a primal of shape [2] on cpu");
  const auto pull = tx::vjp([](const TD& u, const TD& v) { return std::tuple{tx::mul(u, v), u}; }, a, a).second;
  expect_error(
      [&] {
        pull(std::tuple{TD::ones({3}), TD()});
      },
      "[vjp] cotangent 0 of shape [3] for an output of shape [2]");
}

}  // namespace
