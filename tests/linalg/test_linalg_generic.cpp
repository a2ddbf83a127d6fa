// The factorizations of a device backend (backend/generic_linalg.hpp: the backend's batched
// routines plus tensor ops, what runs on the GPU) run here on the CPU and must give exactly the CPU
// backend's fused kernels' results: same factors, same info codes, same NaN filling of failed matrices, same
// errors; and for solve_triangular and triangular_matmul the same solves and products. This checks
// the logic the CUDA path shares, with the CPU provider standing in for cuSOLVER and cuBLAS.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <utility>
#include <vector>

#include <tenax/backend/generic_linalg.hpp>
#include <tenax/tenax.hpp>

#include "support/matrices.hpp"
#include "support/messages.hpp"

namespace tx = tenax;
using tx::Tensor;
using C = std::complex<double>;

namespace {

// Equal element for element, NaN where NaN (bit-level for the non-NaN values).
template <class T>
void expect_same(const Tensor<T>& got, const Tensor<T>& want, const std::string& what) {
  ASSERT_EQ(got.defined(), want.defined()) << what;
  if (!want.defined()) return;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_TRUE(got.device() == want.device()) << what;
  const auto g = got.to_vector(), w = want.to_vector();
  for (std::size_t i = 0; i < g.size(); ++i) {
    if constexpr (std::is_same_v<T, std::int32_t>) {
      EXPECT_EQ(g[i], w[i]) << what << " element " << i;
    } else if constexpr (tx::is_complex_v<T>) {  // NaN in either part (1/0 is (inf, NaN))
      auto nan = [](const T& z) { return std::isnan(z.real()) || std::isnan(z.imag()); };
      EXPECT_EQ(nan(g[i]), nan(w[i])) << what << " element " << i;
      if (!nan(w[i])) EXPECT_EQ(g[i], w[i]) << what << " element " << i;
    } else {
      const bool gn = std::isnan(std::abs(g[i])), wn = std::isnan(std::abs(w[i]));
      EXPECT_EQ(gn, wn) << what << " element " << i;
      if (!wn) EXPECT_EQ(g[i], w[i]) << what << " element " << i;
    }
  }
}

template <class Tuple, std::size_t... I>
void expect_same_tuple(const Tuple& g, const Tuple& w, const std::string& what, std::index_sequence<I...>) {
  (expect_same(std::get<I>(g), std::get<I>(w), what + " output " + std::to_string(I)), ...);
}
template <class... X>
void expect_same_all(const std::tuple<X...>& g, const std::tuple<X...>& w, const std::string& what) {
  expect_same_tuple(g, w, what, std::index_sequence_for<X...>{});
}

// A batch of 3 Hermitian positive definite n x n matrices; `poison` replaces matrix 1 by a
// non-positive-definite one (p = 1) or puts a NaN into its lower triangle (p = 2).
template <class T>
Tensor<T> spd_batch(std::int64_t n, int poison = 0) {
  auto s = tx::contiguous(tx::testing::spd<T>(n, {3}, 7));
  if (poison == 1) s.mutable_data()[n * n] = T(-100.0 * static_cast<double>(n));
  if (poison == 2 && n > 1) s.mutable_data()[n * n + 1] = T(std::nan(""));
  return s;
}

// The generic forward of solve_triangular (trsm) or triangular_matmul (trmm) with op's flags.
template <class Op, class T>
Tensor<T> generic_triangular(const Op& op, const Tensor<T>& A, const Tensor<T>& B) {
  const auto r = std::is_same_v<Op, tx::ops::SolveTriangular> ? tx::detail::TriangularBlas::trsm
                                                              : tx::detail::TriangularBlas::trmm;
  return tx::detail::generic::triangular_op(r, A, B, op.left, op.upper, op.unit, op.trans);
}

template <class T>
void cholesky_cases() {
  for (std::int64_t n : {1, 4, 7})
    for (int poison : {0, 1, 2}) {
      const auto A = spd_batch<T>(n, poison);
      expect_same_all(tx::detail::generic::cholesky(A), tx::ops::Cholesky{}.forward(A),
                      "cholesky n=" + std::to_string(n) + " poison=" + std::to_string(poison));
    }
  const auto empty = Tensor<T>::zeros({0, 0, 2});
  expect_same_all(tx::detail::generic::cholesky(empty), tx::ops::Cholesky{}.forward(empty), "cholesky empty");
}

template <class T>
void eigh_cases() {
  for (bool upper : {false, true})
    for (bool vectors : {false, true})
      for (bool canonical : {false, true})
        for (int poison : {0, 2}) {
          const auto A = spd_batch<T>(5, poison);
          tx::ops::Eigh op{upper, vectors, vectors, tx::linalg::Degeneracy{}, canonical};
          expect_same_all(tx::detail::generic::eigh(A, upper, vectors, canonical), op.forward(A),
                          "eigh upper=" + std::to_string(upper) + " vectors=" + std::to_string(vectors) +
                              " canonical=" + std::to_string(canonical) + " poison=" + std::to_string(poison));
        }
}

template <class T>
void qr_cases() {
  for (auto [m, n] : {std::pair{6, 4}, std::pair{4, 6}, std::pair{5, 5}, std::pair{1, 3}, std::pair{3, 0}})
    for (bool complete : {false, true})
      for (bool compute_q : {false, true})
        for (bool positive : {false, true}) {
          const auto A = Tensor<T>::randn({m, n, 2}, 11);
          tx::ops::Qr op{complete, compute_q, positive};
          expect_same_all(tx::detail::generic::qr(A, complete, compute_q, positive), op.forward(A),
                          "qr " + std::to_string(m) + "x" + std::to_string(n) +
                              " complete=" + std::to_string(complete) + " q=" + std::to_string(compute_q) +
                              " positive=" + std::to_string(positive));
        }
  auto bad = tx::contiguous(Tensor<T>::randn({3, 3, 4}, 12));
  bad.mutable_data()[2 * 9 + 4] = T(INFINITY);
  const tx::ops::Qr op{false, true, false};
  const std::string eg = tx::testing::error_of([&] { tx::detail::generic::qr(bad, false, true, false); });
  std::string ef;
  try {
    op.forward(bad);
  } catch (const tx::linalg::LinAlgError& e) {
    ef = e.what();
  }
  EXPECT_FALSE(ef.empty());
  EXPECT_EQ(eg, ef);
}

template <class T>
void solve_cases() {
  for (std::int64_t n : {1, 3, 6}) {
    auto A = tx::contiguous(Tensor<T>::randn({n, n, 3}, 21));
    const auto B = Tensor<T>::randn({n, 2, 3}, 22);
    expect_same_all(tx::detail::generic::solve(A, B), tx::ops::Solve{}.forward(A, B), "solve n=" + std::to_string(n));
    // Matrix 1 exactly singular (a zero column), matrix 2 with a NaN. The saved factors of a
    // non-finite matrix are unspecified (the fused forward skips it, getrf runs on it here), so
    // only X and info are compared.
    for (std::int64_t i = 0; i < n; ++i) A.mutable_data()[n * n + i] = T(0);
    A.mutable_data()[2 * n * n] = T(std::nan(""));
    const auto g = tx::detail::generic::solve(A, B), w = tx::ops::Solve{}.forward(A, B);
    expect_same(std::get<0>(g), std::get<0>(w), "solve failing X n=" + std::to_string(n));
    expect_same(std::get<3>(g), std::get<3>(w), "solve failing info n=" + std::to_string(n));
  }
  // B broadcast over A's batch.
  const auto A = Tensor<T>::randn({4, 4, 2}, 23), B = Tensor<T>::randn({4, 3}, 24);
  expect_same_all(tx::detail::generic::solve(A, B), tx::ops::Solve{}.forward(A, B), "solve broadcast B");
}

template <class T>
void lu_cases() {
  for (auto [m, n] : {std::pair{5, 5}, std::pair{6, 3}, std::pair{3, 6}}) {
    auto A = tx::contiguous(Tensor<T>::randn({m, n, 3}, 31));
    const std::string what = "lu_factor " + std::to_string(m) + "x" + std::to_string(n);
    expect_same_all(tx::detail::generic::lu_factor(A), tx::ops::LuFactor{}.forward(A), what);
    // lu (P, L, U written by one kernel on the CPU; unpacked by tensor ops in generic::lu).
    expect_same_all(tx::detail::generic::lu(A), tx::ops::Lu{}.forward(A),
                    "lu " + std::to_string(m) + "x" + std::to_string(n));
    // Matrix 1 rank-deficient (zero first column: info > 0, still factorized), matrix 2 with an
    // inf (info -1, NaN factors, identity pivots).
    for (std::int64_t i = 0; i < m; ++i) A.mutable_data()[m * n + i] = T(0);
    A.mutable_data()[2 * m * n + 1] = T(INFINITY);
    expect_same_all(tx::detail::generic::lu_factor(A), tx::ops::LuFactor{}.forward(A), what + " failing");
    expect_same_all(tx::detail::generic::lu(A), tx::ops::Lu{}.forward(A), "lu failing");
    const auto piv = std::get<1>(tx::ops::LuFactor{}.forward(A)).to_vector();
    for (std::int64_t i = 0; i < std::min(m, n); ++i) EXPECT_EQ(piv[2 * std::min(m, n) + i], i + 1);
  }
  for (auto [m, n] : {std::pair{0, 0}, std::pair{3, 0}, std::pair{0, 3}}) {
    const auto E = Tensor<T>::zeros({m, n, 2});
    expect_same_all(tx::detail::generic::lu(E), tx::ops::Lu{}.forward(E),
                    "lu empty " + std::to_string(m) + "x" + std::to_string(n));
  }
}

template <class T>
void slogdet_cases() {
  for (std::int64_t n : {1, 2, 5}) {
    auto A = tx::contiguous(Tensor<T>::randn({n, n, 4}, 41));
    for (std::int64_t i = 0; i < n; ++i) A.mutable_data()[n * n + i * n] = T(0);  // matrix 1 singular
    A.mutable_data()[3 * n * n] = T(std::nan(""));                                // matrix 3 not finite
    const auto g = tx::detail::generic::slogdet(A), w = tx::ops::Slogdet{}.forward(A);
    expect_same(std::get<0>(g), std::get<0>(w), "slogdet sign n=" + std::to_string(n));
    expect_same(std::get<1>(g), std::get<1>(w), "slogdet log n=" + std::to_string(n));
    expect_same(tx::slice(std::get<2>(g), 2, 0, 3), tx::slice(std::get<2>(w), 2, 0, 3), "slogdet LU");
  }
}

// det: the plain product of the pivots equals the CPU's scaled product bit for bit, also at a
// zero pivot and for non-finite input; where the plain product overflows or underflows part way,
// sign * exp(log|det|) stands in (equal to a few ulps times |log|det||).
template <class T>
void det_cases() {
  using R = tx::real_t<T>;
  for (std::int64_t n : {1, 2, 5, 9}) {
    auto A = tx::contiguous(Tensor<T>::randn({n, n, 4}, 42));
    for (std::int64_t i = 0; i < n; ++i) A.mutable_data()[n * n + i * n] = T(0);  // matrix 1 singular
    A.mutable_data()[3 * n * n] = T(std::nan(""));                                // matrix 3 not finite
    const auto g = tx::detail::generic::det(A), w = tx::ops::Det{}.forward(A);
    expect_same(std::get<0>(g), std::get<0>(w), "det n=" + std::to_string(n));
  }
  const auto det_of = [](std::vector<double> d) {
    const std::int64_t n = static_cast<std::int64_t>(d.size());
    std::vector<T> a(static_cast<std::size_t>(n * n), T(0));
    for (std::int64_t i = 0; i < n; ++i) a[static_cast<std::size_t>(i + i * n)] = T(static_cast<R>(d[i]));
    const auto A = Tensor<T>::from_col_major({n, n}, a);
    return std::pair{std::get<0>(tx::detail::generic::det(A)).item(), std::get<0>(tx::ops::Det{}.forward(A)).item()};
  };
  const bool f32 = std::is_same_v<R, float>;
  const double big = f32 ? 1e30 : 1e200;
  // Partial products overflow, then underflow, the determinant being 1 or -6; a partial product
  // that passes through the subnormal range (3e-324 in f64) and recovers, with no subnormal input.
  for (const auto& d :
       {std::vector<double>{big, big, 1 / big, 1 / big}, std::vector<double>{1 / big, 1 / big, -6 * big, big},
        f32 ? std::vector<double>{1e-30, 3e-9, 1e10} : std::vector<double>{1e-300, 3e-24, 1e30}}) {
    const auto [gen, cpu] = det_of(d);
    EXPECT_NEAR(std::abs(gen - cpu) / std::abs(cpu), 0, 1e4 * std::numeric_limits<R>::epsilon()) << d[0];
  }
  // Ordinary pivots alternating in size (no partial product leaves the normal range): the CPU's
  // bits, also for n = 64 where sum |log |u_ii|| is far beyond one exponent range.
  {
    std::vector<double> d;
    for (int i = 0; i < 64; ++i) d.push_back(i % 2 ? (f32 ? 0.11 : 1.1e-20) : (f32 ? 10.0 : 1e20));
    const auto [gen, cpu] = det_of(d);
    EXPECT_EQ(gen, cpu);
  }
  // Overflowing and underflowing determinants: inf and 0 both ways.
  EXPECT_EQ(det_of({big, big}).first, det_of({big, big}).second);
  EXPECT_EQ(det_of({1 / big, -1 / big}).first, det_of({1 / big, -1 / big}).second);
  EXPECT_EQ(det_of({-2, 0, 3}).first, T(0));
}

template <class T>
void svd_cases() {
  for (auto [m, n] : {std::pair{6, 4}, std::pair{4, 6}, std::pair{5, 5}})
    for (bool full : {false, true})
      for (bool uv : {false, true})
        for (bool canonical : {false, true}) {
          if (canonical && (full || !uv)) continue;
          auto A = tx::contiguous(Tensor<T>::randn({m, n, 3}, 51));
          A.mutable_data()[2 * m * n + 3] = T(std::nan(""));  // matrix 2 not finite
          tx::ops::Svd op{full, uv, uv, tx::linalg::Degeneracy{}, canonical};
          expect_same_all(tx::detail::generic::svd(A, full, uv, canonical), op.forward(A),
                          "svd " + std::to_string(m) + "x" + std::to_string(n) + " full=" + std::to_string(full) +
                              " uv=" + std::to_string(uv) + " canonical=" + std::to_string(canonical));
        }
}

// solve_triangular (trsm) and triangular_matmul (trmm): every side, triangle, op and diagonal; a
// broadcast batch; A a transposed view (copied to a unit row stride); an empty batch.
template <class Op, class T>
void triangular_cases(const char* name) {
  using Tr = tx::linalg::Trans;
  for (bool upper : {false, true})
    for (bool left : {false, true})
      for (bool unit : {false, true})
        for (Tr tr : {Tr::N, Tr::T, Tr::C}) {
          const Op op{{upper, left, unit, tr}};
          // Well away from singular for the solves: the diagonal shifted by 4.
          const auto A = tx::add(Tensor<T>::randn({4, 4, 3}, 61), tx::mul(Tensor<T>::eye(4), T(4)));
          const auto B = left ? Tensor<T>::randn({4, 2, 3}, 62) : Tensor<T>::randn({2, 4, 3}, 62);
          const std::string what = std::string(name) + " upper=" + std::to_string(upper) +
                                   " left=" + std::to_string(left) + " unit=" + std::to_string(unit) +
                                   " trans=" + std::to_string(static_cast<int>(tr));
          expect_same(generic_triangular(op, A, B), op.forward(A, B), what);
          expect_same(generic_triangular(op, A.mT(), B), op.forward(A.mT(), B), what + " A^T view");
          const auto B1 = tx::slice(B, 2, 0, 1).reshape(left ? tx::Shape{4, 2} : tx::Shape{2, 4});
          expect_same(generic_triangular(op, A, B1), op.forward(A, B1), what + " B broadcast");
          const auto A1 = tx::slice(A, 2, 1, 2).reshape(tx::Shape{4, 4});
          expect_same(generic_triangular(op, A1, B), op.forward(A1, B), what + " A broadcast");
        }
  const Op op{{true, true, false, Tr::N}};
  const auto A0 = Tensor<T>::randn({3, 3, 0}, 63), B0 = Tensor<T>::randn({3, 2, 0}, 64);
  expect_same(generic_triangular(op, A0, B0), op.forward(A0, B0), std::string(name) + " empty batch");
}

// matrix_exp and its Frechet derivative: the generic steps in tensor ops against the CPU's kernel,
// which runs them per matrix in scratch. A batch of 1-norms from 0.01 to 1e3 takes the top degree
// with 0 to 9 squarings (matrix 2 gets a NaN, matrix 3 an inf); a batch of small norms takes each
// lower degree; transposed and broadcast operands; a batch large enough to be spread over the pool.
template <class T>
void matrix_exp_cases() {
  using R = tx::real_t<T>;
  // Random n x n matrices scaled to about the given 1-norms.
  const auto scaled = [](std::int64_t n, std::vector<double> norms, std::uint64_t seed) {
    auto A = tx::contiguous(Tensor<T>::randn({n, n, static_cast<std::int64_t>(norms.size())}, seed));
    T* a = A.mutable_data();
    for (std::size_t b = 0; b < norms.size(); ++b) {
      T* m = a + static_cast<std::int64_t>(b) * n * n;
      double norm = 0;
      for (std::int64_t j = 0; j < n; ++j) {
        double c = 0;
        for (std::int64_t i = 0; i < n; ++i) c += static_cast<double>(std::abs(m[i + j * n]));
        norm = std::max(norm, c);
      }
      for (std::int64_t e = 0; e < n * n; ++e) m[e] *= T(static_cast<R>(norms[b] / norm));
    }
    return A;
  };
  // The joint form (a prepared JVP's one step for exp(A) and L(A, E)): exp(A) the same bits as
  // matrix_exp, on the CPU kernel and in the generic form, and L the same as the Frechet op's.
  const auto joint = [](const Tensor<T>& A, const Tensor<T>& E, const std::string& what) {
    const auto [L, X] = tx::ops::ExpmFrechet{}.forward_joined(A, E);
    expect_same(X, tx::ops::MatrixExp{}.forward(A), "joint exp(A), " + what);
    expect_same(L, tx::ops::ExpmFrechet{}.forward(A, E), "joint L(A, E), " + what);
    const auto [gL, gX] = tx::detail::generic::matrix_exp_and_frechet(A, E);
    expect_same(gX, tx::detail::generic::matrix_exp(A), "generic joint exp(A), " + what);
    expect_same(gL, tx::detail::generic::matrix_exp_frechet(A, E), "generic joint L(A, E), " + what);
  };
  const auto& degrees = tx::detail::pade_degrees<R>();
  for (std::int64_t n : {1, 2, 5, 8, 20}) {  // 20: the norms' column sums in lanes (kernels/reduce.hpp)
    const std::string at = " n=" + std::to_string(n);
    auto A = scaled(n, {0.01, 3, 40, 1e3, 0.5}, 81);
    A.mutable_data()[2 * n * n] = T(std::nan(""));
    A.mutable_data()[3 * n * n + n - 1] = T(std::numeric_limits<R>::infinity());
    const auto E = Tensor<T>::randn({n, n, 5}, 82);
    expect_same(tx::detail::generic::matrix_exp(A), tx::ops::MatrixExp{}.forward(A), "matrix_exp" + at);
    expect_same(tx::detail::generic::matrix_exp_frechet(A, E), tx::ops::ExpmFrechet{}.forward(A, E),
                "matrix_exp_frechet" + at);
    joint(A, E, "with NaN and inf," + at);
    for (const auto& d : degrees) {
      // Norms below theta_m: degree m without scaling.
      const auto S = scaled(n, {d.theta * 0.9, d.theta * 0.2}, 83);
      const auto Es = Tensor<T>::randn({n, n}, 84);
      const std::string deg = at + " degree " + std::to_string(d.m);
      expect_same(tx::detail::generic::matrix_exp(S), tx::ops::MatrixExp{}.forward(S), "matrix_exp" + deg);
      expect_same(tx::detail::generic::matrix_exp_frechet(S, Es), tx::ops::ExpmFrechet{}.forward(S, Es),
                  "matrix_exp_frechet E broadcast" + deg);
      expect_same(tx::detail::generic::matrix_exp_frechet(S.mH(), Es), tx::ops::ExpmFrechet{}.forward(S.mH(), Es),
                  "matrix_exp_frechet A^H view" + deg);
      joint(S, Es, "E broadcast" + deg);
      joint(S.mH(), Es, "A^H view" + deg);
    }
  }
  const auto big = scaled(8, std::vector<double>(80, 2.0), 85);
  const auto Eb = Tensor<T>::randn({8, 8, 80}, 86);
  expect_same(tx::detail::generic::matrix_exp(big), tx::ops::MatrixExp{}.forward(big), "matrix_exp batch of 80");
  expect_same(tx::detail::generic::matrix_exp_frechet(big, Eb), tx::ops::ExpmFrechet{}.forward(big, Eb),
              "matrix_exp_frechet batch of 80");
  joint(big, Eb, "batch of 80");
  const auto A0 = Tensor<T>::randn({3, 3, 0}, 87);
  expect_same(tx::detail::generic::matrix_exp(A0), tx::ops::MatrixExp{}.forward(A0), "matrix_exp empty batch");
  expect_same(tx::detail::generic::matrix_exp_frechet(A0, A0), tx::ops::ExpmFrechet{}.forward(A0, A0),
              "matrix_exp_frechet empty batch");
  joint(A0, A0, "empty batch");
}

// pinv and lstsq's forward: the SVD op and tensor ops against the CPU's kernel (gesdd, the
// tolerance and the products per matrix). Tall, wide and square; a rank-deficient matrix whose
// smallest value the tolerance drops; B batched, broadcast and transposed; a failing SVD raises
// the same error.
template <class T>
void pinv_cases() {
  for (auto [m, n] : {std::pair{5, 3}, std::pair{3, 5}, std::pair{4, 4}, std::pair{1, 1}}) {
    const std::string at = " " + std::to_string(m) + "x" + std::to_string(n);
    auto A = tx::contiguous(Tensor<T>::randn({m, n, 3}, 91));
    if (m == 4)  // matrix 1 of rank 3: its last column the sum of the first two
      for (std::int64_t i = 0; i < m; ++i)
        A.mutable_data()[16 + 12 + i] = A.mutable_data()[16 + i] + A.mutable_data()[16 + 4 + i];
    const auto B = Tensor<T>::randn({m, 2, 3}, 92), B1 = Tensor<T>::randn({m, 2}, 93);
    const auto Bt = Tensor<T>::randn({2, m, 3}, 94).mT();
    for (double atol : {0.0, 0.5}) {
      const tx::detail::Tolerance tol{atol, 1e-6};
      const std::string what = at + " atol=" + std::to_string(atol);
      auto [Pg, Sg, Xg] = tx::detail::generic::pinv("lstsq", A, B, tol.atol, tol.rtol);
      auto [Xw, Pw, Sw] = tx::ops::Lstsq{tol}.forward(A, B);
      expect_same(Xg, Xw, "lstsq X" + what);
      expect_same(Pg, Pw, "lstsq P" + what);
      expect_same(Sg, Sw, "lstsq S" + what);
      expect_same(std::get<2>(tx::detail::generic::pinv("lstsq", A, B1, tol.atol, tol.rtol)),
                  std::get<0>(tx::ops::Lstsq{tol}.forward(A, B1)), "lstsq B broadcast" + what);
      expect_same(std::get<2>(tx::detail::generic::pinv("lstsq", A, Bt, tol.atol, tol.rtol)),
                  std::get<0>(tx::ops::Lstsq{tol}.forward(A, Bt)), "lstsq B^T view" + what);
      expect_same(std::get<0>(tx::detail::generic::pinv("pinv", A.mT(), Tensor<T>(), tol.atol, tol.rtol)),
                  std::get<0>(tx::ops::Pinv{tol}.forward(A.mT())), "pinv of A^T view" + what);
    }
  }
  auto bad = tx::contiguous(Tensor<T>::randn({3, 2, 2}, 95));
  bad.mutable_data()[7] = T(std::nan(""));
  const tx::detail::Tolerance tol{0.0, 1e-6};
  const std::string eg = tx::testing::error_of([&] { tx::detail::generic::pinv("pinv", bad, Tensor<T>(), 0.0, 1e-6); });
  const std::string ec = tx::testing::error_of([&] { tx::ops::Pinv{tol}.forward(bad); });
  EXPECT_FALSE(eg.empty());
  EXPECT_EQ(eg, ec);
  EXPECT_NE(ec.find("[pinv]"), std::string::npos) << ec;
}

// The 1/gap terms of the spectral rules: tensor ops against the CPU's kernel, gaps and sums, Exact
// and Mask: exactly repeated values, a pair inside the tolerance, a NaN, an inf; x strided; a batch
// large enough for the pool; an empty batch.
template <class T>
void pairs_cases() {
  using R = tx::real_t<T>;
  auto check = [](const Tensor<T>& x, const std::string& at) {
    for (bool sums : {false, true})
      for (bool mask : {false, true})
        for (double rtol : {1e-12, 0.05}) {
          const std::string what =
              at + (sums ? " sums" : " gaps") + (mask ? " mask" : " exact") + " rtol=" + std::to_string(rtol);
          expect_same_all(tx::detail::generic::inverse_pairs(x, sums, mask, rtol),
                          tx::ops::InversePairs{sums, mask, rtol}.forward(x), "inverse_pairs" + what);
        }
  };
  for (std::int64_t n : {1, 2, 5, 9}) {
    auto x = tx::contiguous(Tensor<T>::randn({n, 5}, 101));
    T* p = x.mutable_data();
    if (n > 1) {
      p[n + 1] = p[n];                       // matrix 1: a repeated value
      p[2 * n + 1] = p[2 * n] * T(R(1.01));  // matrix 2: a pair within 0.05 of the largest
      p[3 * n + n - 1] = T(std::nan(""));    // matrix 3: NaN
      p[4 * n] = T(std::numeric_limits<R>::infinity());
    }
    check(x, " n=" + std::to_string(n));
  }
  check(Tensor<T>::randn({3, 6}, 102).mT(), " x^T view");
  check(Tensor<T>::randn({64, 16}, 103), " batch of 16 at n=64");
  check(Tensor<T>::randn({64, 2, 3}, 104), " batch 2x3");
  check(Tensor<T>::randn({3, 0}, 105), " empty batch");
}

// The folds of the QR rules: tensor ops against the CPU's kernel, fold and fill of each triangle,
// with -0, NaN and inf entries, X strided, a batch, n = 1 and an empty batch.
template <class T>
void fold_cases() {
  using R = tx::real_t<T>;
  auto check = [](const Tensor<T>& X, const std::string& at) {
    for (bool fold : {false, true})
      for (bool upper : {false, true})
        expect_same(tx::detail::generic::triangle_fold(X, fold, upper), tx::ops::TriangleFold{fold, upper}.forward(X),
                    std::string("triangle_fold") + (fold ? " fold" : " fill") + (upper ? " upper" : " lower") + at);
  };
  auto X = tx::contiguous(Tensor<T>::randn({4, 4, 3}, 111));
  T* p = X.mutable_data();
  p[1] = T(-0.0);
  p[4] = T(-0.0);
  p[16 + 6] = T(std::nan(""));
  p[32 + 15] = T(std::numeric_limits<R>::infinity());
  check(X, " 4x4x3");
  check(Tensor<T>::randn({5, 5, 2}, 112).mT(), " X^T view");
  check(Tensor<T>::randn({1, 1}, 113), " 1x1");
  check(Tensor<T>::randn({3, 3, 0}, 114), " empty batch");
  const std::string e = tx::testing::error_of([] {
    tx::ops::TriangleFold{true, true}.forward(Tensor<T>::randn({3, 2}, 115));
  });
  EXPECT_NE(e.find("[triangle_fold]"), std::string::npos) << e;
  EXPECT_NE(e.find("square"), std::string::npos) << e;
}

}  // namespace

