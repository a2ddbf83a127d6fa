#pragma once
// The large_ad suite's cases, sizes, inputs and correctness checks, shared by the tenax rows
// (large_ad.cpp) and the libtorch reference rows (ref_libtorch/large_ad_torch.cpp). Only plain
// types cross between the two (they are compiled with different language standards and flags).
//
// Matrices cross as row-major std::vector<double> (element (i, j) of an r x c matrix at i*c + j),
// the layout in which shared BENCHMARKS.md defines the inputs; tenax stores column-major and
// converts on its side.
//
// Cases and losses (BENCHMARKS.md), all f64, A n x n:
//   matmul    sum(A B)              A = data((n,n), 1), B = data((n,n), 2); A and B require grad
//   solve     sum(solve(A, b))      A = well(n, 1), b = data((n,1), 2) (n x 1); A and b require grad
//   qr        sum(Q) + sum(R)       A = well(n, 1), reduced QR
//   eigh      sum(w) + sum(V)       A = spd(n, 1), V in the canonical gauge (each eigenvector's first
//                                   largest-magnitude entry positive), so that the loss is a
//                                   function of A
//   eigvalsh  sum(w)                A = spd(n, 1)
//   svdvals   sum(s)                A = well(n, 1)
//   lu        sum(L) + sum(U)       A = well(n, 1), A = P L U (L unit lower, U upper)
//   cholesky  sum(L)                A = spd(n, 1)
//   lstsq     sum(lstsq(A, b).solution)  A = well(n, 1), b = data((n,1), 2); A and b require grad
//   eigvals   sum(Re eigvals(A))    A = well(n, 1) (general: geev, complex eigenvalues)
//   matrix_exp sum(matrix_exp(A))   A = well(n, 1)
// Tangent (finite-difference direction) seeds are the matrix seeds + 1000.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "common/bench_common.hpp"

namespace tenax_bench::large_ad {

enum class Case { matmul, solve, qr, eigh, eigvalsh, svdvals, lu, cholesky, lstsq, eigvals, matrix_exp };
inline constexpr Case kCases[] = {Case::matmul,   Case::solve,   Case::qr,        Case::eigh,
                                  Case::eigvalsh, Case::svdvals, Case::lu,        Case::cholesky,
                                  Case::lstsq,    Case::eigvals, Case::matrix_exp};

inline const char* case_name(Case c) {
  switch (c) {
    case Case::matmul:
      return "matmul";
    case Case::solve:
      return "solve";
    case Case::qr:
      return "qr";
    case Case::eigh:
      return "eigh";
    case Case::eigvalsh:
      return "eigvalsh";
    case Case::svdvals:
      return "svdvals";
    case Case::lu:
      return "lu";
    case Case::cholesky:
      return "cholesky";
    case Case::lstsq:
      return "lstsq";
    case Case::eigvals:
      return "eigvals";
    case Case::matrix_exp:
      return "matrix_exp";
  }
  return "?";
}

// Whether the op reads only A's lower triangle (tangents and gradients are then symmetric, the
// PyTorch convention both libraries follow): finite-difference directions are symmetrised, and
// gradients are compared through their symmetric parts.
inline bool symmetric_input(Case c) { return c == Case::eigh || c == Case::eigvalsh || c == Case::cholesky; }

// The second input: B (n x n) for matmul, b (n x 1) for solve and lstsq; none (0 columns) otherwise.
inline int second_cols(Case c, int n) { return c == Case::matmul ? n : c == Case::solve || c == Case::lstsq ? 1 : 0; }

// Row name large_ad/<case>/f64/<n>x<n>/<mode>.
inline std::string row_name(Case c, int n, const char* mode) {
  return std::string("large_ad/") + case_name(c) + "/f64/" + std::to_string(n) + "x" + std::to_string(n) + "/" + mode;
}

// The sizes: TENAX_LARGE_AD_SIZES (comma-separated list) if set; else 64..1024 when
// TENAX_BENCH_PROFILE=full (scripts/bench.sh --full sets it), else the quick profile 64..512.
// The sizes of a suite: the comma-separated list in the environment variable `var` if set; else
// `full` when TENAX_BENCH_PROFILE=full (scripts/bench.sh --full sets it), else `quick`.
inline std::vector<int> sizes_from_env(const char* var, std::vector<int> quick, std::vector<int> full) {
  std::vector<int> out;
  if (const char* list = std::getenv(var); list && *list) {
    std::stringstream ss(list);
    std::string tok;
    while (std::getline(ss, tok, ','))
      if (int v = std::atoi(tok.c_str()); v > 0) out.push_back(v);
    if (!out.empty()) return out;
  }
  const char* prof = std::getenv("TENAX_BENCH_PROFILE");
  if (prof && std::string(prof) == "full") return full;
  return quick;
}

inline std::vector<int> sizes() {
  return sizes_from_env("TENAX_LARGE_AD_SIZES", {64, 128, 256, 512}, {64, 128, 256, 512, 1024});
}

inline std::string profile_description() {
  std::string s = "sizes";
  for (int n : sizes()) (s += ' ') += std::to_string(n);
  const char* list = std::getenv("TENAX_LARGE_AD_SIZES");
  const char* prof = std::getenv("TENAX_BENCH_PROFILE");
  s += list && *list ? " (from TENAX_LARGE_AD_SIZES)"
                     : std::string(" (TENAX_BENCH_PROFILE=") + (prof ? prof : "unset") + ")";
  return s;
}

// ---- inputs (BENCHMARKS.md), row-major ----------------------------------------------------------

// data(shape, seed): element with row-major index i is ((x mod 1024) - 512)/512 with
// x = (i*6364136223846793005 + seed*1442695040888963407) mod 2^64.
inline std::vector<double> data(int rows, int cols, std::uint64_t seed) {
  std::vector<double> v(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols));
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::uint64_t x = static_cast<std::uint64_t>(i) * 6364136223846793005ULL + seed * 1442695040888963407ULL;
    v[i] = (static_cast<double>(x % 1024) - 512.0) / 512.0;
  }
  return v;
}

