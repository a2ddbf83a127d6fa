#pragma once
// The jvp_vjp suite's cases, sizes, inputs and correctness checks, shared by the tenax rows
// (jvp_vjp.cpp) and the libtorch reference rows (ref_libtorch/jvp_vjp_torch.cpp). Only plain types
// cross between the two, as in large_ad_cases.hpp, whose inputs, losses and finite-difference
// helpers this suite reuses.
//
// Cases (BENCHMARKS.md suite 2), all f64, A n x n, each a scalar loss of A alone (b is a constant):
//   qr     grad_sum_qr    = sum(Q) + sum(R)          A = well(n, 1), reduced QR
//   eigh   grad_sum_eigh  = sum(w) + sum(V)          A = spd(n, 1), V in the canonical gauge
//   solve  grad_sum_solve = sum(solve(A, b))         A = well(n, 1), b = data((n,1), 2), n x 1
//   lu     grad_sum_lu    = sum(L) + sum(U)          A = well(n, 1), A = P L U
//   svd_s  grad_sum_svd_s = sum(singular values)     A = well(n, 1)
//   lstsq  grad_sum_lstsq = sum(lstsq(A, b).solution)  A = well(n, 1), b = data((n,1), 2), n x 1
//   eigvals grad_sum_eigvals = sum(Re eigvals(A))    A = well(n, 1)
//   matrix_exp grad_sum_matrix_exp = sum(exp(A))     A = well(n, 1)
// (the large_ad cases qr, eigh, solve, lu, svdvals, lstsq, eigvals and matrix_exp, same inputs and
// same loss definitions).
// Each case is timed as a JVP (forward mode: the loss and its directional derivative along the
// tangent dA) and as a VJP (reverse mode: the loss and its gradient, cotangent the scalar 1).
// The tangent dA: data((n,n), 1 + 1000) (the tangent seed, BENCHMARKS.md "Tangent seeds"),
// symmetrised for eigh (which reads one triangle), scaled to unit Frobenius norm; it is also the
// finite-difference direction of the checks.
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "large_ad_cases.hpp"

namespace tenax_bench::jvp_vjp {

using large_ad::Grad;
using large_ad::Inputs;
using large_ad::LossFn;
using large_ad::num;

// The cases: each is the large_ad case base_case(c) (its own type, so that overloads on the two
// suites' cases do not collide).
enum class Case { qr, eigh, solve, lu, svd_s, lstsq, eigvals, matrix_exp };
enum class Mode { jvp, vjp };
inline constexpr Case kCases[] = {Case::qr,    Case::eigh,  Case::solve,   Case::lu,
                                  Case::svd_s, Case::lstsq, Case::eigvals, Case::matrix_exp};
inline constexpr Mode kModes[] = {Mode::jvp, Mode::vjp};

inline large_ad::Case base_case(Case c) {
  switch (c) {
    case Case::qr:
      return large_ad::Case::qr;
    case Case::eigh:
      return large_ad::Case::eigh;
    case Case::solve:
      return large_ad::Case::solve;
    case Case::lu:
      return large_ad::Case::lu;
    case Case::svd_s:
      return large_ad::Case::svdvals;
    case Case::lstsq:
      return large_ad::Case::lstsq;
    case Case::eigvals:
      return large_ad::Case::eigvals;
    case Case::matrix_exp:
      return large_ad::Case::matrix_exp;
  }
  return large_ad::Case::qr;
}
inline const char* case_name(Case c) { return c == Case::svd_s ? "svd_s" : large_ad::case_name(base_case(c)); }
inline const char* mode_name(Mode m) { return m == Mode::jvp ? "jvp" : "vjp"; }

// Row name jvp_vjp/<case>_<jvp|vjp>/f64/<n>x<n>/<mode>.
inline std::string row_name(Case c, Mode m, int n, const char* mode) {
  return std::string("jvp_vjp/") + case_name(c) + "_" + mode_name(m) + "/f64/" + std::to_string(n) + "x" +
         std::to_string(n) + "/" + mode;
}

// The sizes: TENAX_JVP_VJP_SIZES (comma-separated list) if set; else 2, 4, 8, 256, 512 and 1024
// when TENAX_BENCH_PROFILE=full (scripts/bench.sh --full sets it), else the quick profile 2..512.
inline std::vector<int> sizes() {
  return large_ad::sizes_from_env("TENAX_JVP_VJP_SIZES", {2, 4, 8, 256, 512}, {2, 4, 8, 256, 512, 1024});
}

inline std::string profile_description() {
  std::string s = "sizes";
  for (int n : sizes()) (s += ' ') += std::to_string(n);
  const char* list = std::getenv("TENAX_JVP_VJP_SIZES");
  const char* prof = std::getenv("TENAX_BENCH_PROFILE");
  s += list && *list ? " (from TENAX_JVP_VJP_SIZES)"
                     : std::string(" (TENAX_BENCH_PROFILE=") + (prof ? prof : "unset") + ")";
  return s;
}

// The tangent dA (see above); d.b is zero (b is not an input of the function), sized like the
// case's b so that large_ad's finite differences apply unchanged.
inline Inputs make_tangent(Case c, int n) {
  Inputs d;
  d.n = n;
  d.a = large_ad::data(n, n, large_ad::kSeedA + large_ad::kTangentOffset);
  if (large_ad::symmetric_input(base_case(c)))
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < i; ++j) {
        const double m = 0.5 * (d.a[i * n + j] + d.a[j * n + i]);
        d.a[i * n + j] = d.a[j * n + i] = m;
      }
  double s = 0;
  for (double x : d.a) s += x * x;
  s = std::sqrt(s);
  for (auto& x : d.a) x /= s;
  d.b.assign(static_cast<std::size_t>(large_ad::second_cols(base_case(c), n)) * n, 0.0);
  return d;
}

