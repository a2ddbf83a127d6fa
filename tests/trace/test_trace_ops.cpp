// Eager and compiled results are bit-identical for every op family, for grad, jvp and second
// order, with the program compiled at one input and run at another (so nothing the trace saw may
// be baked in); and the graph transforms (grad, value_and_grad, jvp, vjp, composed) equal the
// eager transforms.
#include <gtest/gtest.h>

#include <complex>
#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tenax/tenax.hpp"
#include "trace/trace_support.hpp"

namespace tx = tenax;
namespace la = tenax::linalg;
using tx::Tensor;
using tx::ttest::expect_bitwise;
using tx::ttest::expect_compiled_matches_eager;

namespace {

// A well-conditioned n x n matrix (seeded), and a symmetric positive definite one.
template <class T>
Tensor<T> well(std::int64_t n, std::uint64_t seed) {
  return Tensor<T>::randn({n, n}, seed) * T(0.3) + Tensor<T>::eye(n, n) * T(static_cast<double>(n));
}
template <class T>
Tensor<T> spd(std::int64_t n, std::uint64_t seed) {
  const auto a = well<T>(n, seed);
  return tx::matmul(a.mH(), a);
}

// Checks f, grad of sum-like scalar L(f), jvp of f and jvp of jvp, compiled at seed s0 and run at s1.
template <class T, class F, class Make>
void check_op(const std::string& what, F f, Make make) {
  using R = tx::real_t<T>;
  auto loss = [f](const Tensor<T>& x) {
    const auto y = f(x);
    const auto w = Tensor<typename std::decay_t<decltype(y)>::value_type>::randn(y.shape(), 99);
    return tx::real(tx::sum(y * w));
  };
  const Tensor<T> x0 = make(1), x1 = make(2), dx = Tensor<T>::randn(x0.shape(), 3);
  expect_compiled_matches_eager<decltype(f), T>(what + " forward", f, std::tuple{x0}, std::tuple{x1});
  auto g = [loss](const Tensor<T>& x) { return tx::grad(loss, x); };
  expect_compiled_matches_eager<decltype(g), T>(what + " grad", g, std::tuple{x0}, std::tuple{x1});
  auto j = [f](const Tensor<T>& x, const Tensor<T>& d) { return tx::jvp(f, x, d); };
  expect_compiled_matches_eager<decltype(j), T, T>(what + " jvp", j, std::tuple{x0, dx},
                                                   std::tuple{x1, Tensor<T>::randn(x0.shape(), 4)});
  // Forward over forward (jvp of jvp: two reverse passes inside, ad/functional.hpp).
  auto j2 = [f](const Tensor<T>& x, const Tensor<T>& d) {
    return tx::jvp([&](const Tensor<T>& a) { return tx::jvp(f, a, d).second; }, x, d);
  };
  expect_compiled_matches_eager<decltype(j2), T, T>(what + " jvp of jvp", j2, std::tuple{x0, dx},
                                                    std::tuple{x1, Tensor<T>::randn(x0.shape(), 6)});
  auto h = [loss](const Tensor<T>& x, const Tensor<T>& v) { return tx::hvp(loss, x, v); };
  expect_compiled_matches_eager<decltype(h), T, T>(what + " hvp", h, std::tuple{x0, dx},
                                                   std::tuple{x1, Tensor<T>::randn(x0.shape(), 5)});
  (void)sizeof(R);
}

TEST(TraceOps, ElementwiseBroadcastReduce) {
  auto f = [](const Tensor<double>& x) {
    const auto y = tx::reshape(tx::sum(x, {1}, true), tx::Shape{3, 1});
    return tx::exp(x) * y + tx::sin(x) / (tx::square(x) + 1.0) - tx::tanh(x) * tx::max(x, {0}, true);
  };
  check_op<double>("elementwise", f, [](std::uint64_t s) { return Tensor<double>::randn({3, 4}, s); });
  auto fc = [](const Tensor<std::complex<double>>& x) { return tx::exp(x) * tx::conj(x) + tx::square(x); };
  check_op<std::complex<double>>("complex elementwise", fc, [](std::uint64_t s) {
    return Tensor<std::complex<double>>::randn({2, 3}, s);
  });
}

TEST(TraceOps, ShapeOps) {
  auto f = [](const Tensor<double>& x) {
    const auto t = tx::transpose(x, 0, 1);
    const auto c = tx::concat<double>({tx::slice(t, 0, 0, 2, 1), tx::tril(t, 0)}, 0);
    return tx::reshape(c * 2.0, tx::Shape{-1}) + tx::sum(tx::diagonal(tx::matmul(x, t)));
  };
  check_op<double>("shape", f, [](std::uint64_t s) { return Tensor<double>::randn({3, 3}, s); });
}

TEST(TraceOps, Solve) {
  const auto B = Tensor<double>::randn({4, 2}, 7);
  check_op<double>(
      "solve", [B](const Tensor<double>& A) { return la::solve(A, B); },
      [](std::uint64_t s) { return well<double>(4, s); });
  check_op<double>(
      "inv", [](const Tensor<double>& A) { return la::inv(A); }, [](std::uint64_t s) { return well<double>(4, s); });
  check_op<double>(
      "det", [](const Tensor<double>& A) { return la::det(A); }, [](std::uint64_t s) { return well<double>(4, s); });
  check_op<double>(
      "slogdet", [](const Tensor<double>& A) { return la::slogdet(A).second; },
      [](std::uint64_t s) { return well<double>(4, s); });
  check_op<double>(
      "solve_triangular", [B](const Tensor<double>& A) { return la::solve_triangular(A, B, /*upper=*/true); },
      [](std::uint64_t s) { return well<double>(4, s); });
  check_op<double>(
      "triangular_matmul",
      [B](const Tensor<double>& A) { return la::triangular_matmul(A, B, /*upper=*/false, true, true, la::Trans::C); },
      [](std::uint64_t s) { return well<double>(4, s); });
}

TEST(TraceOps, Factorizations) {
  check_op<double>(
      "lu", [](const Tensor<double>& A) { return std::get<2>(la::lu(A)) + std::get<1>(la::lu(A)); },
      [](std::uint64_t s) {
        return Tensor<double>::randn({4, 4}, s);
      });
  check_op<double>(
      "qr",
      [](const Tensor<double>& A) {
        return tx::concat<double>({la::qr(A).first, la::qr(A).second}, 0);
      },
      [](std::uint64_t s) {
        return Tensor<double>::randn({4, 3}, s);
      });
  check_op<double>(
      "cholesky", [](const Tensor<double>& A) { return la::cholesky(A); },
      [](std::uint64_t s) { return spd<double>(4, s); });
}

TEST(TraceOps, SecondWave) {
  const auto B = Tensor<double>::randn({5, 2}, 8);
  check_op<double>(
      "pinv", [](const Tensor<double>& A) { return la::pinv(A); },
      [](std::uint64_t s) {
        return Tensor<double>::randn({5, 3}, s);
      });
  check_op<double>(
      "lstsq", [B](const Tensor<double>& A) { return la::lstsq(A, B).solution; },
      [](std::uint64_t s) {
        return Tensor<double>::randn({5, 3}, s);
      });
  // Compiled at a small norm (a low Pade degree, no squaring), run at a large one (degree 13,
  // squarings): the degree and the scaling are chosen at run time.
  check_op<double>(
      "matrix_exp", [](const Tensor<double>& A) { return la::matrix_exp(A); },
      [](std::uint64_t s) {
        return Tensor<double>::randn({3, 3}, s) * (s == 1 ? 0.01 : 3.0);
      });
  check_op<double>(
      "matrix_power", [](const Tensor<double>& A) { return la::matrix_power(A, -3); },
      [](std::uint64_t s) { return well<double>(3, s); });
  check_op<double>(
      "eigvals", [](const Tensor<double>& A) { return la::eigvals(A); },
      [](std::uint64_t s) { return well<double>(4, s); });
  check_op<double>(
      "eig", [](const Tensor<double>& A) { return tx::abs(la::eig(A).second); },
      [](std::uint64_t s) {
        return well<double>(4, s) + tx::diag_embed(Tensor<double>::from_col_major({4}, {0, 1, 2, 3}));
      });
  check_op<double>(
      "norms", [](const Tensor<double>& A) { return la::vector_norm(A, 3.0, {0}) + la::matrix_norm(A, "nuc"); },
      [](std::uint64_t s) {
        return Tensor<double>::randn({3, 3}, s);
      });
}

TEST(TraceOps, Spectral) {
  check_op<double>(
      "eigvalsh", [](const Tensor<double>& A) { return la::eigvalsh(A); },
      [](std::uint64_t s) { return spd<double>(4, s); });
  check_op<double>(
      "eigh", [](const Tensor<double>& A) { return la::eigh(A, false, {}, /*canonical_gauge=*/true).second; },
      [](std::uint64_t s) { return spd<double>(4, s); });
  check_op<double>(
      "svdvals", [](const Tensor<double>& A) { return la::svdvals(A); },
      [](std::uint64_t s) {
        return Tensor<double>::randn({4, 3}, s);
      });
  check_op<double>(
      "svd", [](const Tensor<double>& A) { return std::get<0>(la::svd(A, false, {}, /*canonical_gauge=*/true)); },
      [](std::uint64_t s) {
        return Tensor<double>::randn({4, 3}, s);
      });
  check_op<std::complex<double>>(
      "complex eigh", [](const Tensor<std::complex<double>>& A) { return tx::abs(la::eigh(A).second); },
      [](std::uint64_t s) { return spd<std::complex<double>>(3, s); });
}

// ---- graph transforms ----------------------------------------------------------------------------

TEST(TraceTransforms, GradValueAndGradJvpVjpOfAGraph) {
  auto f = [](const Tensor<double>& A, const Tensor<double>& b) {
    return tx::sum(tx::square(la::solve(A, b))) + tx::sum(la::eigvalsh(tx::matmul(A.mT(), A)));
  };
  const auto A0 = well<double>(3, 1), b0 = Tensor<double>::randn({3, 2}, 2);
  const auto A1 = well<double>(3, 3), b1 = Tensor<double>::randn({3, 2}, 4);
  const auto g = tx::trace(f, A0, b0);
  // grad of the graph is a graph; compiled, it equals the eager gradient at other inputs.
  const auto dg = tx::grad(g);
  expect_bitwise(tx::compile(dg)(A1, b1), tx::grad(f, A1, b1), "grad(graph)");
  expect_bitwise(tx::compile(tx::value_and_grad(g))(A1, b1), tx::value_and_grad(f, A1, b1), "value_and_grad(graph)");
  // Single-input transforms.
  auto f1 = [b0](const Tensor<double>& A) { return la::solve(A, b0); };
  const auto g1 = tx::trace(f1, A0);
  const auto dA = Tensor<double>::randn({3, 3}, 5);
  expect_bitwise(tx::compile(tx::jvp(g1))(A1, dA), tx::jvp(f1, A1, dA), "jvp(graph)");
  const auto gy = Tensor<double>::randn({3, 2}, 6);
  expect_bitwise(tx::compile(tx::vjp(g1))(A1, gy), tx::vjp(f1, A1).second(gy), "vjp(graph)");
}

TEST(TraceTransforms, Composed) {
  // Second derivative of a scalar function by grad(grad(graph)), and jvp(grad(graph)) = H v.
  auto f = [](const Tensor<double>& x) { return tx::sum(tx::exp(x) * tx::sin(x)); };
  const auto x0 = Tensor<double>::randn({3}, 1), x1 = Tensor<double>::randn({3}, 2);
  const auto g = tx::trace(f, x0);
  const auto gg = tx::grad(g);
  const auto v = Tensor<double>::randn({3}, 3);
  const auto hv = tx::jvp(gg);
  expect_bitwise(std::get<1>(tx::compile(hv)(x1, v)), tx::hvp(f, x1, v), "jvp(grad(graph))");
  auto s = [](const Tensor<double>& x) {
    return tx::sum(tx::grad([](const Tensor<double>& z) { return tx::sum(tx::exp(z) * tx::sin(z)); }, x));
  };
  const auto g2 = tx::grad(tx::trace(s, x0));
  expect_bitwise(tx::compile(g2)(x1), tx::grad(s, x1), "grad(grad)");
}

TEST(TraceTransforms, ComposedThroughLinalgRules) {
  // jvp(grad(graph)) = H v for functions whose first-order rules take shortcuts (solve's backward
  // reuses the saved LU; eigh's and svd's tangents skip the vectors): the outer transform
  // re-derives the inner one from the original graph, so it equals the eager hvp.
  const auto W = Tensor<double>::randn({3, 3}, 11);
  const auto B = Tensor<double>::randn({3, 2}, 12);
  const std::vector<std::pair<std::string, std::function<Tensor<double>(const Tensor<double>&)>>> cases = {
      {"solve", [B](const Tensor<double>& a) { return tx::sum(tx::square(la::solve(a, B))); }},
      {"inv", [W](const Tensor<double>& a) { return tx::sum(la::inv(a) * W); }},
      {"det", [](const Tensor<double>& a) { return la::det(a); }},
      {"slogdet", [](const Tensor<double>& a) { return std::get<1>(la::slogdet(a)); }},
      {"eigvalsh", [](const Tensor<double>& a) { return tx::sum(tx::square(la::eigvalsh(a + a.mT()))); }},
      {"eigh", [W](const Tensor<double>& a) { return tx::sum(tx::square(la::eigh(a + a.mT()).second) * W); }},
      {"svdvals", [](const Tensor<double>& a) { return tx::sum(tx::square(la::svdvals(a))); }},
      {"lu", [W](const Tensor<double>& a) { return tx::sum(std::get<1>(la::lu(a)) * W); }},
      {"qr R", [W](const Tensor<double>& a) { return tx::sum(la::qr(a, la::QrMode::R).second * W); }},
      {"pinv", [W](const Tensor<double>& a) { return tx::sum(la::pinv(a) * W); }},
      {"matrix_exp", [W](const Tensor<double>& a) { return tx::sum(la::matrix_exp(a * 0.3) * W); }},
  };
  const auto A0 = well<double>(3, 1), A1 = well<double>(3, 3), v = Tensor<double>::randn({3, 3}, 13);
  for (const auto& [name, f] : cases) {
    SCOPED_TRACE(name);
    const auto g = tx::trace(f, A0);
    expect_bitwise(tx::compile(tx::grad(g))(A1), tx::grad(f, A1), name + " grad(graph)");
    expect_bitwise(std::get<1>(tx::compile(tx::jvp(g))(A1, v)), tx::jvp(f, A1, v).second, name + " jvp(graph)");
    const auto hv = tx::compile(tx::jvp(tx::grad(g)));
    expect_bitwise(std::get<1>(hv(A1, v)), tx::hvp(f, A1, v), name + " jvp(grad(graph))");
    // The derived graph called directly gives its graph's values.
    expect_bitwise(tx::grad(g)(A1), tx::compile(tx::grad(g))(A1), name + " grad(graph) called");
  }
  // lu_solve with op = T or C: a recorded solve re-executed under a derivative in LU switches to
  // its differentiable form, as the eager wrapper does.
  for (const auto op : {la::Trans::T, la::Trans::C}) {
    auto f = [B, op](const Tensor<double>& a) {
      const auto [LU, piv] = la::lu_factor(a);
      return tx::sum(tx::square(la::lu_solve(LU, piv, B, op)));
    };
    const auto g = tx::trace(f, A0);
    expect_bitwise(tx::compile(tx::grad(g))(A1), tx::grad(f, A1), "lu_solve T/C grad(graph)");
    expect_bitwise(std::get<1>(tx::compile(tx::jvp(g))(A1, v)), tx::jvp(f, A1, v).second, "lu_solve T/C jvp(graph)");
  }
  // A graph traced from a function that differentiates solve, inv, det, slogdet (its rules solve
  // on the saved LU factors), eigvalsh or svdvals itself differentiates again like the eager
  // function: grad and jvp of the graph equal the eager second derivatives bit for bit.
  const std::vector<std::pair<std::string, std::function<Tensor<double>(const Tensor<double>&)>>> inner = {
      {"solve", [B](const Tensor<double>& z) { return tx::sum(tx::square(la::solve(z, B))); }},
      {"solve right", [W](const Tensor<double>& z) { return tx::sum(tx::square(la::solve(z, W, false))); }},
      {"inv", [W](const Tensor<double>& z) { return tx::sum(tx::square(la::inv(z)) * W); }},
      {"det", [](const Tensor<double>& z) { return tx::square(la::det(z)); }},
      {"slogdet", [](const Tensor<double>& z) { return std::get<1>(la::slogdet(z)); }},
      // eigh's and svd's rules read the saved vectors: the re-executed op carries their tangents
      {"eigvalsh", [](const Tensor<double>& z) { return tx::sum(tx::exp(la::eigvalsh(z + z.mT()))); }},
      {"svdvals", [](const Tensor<double>& z) { return tx::sum(tx::exp(la::svdvals(z))); }},
  };
  for (const auto& c : inner) {
    const std::string& name = c.first;
    const auto& h = c.second;
    SCOPED_TRACE(name + " (traced gradient)");
    auto s = [h, W](const Tensor<double>& a) { return tx::sum(tx::grad(h, a) * W); };
    const auto gs = tx::trace(s, A0);
    expect_bitwise(tx::compile(tx::grad(gs))(A1), tx::grad(s, A1), name + " grad(traced grad)");
    expect_bitwise(std::get<1>(tx::compile(tx::jvp(gs))(A1, v)), tx::jvp(s, A1, v).second, name + " jvp(traced grad)");
    // and against central differences of the traced gradient itself
    const auto g = tx::compile(tx::grad(gs))(A1);
    const double eps = 1e-6;
    const auto fd = (tx::compile(gs)(A1 + v * eps) - tx::compile(gs)(A1 - v * eps)) / (2 * eps);
    EXPECT_NEAR(tx::sum(g * v).item(), fd.item(), 1e-6 * (1 + std::abs(fd.item())));
  }
  // The first-order kernels of the solve, lu, eigh, lstsq and qr rules (ops/linalg/solve_tangent.hpp,
  // lu_tangent.hpp, eigh_small.hpp, lstsq_small.hpp, qr_small.hpp; no rules of their own) in a graph traced from a
  // function that takes a gradient or a JVP switch to the rules' differentiable ops when the graph is differentiated:
  // its derivatives match the eager ones and central differences of the graph. (To rounding: where the eager function
  // differentiates while recording, its rules chose the differentiable forms from the start.)
  const std::vector<std::pair<std::string, std::function<Tensor<double>(const Tensor<double>&)>>> kernels = {
      {"solve", [B](const Tensor<double>& z) { return tx::sum(tx::square(la::solve(z, B))); }},
      {"solve right", [W](const Tensor<double>& z) { return tx::sum(tx::square(la::solve(z, W, false))); }},
      {"inv", [W](const Tensor<double>& z) { return tx::sum(tx::square(la::inv(z)) * W); }},
      {"lu",
       [W](const Tensor<double>& z) {
         const auto [P, L, U] = la::lu(z);
         return tx::sum(tx::square(L) * W) + tx::sum(tx::exp(U));
       }},
      // the eigh, lstsq and qr rule kernels (eigh_small.hpp, lstsq_small.hpp, qr_small.hpp)
      {"eigh", [W](const Tensor<double>& z) { return tx::sum(tx::square(la::eigh(z + z.mT()).second) * W); }},
      {"lstsq", [B](const Tensor<double>& z) { return tx::sum(tx::square(la::lstsq(z, B).solution)); }},
      {"qr",
       [W](const Tensor<double>& z) {
         const auto [Q, R] = la::qr(z);
         return tx::sum(tx::square(Q) * W) + tx::sum(tx::exp(R));
       }},
  };
  auto expect_near = [](const Tensor<double>& got, const Tensor<double>& want, const std::string& what) {
    ASSERT_EQ(got.shape(), want.shape()) << what;
    const auto g = got.to_vector(), w = want.to_vector();
    for (std::size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], 1e-11 * (1 + std::abs(w[i]))) << what;
  };
  for (const auto& [name, h] : kernels)
    for (const bool tangent : {false, true}) {
      SCOPED_TRACE(name + (tangent ? " (traced tangent)" : " (traced gradient)"));
      std::function<Tensor<double>(const Tensor<double>&)> s = [h, W](const Tensor<double>& a) {
        return tx::sum(tx::grad(h, a) * W);
      };
      if (tangent) s = [h, W](const Tensor<double>& a) { return tx::jvp(h, a, W).second; };
      const auto gs = tx::trace(s, A0);
      const auto g = tx::compile(tx::grad(gs))(A1);
      expect_bitwise(tx::grad(gs)(A1), g, name + " grad(graph) called");
      expect_near(g, tx::grad(s, A1), name + " grad(graph)");
      expect_near(std::get<1>(tx::compile(tx::jvp(gs))(A1, v)), tx::jvp(s, A1, v).second, name + " jvp(graph)");
      const double eps = 1e-6;
      const auto fd = (tx::compile(gs)(A1 + v * eps) - tx::compile(gs)(A1 - v * eps)) / (2 * eps);
      EXPECT_NEAR(tx::sum(g * v).item(), fd.item(), 1e-6 * (1 + std::abs(fd.item())));
    }
}

}  // namespace
