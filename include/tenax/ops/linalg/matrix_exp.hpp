#pragma once
// matrix_exp: exp(A) by scaling and squaring with a diagonal Pade approximant (Higham 2005, "The
// scaling and squaring method for the matrix exponential revisited"): the degree and the number of
// squarings come from the 1-norm through the backward-error bounds theta_m of that paper, per
// matrix. Derivatives are the Frechet derivative, read off the exponential of a block matrix
// (Mathias 1996): exp([[A, E], [0, A]]) = [[exp(A), L(A, E)], [0, exp(A)]], and the adjoint
// L(A, .)^* = L(A^H, .); the rules call matrix_exp, so every order works.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "tenax/ad/apply.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/linalg/common.hpp"
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

// exp(A) for each matrix of A (n x n x batch). The 1-norms are read on the host (one
// synchronisation on a device): the batch shares the lowest degree that serves every matrix
// without scaling, or degree 13 (7 in single precision) with each matrix scaled by its own 2^-s
// and squared s times. A matrix holding inf or NaN gives NaN.
template <class T>
Tensor<T> expm(const Tensor<T>& A) {
  using R = real_t<T>;
  if (A.numel() == 0) return clone(A);
  const Shape batch = mat_batch_shape(A.shape());
  const std::vector<R> norms = max(sum(abs(A), {0}, false), {0}, false).to_vector();
  const auto& degrees = pade_degrees<R>();
  const PadeDegree& top = degrees.back();
  double eta = 0;
  for (R v : norms)
    if (std::isfinite(static_cast<double>(v))) eta = std::max(eta, static_cast<double>(v));
  const PadeDegree* p = &top;
  for (const PadeDegree& d : degrees)
    if (eta <= d.theta) {
      p = &d;
      break;
    }
  std::vector<int> s(norms.size(), 0);
  int s_max = 0;
  if (p == &top)
    for (std::size_t i = 0; i < norms.size(); ++i) {
      const double v = static_cast<double>(norms[i]);
      if (std::isfinite(v) && v > top.theta) s[i] = static_cast<int>(std::ceil(std::log2(v / top.theta)));
      s_max = std::max(s_max, s[i]);
    }
  Tensor<T> X = A;
  if (s_max > 0) {
    std::vector<T> scale;
    for (int si : s) scale.push_back(static_cast<T>(std::ldexp(1.0, -si)));
    X = mul(A, Tensor<T>::from_col_major(with_batch(1, 1, batch), scale).to(A.device()));
  }
  Tensor<T> E = pade_approximant(X, *p);
  for (int k = 0; k < s_max; ++k) {
    const Tensor<T> E2 = matmul(E, E);
    if (std::all_of(s.begin(), s.end(), [k](int si) { return si > k; })) {
      E = E2;
      continue;
    }
    std::vector<bool> more;  // the matrices squared again
    for (int si : s) more.push_back(si > k);
    E = where(Tensor<bool>::from_col_major(with_batch(1, 1, batch), more).to(A.device()), E2, E);
  }
  return E;
}

// L(A, E): the Frechet derivative of exp at A in the direction E, the top right block of the
// exponential of [[A, E], [0, A]] (through the public matrix_exp, so it is differentiable).
template <class T>
Tensor<T> expm_frechet(const Tensor<T>& A, const Tensor<T>& E) {
  const std::int64_t n = A.shape()[0];
  const Tensor<T> Ab = broadcast_to(A, E.shape());
  const Tensor<T> top = concat<T>({Ab, E}, 1);
  const Tensor<T> bottom = concat<T>({Tensor<T>::zeros(E.shape(), E.device()), Ab}, 1);
  const Tensor<T> M = concat<T>({top, bottom}, 0);
  return slice(slice(linalg_matrix_exp(M), 0, 0, n, 1), 1, n, 2 * n, 1);
}

}  // namespace detail

namespace ops {

struct MatrixExp {
  static constexpr const char* name = "matrix_exp";
  static constexpr bool saves_outputs = false;  // the rules read A only

  template <class T>
  Tensor<T> forward(const Tensor<T>& A) const {
    return detail::expm(A);
  }
  // dE = L(A, dA);  gA = L(A^H, gE)  (docs/MATH.md: the adjoint of a primary matrix function's
  // Frechet derivative is the Frechet derivative at A^H).
  template <class C>
  auto jvp(const C& c) const {
    return detail::expm_frechet(c.x0(), c.dx0());
  }
  template <class C>
  auto vjp(const C& c) const {
    using T = typename std::remove_cvref_t<decltype(c.x0())>::value_type;
    if (!c.gy0().defined()) return Tensor<T>();
    return detail::expm_frechet(c.x0().mH(), c.gy0());
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