// well(n, seed): 0.05 data((n,n), seed) with 1 + j/n added to diagonal element j.
inline std::vector<double> well(int n, std::uint64_t seed) {
  std::vector<double> v = data(n, n, seed);
  for (auto& x : v) x *= 0.05;
  for (int j = 0; j < n; ++j) v[static_cast<std::size_t>(j) * n + j] += 1.0 + static_cast<double>(j) / n;
  return v;
}

// spd(n, seed): well^T well + I, computed on the lower triangle in a fixed order and mirrored
// (exactly symmetric).
inline std::vector<double> spd(int n, std::uint64_t seed) {
  const std::vector<double> w = well(n, seed);
  const auto N = static_cast<std::size_t>(n);
  std::vector<double> s(N * N, 0.0);
  for (std::size_t k = 0; k < N; ++k) {  // s += w_k^T w_k, w_k row k of W
    const double* wk = w.data() + k * N;
    for (std::size_t i = 0; i < N; ++i) {
      const double a = wk[i];
      double* si = s.data() + i * N;
      for (std::size_t j = 0; j <= i; ++j) si[j] += a * wk[j];
    }
  }
  for (std::size_t i = 0; i < N; ++i) {
    s[i * N + i] += 1.0;
    for (std::size_t j = 0; j < i; ++j) s[j * N + i] = s[i * N + j];
  }
  return s;
}

inline constexpr std::uint64_t kSeedA = 1, kSeedB = 2, kTangentOffset = 1000;

struct Inputs {
  int n = 0;
  std::vector<double> a, b;  // b empty when the case has one input
  const char* a_kind = "";
};

inline Inputs make_inputs(Case c, int n) {
  Inputs in;
  in.n = n;
  switch (c) {
    case Case::matmul:
      in.a = data(n, n, kSeedA), in.b = data(n, n, kSeedB), in.a_kind = "data";
      break;
    case Case::solve:
    case Case::lstsq:
      in.a = well(n, kSeedA), in.b = data(n, 1, kSeedB), in.a_kind = "well";
      break;
    case Case::eigh:
    case Case::eigvalsh:
    case Case::cholesky:
      in.a = spd(n, kSeedA), in.a_kind = "spd";
      break;
    default:
      in.a = well(n, kSeedA), in.a_kind = "well";
  }
  return in;
}