TEST(LinalgGeneric, TriangularSolveAndProductMatchTheFusedForward) {
  triangular_cases<tx::ops::SolveTriangular, double>("solve_triangular");
  triangular_cases<tx::ops::SolveTriangular, C>("solve_triangular");
  triangular_cases<tx::ops::TriangularMatmul, double>("triangular_matmul");
  triangular_cases<tx::ops::TriangularMatmul, C>("triangular_matmul");
  triangular_cases<tx::ops::TriangularMatmul, float>("triangular_matmul");
}

TEST(LinalgGeneric, LuFactorMatchesTheFusedForward) {
  lu_cases<double>();
  lu_cases<C>();
}

TEST(LinalgGeneric, SlogdetMatchesTheFusedForward) {
  slogdet_cases<double>();
  slogdet_cases<C>();
  slogdet_cases<float>();
}

TEST(LinalgGeneric, DetMatchesTheFusedForward) {
  det_cases<double>();
  det_cases<C>();
  det_cases<float>();
  det_cases<std::complex<float>>();
}

TEST(LinalgGeneric, SvdMatchesTheFusedForward) {
  svd_cases<double>();
  svd_cases<C>();
}

TEST(LinalgGeneric, CholeskyMatchesTheFusedForward) {
  cholesky_cases<double>();
  cholesky_cases<float>();
  cholesky_cases<C>();
}

