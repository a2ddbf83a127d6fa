#pragma once
// matrix_exp: exp(A) by scaling and squaring with a diagonal Pade approximant (Higham 2005, "The
// scaling and squaring method for the matrix exponential revisited"): the degree comes from the
// batch's largest 1-norm and the number of squarings from each matrix's, through the backward-error
// bounds theta_m of that paper. The device's backend computes it (BatchedLinalg::matrix_exp: on the
// CPU one fused kernel, src/cpu/linalg_expm.cpp; elsewhere generic::matrix_exp, the same steps in
// tensor ops, backend/generic_linalg.hpp). Derivatives are the Frechet derivative L(A, E), computed with exp(A) by
// differentiating the algorithm (Al-Mohy and Higham 2009), and the adjoint L(A, .)^* = L(A^H, .); L's own derivatives
// come from exp([[A, E], [0, A]]) = [[exp(A), L(A, E)], [0, exp(A)]] (Mathias 1996), Frechet derivatives of order 2n,
// so every order works.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

#include "tenax/ad/apply.hpp"
#include "tenax/backend/backend.hpp"
#include "tenax/core/instances.hpp"
#include "tenax/ops/fwd.hpp"
#include "tenax/ops/linalg/common.hpp"

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

// The Pade degree of a batch whose largest finite 1-norm is eta: the lowest degree that serves it
// without scaling, else the top one (Higham 2005, algorithm 2.3, with one degree for the batch).
template <class R>
const PadeDegree& expm_degree(double eta) {
  const auto& degrees = pade_degrees<R>();
  for (const PadeDegree& d : degrees)
    if (eta <= d.theta) return d;
  return degrees.back();
}

// The squarings of a matrix of 1-norm v at the batch's degree d: with the top degree, the least s
// with v / 2^s <= theta; otherwise, and for an inf or NaN norm (the result is NaN), none.
template <class R>
int expm_squarings(double v, const PadeDegree& d) {
  if (&d != &pade_degrees<R>().back() || !std::isfinite(v) || v <= d.theta) return 0;
  return static_cast<int>(std::ceil(std::log2(v / d.theta)));
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

// L(A, E), the Frechet derivative of exp at A in the direction E, from the device's backend (the
// CPU's fused kernel, src/cpu/linalg_expm.cpp; generic::matrix_exp_frechet elsewhere).
// L is linear in E and L(A, E) is the top right block of exp(M), M = [[A, E], [0, A]], so its own
// derivatives are Frechet derivatives of order 2n (this op again, so every order works):
//   dL = [L(M, [[dA, dE], [0, dA]])]_12;
//   gM = L(M^H, [[0, G], [0, 0]]):  gA = gM_11 + gM_22,  gE = gM_12.
struct ExpmFrechet {
  static constexpr const char* name = "matrix_exp_frechet";
  static constexpr bool one_kernel = true;  // on the CPU, forward is one captured kernel (kernels/capture.hpp)
  static constexpr bool saves_outputs = false;

  template <class T>
  Tensor<T> forward(const Tensor<T>& A, const Tensor<T>& E) const {
    return std::get<0>(detail::linalg_backend<T>(name, A.device()).matrix_exp_frechet(A, E, false));
  }
  // The algorithm computes exp(A) along the way, bit for bit as matrix_exp does: a prepared program
  // that runs matrix_exp(A) and this op on A (a JVP) runs one step for both (trace/program.hpp,
  // joined steps), returning L, exp(A).
  static constexpr const char* joins = "matrix_exp";
  static constexpr const char* joined_name = "matrix_exp_frechet+matrix_exp";
  template <class T>
  std::tuple<Tensor<T>, Tensor<T>> forward_joined(const Tensor<T>& A, const Tensor<T>& E) const {
    return detail::linalg_backend<T>(name, A.device()).matrix_exp_frechet(A, E, true);
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
  static constexpr bool one_kernel = true;      // on the CPU, forward is one captured kernel
  static constexpr bool saves_outputs = false;  // the rules read A only

  template <class T>
  Tensor<T> forward(const Tensor<T>& A) const {
    return detail::linalg_backend<T>(name, A.device()).matrix_exp(A);
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