// The finite-difference direction (dA, dB): data() with the tangent seeds, symmetrised for the
// symmetric-input cases, scaled to unit Frobenius norm jointly.
inline Inputs make_direction(Case c, int n) {
  Inputs d;
  d.n = n;
  d.a = data(n, n, kSeedA + kTangentOffset);
  if (symmetric_input(c))
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < i; ++j) {
        const double m = 0.5 * (d.a[i * n + j] + d.a[j * n + i]);
        d.a[i * n + j] = d.a[j * n + i] = m;
      }
  if (second_cols(c, n)) d.b = data(n, second_cols(c, n), kSeedB + kTangentOffset);
  double s = 0;
  for (double x : d.a) s += x * x;
  for (double x : d.b) s += x * x;
  s = std::sqrt(s);
  for (auto& x : d.a) x /= s;
  for (auto& x : d.b) x /= s;
  return d;
}

// ---- checks --------------------------------------------------------------------------------------

// A loss value and its gradient with respect to A (and B/b), row-major.
struct Grad {
  double loss = NAN;
  std::vector<double> ga, gb;
};

// The loss of an implementation at given inputs, without recording (for finite differences).
using LossFn = std::function<double(const std::vector<double>& a, const std::vector<double>& b)>;

inline std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

inline double dot(const std::vector<double>& x, const std::vector<double>& y) {
  double s = 0;
  for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) s += x[i] * y[i];
  return s;
}

// Fourth-order central differences of f along d at x with step h:
// (-f(x+2hd) + 8 f(x+hd) - 8 f(x-hd) + f(x-2hd)) / 12h.
inline double central_difference(const LossFn& f, const Inputs& x, const Inputs& d, double h) {
  auto at = [&](double t) {
    std::vector<double> a = x.a, b = x.b;
    for (std::size_t i = 0; i < a.size(); ++i) a[i] += t * d.a[i];
    for (std::size_t i = 0; i < b.size(); ++i) b[i] += t * d.b[i];
    return f(a, b);
  };
  return (-at(2 * h) + 8 * at(h) - 8 * at(-h) + at(-2 * h)) / (12 * h);
}

inline constexpr double kFdRtol = 1e-6;     // AD directional derivative vs central differences
inline constexpr double kCrossRtol = 1e-8;  // gradients of two implementations (norm-wise)
inline constexpr double kLossRtol = 1e-10;  // loss values of two implementations

// Relative error of the directional derivative <g, d> against central differences of `f`. The
// step is h = 1e-1, 1e-2, ..., 1e-5 along the unit-norm direction, and the smallest error of the
// five is reported with its step. The finite-difference error is truncation-dominated for large h
// (e.g. near close eigenvalues: the smallest gap of spd(1024, 1) is 7e-4) and rounding-dominated
// for small h (e.g. eigvalsh: sum(w) = trace(A) is linear, and <g, d> = trace(d) ~ 1/sqrt(n) is
// small next to the rounding of sum(w)); the best of a few steps keeps it below the tolerance.
// directional_fd_error: the same for a given directional derivative `ad` (e.g. a JVP's tangent).
inline double directional_fd_error(const LossFn& f, const Inputs& x, const Inputs& d, double ad,
                                   double* fd_out = nullptr, double* h_out = nullptr) {
  double best = INFINITY;
  for (double h : {1e-1, 1e-2, 1e-3, 1e-4, 1e-5}) {
    const double fd = central_difference(f, x, d, h);
    const double err = std::abs(fd - ad) / std::max({std::abs(fd), std::abs(ad), 1e-300});
    if (err < best) {
      best = err;
      if (fd_out) *fd_out = fd;
      if (h_out) *h_out = h;
    }
  }
  return best;
}
inline double fd_error(const LossFn& f, const Inputs& x, const Inputs& d, const Grad& g, double* fd_out = nullptr,
                       double* ad_out = nullptr, double* h_out = nullptr) {
  const double ad = dot(g.ga, d.a) + dot(g.gb, d.b);
  if (ad_out) *ad_out = ad;
  return directional_fd_error(f, x, d, ad, fd_out, h_out);
}

