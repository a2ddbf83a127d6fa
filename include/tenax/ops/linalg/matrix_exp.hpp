#pragma once
// matrix_exp: exp(A) by scaling and squaring with a diagonal Pade approximant (Higham 2005, "The
// scaling and squaring method for the matrix exponential revisited"): the degree and the number of
// squarings come from the 1-norm through the backward-error bounds theta_m of that paper, per
// matrix. Derivatives are the Frechet derivative L(A, E), computed with exp(A) by differentiating
// the algorithm (Al-Mohy and Higham 2009), and the adjoint L(A, .)^* = L(A^H, .); L's own
// derivatives come from exp([[A, E], [0, A]]) = [[exp(A), L(A, E)], [0, exp(A)]] (Mathias 1996),
// Frechet derivatives of order 2n, so every order works.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/linalg/common.hpp"
#include "tenax/ops/linalg/lu_solve.hpp"
#include "tenax/ops/linalg/solve.hpp"
#include "tenax/ops/reduce/extremum.hpp"
#include "tenax/ops/reduce/sum.hpp"

namespace tenax {
namespace detail {

template <class T>
Tensor<T> linalg_matrix_exp(const Tensor<T>& A);

// One diagonal Pade approximant r_m = q_m(X)^-1 p_m(X): its degree, coefficients b_0..b_m and the
// largest 1-norm ||X|| it is used for (theta_m, Higham 2005 table 2.3 for double and single
// precision).
struct PadeDegree {
  int m;
  double theta;
  std::array<double, 14> b;
};

template <class R>
const std::vector<PadeDegree>& pade_degrees() {
  static constexpr std::array<double, 14> b3{120, 60, 12, 1};
  static constexpr std::array<double, 14> b5{30240, 15120, 3360, 420, 30, 1};
  static constexpr std::array<double, 14> b7{17297280, 8648640, 1995840, 277200, 25200, 1512, 56, 1};
  static constexpr std::array<double, 14> b9{17643225600, 8821612800, 2075673600, 302702400, 30270240,
                                             2162160,     110880,     3960,       90,        1};
  static constexpr std::array<double, 14> b13{64764752532480000.0,
                                              32382376266240000.0,
                                              7771770303897600.0,
                                              1187353796428800.0,
                                              129060195264000.0,
                                              10559470521600.0,
                                              670442572800.0,
                                              33522128640.0,
                                              1323241920.0,
                                              40840800.0,
                                              960960.0,
                                              16380.0,
                                              182.0,
                                              1.0};
  static const std::vector<PadeDegree> single{
      {3, 4.258730016922831e-1, b3}, {5, 1.880152677804762e0, b5}, {7, 3.925724783138660e0, b7}};
  static const std::vector<PadeDegree> dbl{{3, 1.495585217958292e-2, b3},
                                           {5, 2.539398330063230e-1, b5},
                                           {7, 9.504178996162932e-1, b7},
                                           {9, 2.097847961257068e0, b9},
                                           {13, 5.371920351148152e0, b13}};
  if constexpr (std::is_same_v<R, float>)
    return single;
  else
    return dbl;
}

// r_m(X) for a batch of matrices X: U = X (sum of the odd terms / X), V = the even terms,
// r = (V - U)^-1 (V + U). Degree 13 evaluates the high powers by Horner in X^6 (Higham's
// algorithm 2.3: six products and one solve).
template <class T>
Tensor<T> pade_approximant(const Tensor<T>& X, const PadeDegree& p) {
  const std::int64_t n = X.shape()[0];
  const Tensor<T> I = batch_eye<T>(n, mat_batch_shape(X.shape()), X.device());
  auto b = [&](int j) { return static_cast<T>(p.b[static_cast<std::size_t>(j)]); };
  const Tensor<T> X2 = matmul(X, X);
  Tensor<T> U, V;
  if (p.m == 13) {
    const Tensor<T> X4 = matmul(X2, X2), X6 = matmul(X4, X2);
    const Tensor<T> u_hi = add(add(mul(X6, b(13)), mul(X4, b(11))), mul(X2, b(9)));
    const Tensor<T> v_hi = add(add(mul(X6, b(12)), mul(X4, b(10))), mul(X2, b(8)));
    const Tensor<T> u_lo = add(add(add(mul(X6, b(7)), mul(X4, b(5))), mul(X2, b(3))), mul(I, b(1)));
    const Tensor<T> v_lo = add(add(add(mul(X6, b(6)), mul(X4, b(4))), mul(X2, b(2))), mul(I, b(0)));
    U = matmul(X, add(matmul(X6, u_hi), u_lo));
    V = add(matmul(X6, v_hi), v_lo);
  } else {
    // sum_k b_{2k+1} X^{2k} and sum_k b_{2k} X^{2k} over the even powers X^0, X^2, ..., X^{m-1}.
    Tensor<T> u = mul(I, b(1)), v = mul(I, b(0)), Xk = X2;
    for (int k = 2; k <= p.m; k += 2) {
      u = add(u, mul(Xk, b(k + 1)));
      v = add(v, mul(Xk, b(k)));
      if (k + 2 <= p.m) Xk = matmul(Xk, X2);
    }
    U = matmul(X, u);
    V = v;
  }
  return std::get<0>(ops::Solve{}.forward(sub(V, U), add(V, U)));
}

// The scaling of a batch: one Pade degree for all its matrices (the lowest that serves every
// matrix without scaling, else the top one) and, with the top degree, each matrix's own number of
// squarings s (||A||_1 / 2^s <= theta). The 1-norms are read on the host (one synchronisation on a
// device); a matrix holding inf or NaN gets s = 0 (its result is NaN).
struct ExpmScaling {
  const PadeDegree* degree = nullptr;
  std::vector<int> s;
  int s_max = 0;
};

template <class T>
ExpmScaling expm_scaling(const Tensor<T>& A) {
  using R = real_t<T>;
  const std::vector<R> norms = max(sum(abs(A), {0}, false), {0}, false).to_vector();
  const auto& degrees = pade_degrees<R>();
  const PadeDegree& top = degrees.back();
  double eta = 0;
  for (R v : norms)
    if (std::isfinite(static_cast<double>(v))) eta = std::max(eta, static_cast<double>(v));
  ExpmScaling sc;
  sc.degree = &top;
  for (const PadeDegree& d : degrees)
    if (eta <= d.theta) {
      sc.degree = &d;
      break;
    }
  sc.s.assign(norms.size(), 0);
  if (sc.degree == &top)
    for (std::size_t i = 0; i < norms.size(); ++i) {
      const double v = static_cast<double>(norms[i]);
      if (std::isfinite(v) && v > top.theta) sc.s[i] = static_cast<int>(std::ceil(std::log2(v / top.theta)));
      sc.s_max = std::max(sc.s_max, sc.s[i]);
    }
  return sc;
}

// X / 2^s per matrix (X unchanged when no matrix is scaled).
template <class T>
Tensor<T> scale_down(const Tensor<T>& X, const ExpmScaling& sc) {
  if (sc.s_max == 0) return X;
  std::vector<T> scale;
  for (int si : sc.s) scale.push_back(static_cast<T>(std::ldexp(1.0, -si)));
  return mul(X, Tensor<T>::from_col_major(with_batch(1, 1, mat_batch_shape(X.shape())), scale, X.device()));
}

// Whether each matrix is squared at step k (1 x 1 x batch), or undefined when all are.
template <class T>
Tensor<bool> squared_at(int k, const ExpmScaling& sc, const Tensor<T>& like) {
  if (std::all_of(sc.s.begin(), sc.s.end(), [k](int si) { return si > k; })) return {};
  std::vector<bool> more;
  for (int si : sc.s) more.push_back(si > k);
  return Tensor<bool>::from_col_major(with_batch(1, 1, mat_batch_shape(like.shape())), more, like.device());
}

// exp(A) for each matrix of A (n x n x batch), scaled per matrix and squared back (expm_scaling).
template <class T>
Tensor<T> expm(const Tensor<T>& A) {
  if (A.numel() == 0) return clone(A);
  const ExpmScaling sc = expm_scaling(A);
  Tensor<T> E = pade_approximant(scale_down(A, sc), *sc.degree);
  for (int k = 0; k < sc.s_max; ++k) {
    const Tensor<T> E2 = matmul(E, E);
    const Tensor<bool> more = squared_at(k, sc, A);
    E = more.defined() ? where(more, E2, E) : E2;
  }
  return E;
}

// exp(A) and its Frechet derivative L(A, E) together, by differentiating the scaling and squaring
// algorithm (Al-Mohy and Higham 2009, "Computing the Frechet derivative of the matrix exponential",
// algorithm 6.4): every product of the Pade approximant carries its tangent (d(XY) = dX Y + X dY),
// the solve reuses its LU (dR = Q^-1 (dP - dQ R)), and each squaring R <- R^2 takes L <- R L + L R.
// About three exponentials' work, against eight for the block exponential of order 2n. The degree
// and scaling are expm's for A (expm_scaling, Higham 2005's theta_m), not the somewhat smaller
// bounds l_m that Al-Mohy and Higham derive for L's backward error; the gradient harness checks L.
template <class T>
std::pair<Tensor<T>, Tensor<T>> expm_frechet_pair(const Tensor<T>& A, const Tensor<T>& E) {
  if (A.numel() == 0) return {clone(A), clone(E)};
  const ExpmScaling sc = expm_scaling(A);
  const PadeDegree& p = *sc.degree;
  const Tensor<T> X = scale_down(A, sc), dX = scale_down(broadcast_to(E, A.shape()), sc);
  const std::int64_t n = A.shape()[0];
  const Tensor<T> I = batch_eye<T>(n, mat_batch_shape(A.shape()), A.device());
  auto b = [&](int j) { return static_cast<T>(p.b[static_cast<std::size_t>(j)]); };
  auto prod = [](const Tensor<T>& x, const Tensor<T>& dx, const Tensor<T>& y, const Tensor<T>& dy) {
    return std::pair{matmul(x, y), add(matmul(dx, y), matmul(x, dy))};
  };
  const auto [X2, dX2] = prod(X, dX, X, dX);
  Tensor<T> U, dU, V, dV;
  if (p.m == 13) {
    const auto [X4, dX4] = prod(X2, dX2, X2, dX2);
    const auto [X6, dX6] = prod(X4, dX4, X2, dX2);
    auto comb = [&](const Tensor<T>& a6, const Tensor<T>& a4, const Tensor<T>& a2, int j6, int j4, int j2) {
      return add(add(mul(a6, b(j6)), mul(a4, b(j4))), mul(a2, b(j2)));
    };
    const Tensor<T> u_hi = comb(X6, X4, X2, 13, 11, 9), du_hi = comb(dX6, dX4, dX2, 13, 11, 9);
    const Tensor<T> v_hi = comb(X6, X4, X2, 12, 10, 8), dv_hi = comb(dX6, dX4, dX2, 12, 10, 8);
    const Tensor<T> u_lo = add(comb(X6, X4, X2, 7, 5, 3), mul(I, b(1))), du_lo = comb(dX6, dX4, dX2, 7, 5, 3);
    const Tensor<T> v_lo = add(comb(X6, X4, X2, 6, 4, 2), mul(I, b(0))), dv_lo = comb(dX6, dX4, dX2, 6, 4, 2);
    const auto [W6, dW6] = prod(X6, dX6, u_hi, du_hi);
    const Tensor<T> W = add(W6, u_lo), dW = add(dW6, du_lo);
    std::tie(U, dU) = prod(X, dX, W, dW);
    const auto [V6, dV6] = prod(X6, dX6, v_hi, dv_hi);
    V = add(V6, v_lo), dV = add(dV6, dv_lo);
  } else {
    Tensor<T> u = mul(I, b(1)), v = mul(I, b(0)), du, dv, Xk = X2, dXk = dX2;
    for (int k = 2; k <= p.m; k += 2) {
      u = add(u, mul(Xk, b(k + 1))), du = detail::accumulate(du, mul(dXk, b(k + 1)));
      v = add(v, mul(Xk, b(k))), dv = detail::accumulate(dv, mul(dXk, b(k)));
      if (k + 2 <= p.m) std::tie(Xk, dXk) = prod(Xk, dXk, X2, dX2);
    }
    std::tie(U, dU) = prod(X, dX, u, du);
    V = v, dV = dv;
  }
  auto [R, LU, piv, info] = ops::Solve{}.forward(sub(V, U), add(V, U));
  (void)info;
  const Tensor<T> rhs = sub(add(dV, dU), matmul(sub(dV, dU), R));
  Tensor<T> L = ops::SavedLuSolve{tenax::cpu::Trans::N}.forward(sub(V, U), LU, piv, rhs);
  for (int k = 0; k < sc.s_max; ++k) {
    const Tensor<T> L2 = add(matmul(R, L), matmul(L, R)), R2 = matmul(R, R);
    const Tensor<bool> more = squared_at(k, sc, A);
    L = more.defined() ? where(more, L2, L) : L2;
    R = more.defined() ? where(more, R2, R) : R2;
  }
  return {R, L};
}

// The upper triangular block matrix [[A, E], [0, A]] (2n x 2n x batch); E's batch broadcast to A's.
template <class T>
Tensor<T> frechet_block(const Tensor<T>& A, const Tensor<T>& E) {
  const Tensor<T> Eb = broadcast_to(E, A.shape());
  return concat<T>({concat<T>({A, Eb}, 1), concat<T>({Tensor<T>::zeros(A.shape(), A.device()), A}, 1)}, 0);
}

// Rows r0.. and columns c0.. of each matrix of X, an n x n block.
template <class T>
Tensor<T> block_of(const Tensor<T>& X, std::int64_t n, std::int64_t r0, std::int64_t c0) {
  return slice(slice(X, 0, r0, r0 + n, 1), 1, c0, c0 + n, 1);
}

}  // namespace detail

namespace ops {

// L(A, E), the Frechet derivative of exp at A in the direction E (detail::expm_frechet_pair).
// L is linear in E and L(A, E) is the top right block of exp(M), M = [[A, E], [0, A]], so its own
// derivatives are Frechet derivatives of order 2n (this op again, so every order works):
//   dL = [L(M, [[dA, dE], [0, dA]])]_12;
//   gM = L(M^H, [[0, G], [0, 0]]):  gA = gM_11 + gM_22,  gE = gM_12.
struct ExpmFrechet {
  static constexpr const char* name = "matrix_exp_frechet";
  static constexpr bool saves_outputs = false;