TEST(LinalgGeneric, EighMatchesTheFusedForward) {
  eigh_cases<double>();
  eigh_cases<C>();
  eigh_cases<std::complex<float>>();
}

TEST(LinalgGeneric, QrMatchesTheFusedForward) {
  qr_cases<double>();
  qr_cases<C>();
  qr_cases<float>();
}

TEST(LinalgGeneric, SolveMatchesTheFusedForward) {
  solve_cases<double>();
  solve_cases<C>();
}

// matmul through the batched gemm of the generic path (operands gemm cannot read cloned first)
// against the CPU's kernel (operands copied into scratch inside the kernel).
TEST(LinalgGeneric, MatmulMatchesTheCpuKernel) {
  const auto run = [](const Tensor<double>& a, const Tensor<double>& b, const std::string& what) {
    const auto want = tx::matmul(a, b);
    const tx::Shape batch =
        tx::broadcast_shapes(tx::detail::mat_batch_shape(a.shape()), tx::detail::mat_batch_shape(b.shape()), "matmul");
    const auto got = Tensor<double>::empty(want.shape());
    tx::detail::generic::matmul_into(got, a, b, batch);
    expect_same(got, want, what);
  };
  const auto a = Tensor<double>::randn({3, 4, 2}, 71), b = Tensor<double>::randn({4, 5, 2}, 72);
  run(a, b, "plain batch");
  run(Tensor<double>::randn({4, 3, 2}, 73).mT(), b, "A^T view");
  run(a, tx::slice(b, 2, 0, 1).reshape(tx::Shape{4, 5}), "B broadcast");
  run(tx::slice(Tensor<double>::randn({6, 4, 2}, 74), 0, 0, 6, 2), b, "A rows at stride 2 (cloned)");
  run(a, tx::expand(Tensor<double>::randn({4, 5, 1}, 75), {4, 5, 2}), "B expanded (stride-0 batch)");
}

TEST(LinalgGeneric, MatrixExpMatchesTheFusedForward) {
  matrix_exp_cases<double>();
  matrix_exp_cases<C>();
  matrix_exp_cases<float>();
  matrix_exp_cases<std::complex<float>>();
}

TEST(LinalgGeneric, PinvAndLstsqMatchTheFusedForward) {
  pinv_cases<double>();
  pinv_cases<C>();
  pinv_cases<float>();
  pinv_cases<std::complex<float>>();
}

TEST(LinalgGeneric, InversePairsMatchTheFusedForward) {
  pairs_cases<double>();
  pairs_cases<C>();
  pairs_cases<float>();
}

TEST(LinalgGeneric, TriangleFoldMatchesTheFusedForward) {
  fold_cases<double>();
  fold_cases<C>();
  fold_cases<float>();
}