// ||x - y|| / max(||x||, ||y||), comparing the symmetric parts of n x n matrices when `sym`.
inline double rel_diff(const std::vector<double>& x, const std::vector<double>& y, int n, bool sym) {
  if (x.size() != y.size()) return INFINITY;
  double d = 0, nx = 0, ny = 0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    double a = x[k], b = y[k];
    if (sym) {
      const std::size_t i = k / n, j = k % n, t = j * n + i;
      a = 0.5 * (x[k] + x[t]);
      b = 0.5 * (y[k] + y[t]);
    }
    d += (a - b) * (a - b), nx += a * a, ny += b * b;
  }
  const double s = std::sqrt(std::max(nx, ny));
  return s > 0 ? std::sqrt(d) / s : std::sqrt(d);
}

// Checks `got` (a gradient of `who` at the case's inputs): finite (non-NaN) loss, the directional
// derivative against central differences of `loss`, and, when `other` is given, agreement of the
// loss value and of the gradients with another implementation. Empty when correct, else the
// reason (a row's SkipWithError message). `detail`, when given, receives the measured errors.
inline std::string check_grad(const char* who, Case c, int n, const Grad& got, const LossFn& loss, const Grad* other,
                              const char* other_name, std::string* detail = nullptr) {
  const Inputs x = make_inputs(c, n), d = make_direction(c, n);
  const std::string tag = std::string(who) + " " + case_name(c) + " n=" + std::to_string(n) + ": ";
  if (!std::isfinite(got.loss)) return tag + "loss is not finite";
  if (got.ga.size() != x.a.size() || got.gb.size() != x.b.size()) return tag + "gradient has the wrong size";
  double fd = 0, ad = 0, h = 0;
  const double err = fd_error(loss, x, d, got, &fd, &ad, &h);
  std::string info = "fd rel err " + num(err) + " (h " + num(h) + ")";
  if (!(err < kFdRtol))
    return tag + "gradient fails the central-difference check: <g, d> = " + num(ad) + ", differences " + num(fd) +
           ", relative error " + num(err) + " (limit " + num(kFdRtol) + ")";
  if (other) {
    if (!close(got.loss, other->loss, kLossRtol))
      return tag + "loss " + num(got.loss) + " differs from " + other_name + " " + num(other->loss);
    const bool sym = symmetric_input(c);
    const double ea = rel_diff(got.ga, other->ga, n, sym), eb = rel_diff(got.gb, other->gb, n, false);
    info += ", vs " + std::string(other_name) + " " + num(std::max(ea, got.gb.empty() ? 0.0 : eb));
    if (!(ea <= kCrossRtol) || (!got.gb.empty() && !(eb <= kCrossRtol)))
      return tag + "gradient differs from " + other_name + "'s: relative difference " + num(ea) +
             (got.gb.empty() ? "" : " (A), " + num(eb) + " (second input)") + " (limit " + num(kCrossRtol) + ")" +
             (sym ? ", symmetric parts" : "");
  }
  if (detail) *detail = info;
  return {};
}

// One untimed run of each implementation (large_ad.cpp, ref_libtorch/large_ad_torch.cpp):
// the loss and gradient at the case's inputs (cached), the loss without recording at any inputs,
// and the inputs themselves (cached, so that both sides use the very same vectors).
const Inputs& inputs(Case c, int n);
const Grad& tenax_grad(Case c, int n);
double tenax_loss(Case c, int n, const std::vector<double>& a, const std::vector<double>& b);
#if defined(TENAX_BENCH_WITH_TORCH)
const Grad& torch_grad(Case c, int n);
double torch_loss(Case c, int n, const std::vector<double>& a, const std::vector<double>& b);
#endif

}  // namespace tenax_bench::large_ad