  template <class T>
  Tensor<T> forward(const Tensor<T>& A, const Tensor<T>& E) const {
    return detail::expm_frechet_pair(A, E).second;
  }
  template <class C>
  auto jvp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>&A = c.x0(), &E = c.x1();
    const std::int64_t n = A.shape()[0];
    const Tensor<T> zero = Tensor<T>::zeros(A.shape(), A.device());
    const Tensor<T> dA = c.dx0().defined() ? broadcast_to(c.dx0(), A.shape()) : zero;
    const Tensor<T> dE = c.dx1().defined() ? c.dx1() : zero;
    const Tensor<T> dM = detail::frechet_block(dA, dE);
    return detail::block_of(detail::apply(ExpmFrechet{}, detail::frechet_block(A, E), dM), n, 0, n);
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    const Tensor<T>&A = c.x0(), &E = c.x1(), &G = c.gy0();
    if (!G.defined()) return std::tuple{Tensor<T>(), Tensor<T>()};
    const std::int64_t n = A.shape()[0];
    const Tensor<T> zero = Tensor<T>::zeros(G.shape(), G.device());
    const Tensor<T> Gfull = concat<T>({concat<T>({zero, G}, 1), concat<T>({zero, zero}, 1)}, 0);
    const Tensor<T> gM = detail::apply(ExpmFrechet{}, detail::frechet_block(A, E).mH(), Gfull);
    Tensor<T> gA, gE;
    if (c.needs(0)) gA = sum_to(add(detail::block_of(gM, n, 0, 0), detail::block_of(gM, n, n, n)), A.shape());
    if (c.needs(1)) gE = sum_to(detail::block_of(gM, n, 0, n), E.shape());
    return std::tuple{gA, gE};
  }
};

struct MatrixExp {
  static constexpr const char* name = "matrix_exp";
  static constexpr bool saves_outputs = false;  // the rules read A only