// A JVP's result: the loss and its directional derivative along the tangent.
struct Jvp {
  double loss = NAN, tangent = NAN;
};

// Checks a JVP of `who` at the case's inputs: finite loss, the tangent against central
// differences of `loss` along dA, and, when `other` is given, agreement of the loss and the
// tangent with another implementation. Empty when correct, else the reason (the row's error).
// `detail`, when given, receives the measured errors (the row's label).
inline std::string check_jvp(const char* who, Case c, int n, const Inputs& x, const Inputs& d, const Jvp& got,
                             const LossFn& loss, const Jvp* other, const char* other_name, std::string* detail) {
  const std::string tag = std::string(who) + " " + case_name(c) + "_jvp n=" + std::to_string(n) + ": ";
  if (!std::isfinite(got.loss) || !std::isfinite(got.tangent)) return tag + "loss or tangent is not finite";
  double fd = 0, h = 0;
  const double err = large_ad::directional_fd_error(loss, x, d, got.tangent, &fd, &h);
  std::string info = "fd rel err " + num(err) + " (h " + num(h) + ")";
  if (!(err < large_ad::kFdRtol))
    return tag + "tangent " + num(got.tangent) + " fails the central-difference check: differences " + num(fd) +
           ", relative error " + num(err) + " (limit " + num(large_ad::kFdRtol) + ")";
  if (other) {
    if (!close(got.loss, other->loss, large_ad::kLossRtol))
      return tag + "loss " + num(got.loss) + " differs from " + other_name + " " + num(other->loss);
    const double e =
        std::abs(got.tangent - other->tangent) / std::max({std::abs(got.tangent), std::abs(other->tangent), 1e-300});
    info += ", vs " + std::string(other_name) + " " + num(e);
    if (!(e <= large_ad::kCrossRtol))
      return tag + "tangent " + num(got.tangent) + " differs from " + other_name + "'s " + num(other->tangent) +
             " (limit " + num(large_ad::kCrossRtol) + ")";
  }
  if (detail) *detail = info;
  return {};
}

// Checks a VJP (the gradient of the loss, cotangent 1) of `who`: finite loss, <g, dA> against
// central differences of `loss` along dA, and, when `other` is given, agreement of the loss and of
// the gradient with another implementation (symmetric parts for eigh). As check_jvp otherwise.
inline std::string check_vjp(const char* who, Case c, int n, const Inputs& x, const Inputs& d, const Grad& got,
                             const LossFn& loss, const Grad* other, const char* other_name, std::string* detail) {
  const std::string tag = std::string(who) + " " + case_name(c) + "_vjp n=" + std::to_string(n) + ": ";
  if (!std::isfinite(got.loss)) return tag + "loss is not finite";
  if (got.ga.size() != x.a.size()) return tag + "gradient has the wrong size";
  double fd = 0, ad = 0, h = 0;
  const double err = large_ad::fd_error(loss, x, d, got, &fd, &ad, &h);
  std::string info = "fd rel err " + num(err) + " (h " + num(h) + ")";
  if (!(err < large_ad::kFdRtol))
    return tag + "gradient fails the central-difference check: <g, dA> = " + num(ad) + ", differences " + num(fd) +
           ", relative error " + num(err) + " (limit " + num(large_ad::kFdRtol) + ")";
  if (other) {
    if (!close(got.loss, other->loss, large_ad::kLossRtol))
      return tag + "loss " + num(got.loss) + " differs from " + other_name + " " + num(other->loss);
    const bool sym = large_ad::symmetric_input(base_case(c));
    const double e = large_ad::rel_diff(got.ga, other->ga, n, sym);
    info += ", vs " + std::string(other_name) + " " + num(e);
    if (!(e <= large_ad::kCrossRtol))
      return tag + "gradient differs from " + other_name + "'s: relative difference " + num(e) + " (limit " +
             num(large_ad::kCrossRtol) + ")" + (sym ? ", symmetric parts" : "");
  }
  if (detail) *detail = info;
  return {};
}

// One untimed run of each implementation (jvp_vjp.cpp, ref_libtorch/jvp_vjp_torch.cpp): the JVP and
// the VJP at the case's inputs (cached), the loss without derivatives at any inputs, and the inputs
// and tangent themselves (cached, so that both sides use the very same vectors).
const Inputs& inputs(Case c, int n);
const Inputs& tangent(Case c, int n);
const Jvp& tenax_jvp(Case c, int n);
const Grad& tenax_vjp(Case c, int n);
double tenax_loss(Case c, int n, const std::vector<double>& a, const std::vector<double>& b);
#if defined(TENAX_BENCH_WITH_TORCH)
const Jvp& torch_jvp(Case c, int n);
const Grad& torch_vjp(Case c, int n);
double torch_loss(Case c, int n, const std::vector<double>& a, const std::vector<double>& b);
#endif

}  // namespace tenax_bench::jvp_vjp