  template <class T>
  Tensor<T> forward(const Tensor<T>& A) const {
    return detail::expm(A);
  }
  // dE = L(A, dA);  gA = L(A^H, gE)  (docs/MATH.md: the adjoint of a primary matrix function's
  // Frechet derivative is the Frechet derivative at A^H), both the ExpmFrechet op.
  template <class C>
  auto jvp(const C& c) const {
    return detail::apply(ExpmFrechet{}, c.x0(), c.dx0());
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    if (!c.gy0().defined()) return Tensor<T>();
    return detail::apply(ExpmFrechet{}, c.x0().mH(), c.gy0());
  }
};

}  // namespace ops

namespace detail {
template <class T>
Tensor<T> linalg_matrix_exp(const Tensor<T>& A) {
  return detail::apply(ops::MatrixExp{}, A);
}
}  // namespace detail

namespace linalg {

// exp(A) for each square matrix of A (torch.linalg.matrix_exp), accurate for large norms (scaling
// and squaring) and differentiable to any order through the Frechet derivative.
template <Floating T>
Tensor<T> matrix_exp(const Tensor<T>& A) {
  tenax::detail::check_square("matrix_exp", A);
  return tenax::detail::linalg_matrix_exp(A);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_MATRIX_EXP(T) TENAX_INSTANCE Tensor<T> matrix_exp(const Tensor<T>&);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_MATRIX_EXP)

}  // namespace linalg
}  // namespace tenax
