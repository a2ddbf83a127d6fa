#pragma once
// Full Jacobians and Hessians: jacrev, jacfwd, hessian (JAX's names and meaning).
//
// Layout (column-major, like every tenax tensor): the Jacobian of an output y with respect to an
// input x has shape y.shape() ++ x.shape() and holds dy_i / dx_j at (i..., j...), so the Jacobian of
// a map from n-vectors to m-vectors is the usual m x n matrix, and as an m x n matrix (m = y.numel(),
// n = x.numel(), both flattened column-major) it is a reshape of the block. One input gives one
// block per output tensor, several inputs a tuple of blocks (one per input); a result that is a
// structure of tensors (tuples, pairs) gives that structure of these. A block has the output's dtype.
//
//   jacrev: one forward, then the rows J^H e_i, one per output element: in one reverse pass, as one
//           batch of cotangents (ad/apply.hpp), when every recorded op that the pass reaches takes
//           one (batches_cotangents: the elementwise ops, matmul, solve, sum and mean, reshape, expand,
//           permute, cast), the dtypes are real and no jvp encloses it; else one pass per row;
//   jacfwd: the columns J e_j, one per input element. At the top level (nothing differentiates
//           the Jacobian, no enclosing jvp) the first direction's pass records its forward-mode
//           steps, and the JVP rules run again on the kept primal values (a linearization: no
//           primal recomputed): for all directions at once, as one batch of tangents (ad/apply.hpp,
//           tangent_shape), when every recorded op's rule takes one (batches_tangents: the
//           elementwise ops, matmul, solve, sum and mean, reshape, expand, permute, slice, cast); else
//           once per direction. Elsewhere, or when f runs a backward pass of its own, each
//           direction is a full jvp. jacfwd_plan(f, x...) says which of these jacfwd takes.
//   hessian: jacrev of grad (one forward and backward recorded, then the reverse passes through
//           them, batched as jacrev's); for f: R^n -> R an n x n matrix, for several inputs a tuple
//           of tuples H[i][j] = d(grad_i)/dx_j.
// Cost: jacrev m passes, jacfwd n passes (batched: one pass each, m or n times as wide); jacrev
// suits wide maps (m < n), jacfwd tall ones.
//
// Complex dtypes: the Jacobian is the complex-linear J with dy = J dx, which exists when f is
// holomorphic in its complex inputs (a real input gives a complex output's J its real directions,
// always well defined). jacfwd computes J e_j; jacrev computes each row from the pullbacks of e_i
// (conj(J^H e_i), and for a real input also the pullback of i e_i, which gives the imaginary part).
// For a function that is not holomorphic there is no such J and the two differ. A real output of a
// complex input is never holomorphic (unless constant) and raises; so does hessian of a complex
// input (differentiate its real and imaginary parts as real inputs, or use hvp).
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tenax/ad/functional.hpp"
#include "tenax/ad/structure.hpp"
#include "tenax/ops/shape/cast.hpp"
#include "tenax/ops/shape/concat.hpp"
#include "tenax/ops/shape/reshape.hpp"
#include "tenax/ops/unary/complex.hpp"
#include "tenax/ops/unary/conj.hpp"

namespace tenax {
namespace detail {

// The Jacobian's structure for a result Y and inputs Tensor<T>... (see the top of this file).
template <class Y, class In>
struct JacobianOf;
template <class U, class... T>
struct JacobianOf<Tensor<U>, std::tuple<T...>> {
  using type = std::conditional_t<sizeof...(T) == 1, Tensor<U>, std::tuple<std::conditional_t<true, Tensor<U>, T>...>>;
};
template <class... Y, class In>
struct JacobianOf<std::tuple<Y...>, In> {
  using type = std::tuple<typename JacobianOf<Y, In>::type...>;
};
template <class A, class B, class In>
struct JacobianOf<std::pair<A, B>, In> {
  using type = std::pair<typename JacobianOf<A, In>::type, typename JacobianOf<B, In>::type>;
};

// A tensor of shape s with v at column-major index i and zeros elsewhere.
template <class U>
Tensor<U> unit_tensor(const Shape& s, std::int64_t i, U v, Device d) {
  std::vector<U> h(static_cast<std::size_t>(numel_of(s)), U(0));
  h[static_cast<std::size_t>(i)] = v;
  return Tensor<U>::from_col_major(s, h, d);
}

// y.shape() ++ x.shape(), checked against the maximum rank.
inline Shape block_shape(const char* op, const Shape& y, const Shape& x) {
  TENAX_CHECK(y.size() + x.size() <= kMaxRank, op, "the Jacobian of an output of shape ", y,
              " with respect to an input of shape ", x, " would have rank ", y.size() + x.size(),
              ", above the maximum of ", kMaxRank, " (reshape them first)");
  Shape s = y;
  for (std::int64_t d : x) s.push_back(d);
  return s;
}

inline void check_holomorphic(const char* op, DType in, DType out) {
  auto complex_dtype = [](DType d) { return d == DType::C64 || d == DType::C128; };
  TENAX_CHECK(!(complex_dtype(in) && !complex_dtype(out)), op, "a real output (", dtype_name(out),
              ") of a complex input (", dtype_name(in),
              ") has no complex-linear Jacobian; differentiate real and imaginary parts as real inputs");
}

// The block of rows (or columns) `parts` (each one of the m (n) vectors), stacked along `dim` into
// an m x n matrix and reshaped to `shape`; zeros when none was reached.
template <class U>
ImplPtr assemble_block(std::vector<Tensor<U>>& parts, int dim, const Shape& shape, Device dev) {
  if (parts.empty()) return Tensor<U>::zeros(shape, dev).impl();
  return reshape(stack(parts, dim), shape).impl();
}

// Row i of the block d(yk)/d(x) from the pullbacks g (of e_i) and gi (of i e_i, only for a real x
// and a complex output), flattened.
template <class U, class T>
Tensor<U> jacobian_row(const ImplPtr& g, const ImplPtr& gi, const Tensor<T>& x) {
  const Shape flat{x.numel()};
  auto as = [&](const ImplPtr& p) { return p ? reshape(Tensor<T>(p), flat) : Tensor<T>::zeros(flat, x.device()); };
  if constexpr (is_complex_v<T>) {
    return cast<U>(conj(as(g)));
  } else if constexpr (is_complex_v<U>) {
    using R = real_t<U>;
    return complex(cast<R>(as(g)), cast<R>(as(gi)));
  } else {
    return cast<U>(as(g));
  }
}

// Columns e0 .. e0 + c - 1 of the n x n identity (one batch of directions), with `shape`
// (tangent_shape of the input's shape under a batch of c).
template <class T>
Tensor<T> identity_columns(std::int64_t n, std::int64_t e0, std::int64_t c, const Shape& shape, Device d) {
  if (e0 == 0 && c == n) return reshape(Tensor<T>::eye(n, n, d), shape);  // one batch: eye's own kernel
  std::vector<T> h(static_cast<std::size_t>(n * c), T(0));
  for (std::int64_t j = 0; j < c; ++j) h[static_cast<std::size_t>(e0 + j + j * n)] = T(1);
  return Tensor<T>::from_col_major(shape, h, d);
}

// One (co)tangent's parts from successive batches, joined along their last dimension (the
// directions); null when no batch reached it.
inline ImplPtr join_batches(const std::vector<ImplPtr>& parts) {
  if (parts.empty() || !parts[0]) return ImplPtr();
  if (parts.size() == 1) return parts[0];
  return dispatch_floating(parts[0]->dtype, [&](auto z) {
    using U = decltype(z);
    std::vector<Tensor<U>> ts;
    for (const ImplPtr& p : parts) ts.emplace_back(p);
    return concat(ts, parts[0]->rank() - 1).impl();
  });
}

// The block d(y)/d(x) from g, the cotangent of x in a batched reverse pass whose directions were
// the unit vectors e_i of y (real dtypes): its columns are the rows J^T e_i.
template <class U, class T>
ImplPtr block_from_rows(const ImplPtr& g, const Tensor<T>& x, const Tensor<U>& y) {
  const Shape shape = block_shape("jacrev", y.shape(), x.shape());
  if (!g) return Tensor<U>::zeros(shape, y.device()).impl();
  const Tensor<U> rows = cast<U>(reshape(Tensor<T>(g), Shape{x.numel(), y.numel()}));
  return reshape(rows.mT(), shape).contiguous().impl();
}

// The blocks d(yk)/d(x_j) for each input j, appended to `blocks`, by reverse passes over the
// recorded yk (roots) to the inputs `ins`: one pass for all rows (a batch of cotangents, ad/apply.hpp)
// where every node reached takes one, the dtypes are real and no tangent is pushed meanwhile (no
// enclosing jvp); else one pass per row.
template <class U, class... T>
void jacrev_blocks(const Tensor<U>& yk, const std::tuple<Tensor<T>...>& xi,
                   const std::array<ImplPtr, sizeof...(T)>& ins, bool nested, std::vector<ImplPtr>& blocks) {
  constexpr std::size_t N = sizeof...(T);
  TENAX_CHECK(yk.defined(), "jacrev", "the function returned an undefined tensor");
  std::apply([&](const auto&... x) { (check_holomorphic("jacrev", x.impl()->dtype, dtype_traits<U>::value), ...); },
             xi);
  const std::int64_t m = yk.numel();
  std::array<std::vector<Tensor<U>>, N> rows;
  const bool imag_pass = is_complex_v<U> && (... || !is_complex_v<T>);
  if constexpr (!is_complex_v<U> && (... && !is_complex_v<T>)) {
    const ImplPtr roots[] = {yk.impl()};
    std::int64_t largest = 0;
    const int rank =
        yk.tracks_grad() && m > 1 && forward_depth() == 0 ? batched_backward_rank(roots, ins, largest) : -1;
    if (rank >= 0 && rank < kMaxRank) {
      // The rows in batches of directions (one when they fit, directions_per_batch), each seeded
      // with columns of the identity.
      const std::int64_t per = directions_per_batch(m, std::max(largest, m));
      std::array<std::vector<ImplPtr>, N> parts;
      for (std::int64_t e0 = 0; e0 < m; e0 += per) {
        const std::int64_t c = std::min(per, m - e0);
        std::vector<ImplPtr> g;
        {
          const TangentBatchScope batch(rank, c);
          const ImplPtr seeds[] = {identity_columns<U>(m, e0, c, tangent_shape(yk.shape()), yk.device()).impl()};
          g = run_backward({roots, seeds, ins, nested});
        }
        for (std::size_t j = 0; j < N; ++j) parts[j].push_back(g[j]);
      }
      [&]<std::size_t... J>(std::index_sequence<J...>) {
        (blocks.push_back(block_from_rows<U>(join_batches(parts[J]), std::get<J>(xi), yk)), ...);
      }
      (std::index_sequence_for<T...>{});
      return;
    }
  }
  if (yk.tracks_grad()) {
    std::array<bool, N> reached{};
    for (std::int64_t i = 0; i < m; ++i) {
      auto pull = [&](U v) {
        const ImplPtr roots[] = {yk.impl()};
        const ImplPtr seeds[] = {unit_tensor<U>(yk.shape(), i, v, yk.device()).impl()};
        return run_backward({roots, seeds, ins, nested});
      };
      const std::vector<ImplPtr> g = pull(U(1));
      std::vector<ImplPtr> gi(N);
      if constexpr (is_complex_v<U>)
        if (imag_pass) gi = pull(U(0, 1));
      [&]<std::size_t... J>(std::index_sequence<J...>) {
        (
            [&] {
              if (g[J] || gi[J]) reached[J] = true;
              rows[J].push_back(jacobian_row<U>(g[J], gi[J], std::get<J>(xi)));
            }(),
            ...);
      }
      (std::index_sequence_for<T...>{});
    }
    for (std::size_t j = 0; j < N; ++j)
      if (!reached[j]) rows[j].clear();
  }
  [&]<std::size_t... J>(std::index_sequence<J...>) {
    (blocks.push_back(
         assemble_block(rows[J], 0, block_shape("jacrev", yk.shape(), std::get<J>(xi).shape()), yk.device())),
     ...);
  }
  (std::index_sequence_for<T...>{});
}

// Whether jacfwd linearizes (see the top of this file): at the top level, with inputs that need
// no gradient.
template <class... T>
bool jacfwd_replayable(const std::tuple<Tensor<T>...>& xs) {
  bool r = forward_depth() == 0 && !inside_transform();
  std::apply([&](const auto&... t) { ((r = r && t.defined() && !t.tracks_grad()), ...); }, xs);
  return r;
}

// jacfwd's first direction for input I: f at copies of xs (kept in xt) with the tangent e_0 on x_I,
// its forward-mode steps recorded in `replay`. Returns f's result.
template <std::size_t I, class F, class... T>
auto linearize_first(F& f, const std::tuple<Tensor<T>...>& xs, std::tuple<Tensor<T>...>& xt, TangentReplay& replay) {
  xt = std::apply([](const auto&... t) { return std::tuple<Tensor<T>...>{Tensor<T>(tape_copy(*t.impl()))...}; }, xs);
  auto& v = std::get<I>(xt);
  using Tj = typename std::remove_cvref_t<decltype(v)>::value_type;
  v.impl()->tangent = unit_tensor<Tj>(v.shape(), 0, Tj(1), v.device()).impl();
  struct Scope {
    ModeState& m = mode();
    void* prev = m.tangent_replay;
    ~Scope() { m.tangent_replay = prev; }
  } scope;
  scope.m.tangent_replay = &replay;
  ForwardScope fscope;
  return std::apply(f, xt);
}

// Whether the recorded steps can run once for all directions (tangent_shape's rank fits).
inline bool replay_batches(const TangentReplay& r) { return r.usable && r.batchable && r.extent.rank < kMaxRank; }

}  // namespace detail

// The Jacobian of f at x... by reverse mode (layout and conventions: the top of this file).
template <class F, Floating... T>
requires(sizeof...(T) > 0) auto jacrev(F&& f, const Tensor<T>&... x) {
  constexpr std::size_t N = sizeof...(T);
  auto rec = detail::record_for_reverse(f, "jacrev", x...);
  const auto& xi = std::get<0>(rec);
  const auto& y = std::get<1>(rec);
  const bool nested = std::get<2>(rec);
  using Y = std::remove_cvref_t<decltype(y)>;
  static_assert(detail::TensorStructure<Y>, "jacrev: f must return a tensor, or tuples and pairs of tensors");
  using J = typename detail::JacobianOf<Y, std::tuple<T...>>::type;
  const std::array<detail::ImplPtr, N> ins = std::apply([](const auto&... t) { return std::array{t.impl()...}; }, xi);
  std::vector<detail::ImplPtr> blocks;
  blocks.reserve(detail::Structure<Y>::size * N);
  detail::Structure<Y>::for_each(y, [&](const auto& yk) { detail::jacrev_blocks(yk, xi, ins, nested, blocks); });
  return detail::unflatten_as<J>(blocks);
}

// The Jacobian of f at x... by forward mode (layout and conventions: the top of this file).
template <class F, Floating... T>
requires(sizeof...(T) > 0) auto jacfwd(F&& f, const Tensor<T>&... x) {
  constexpr std::size_t N = sizeof...(T);
  const std::tuple<Tensor<T>...> xs{x...};
  using Y = std::decay_t<std::invoke_result_t<F&, const Tensor<T>&...>>;
  static_assert(detail::TensorStructure<Y>, "jacfwd: f must return a tensor, or tuples and pairs of tensors");
  constexpr std::size_t K = detail::Structure<Y>::size;
  using J = typename detail::JacobianOf<Y, std::tuple<T...>>::type;
  // The columns J e_j of each output k and input j, and the outputs' shapes, dtypes and devices.
  std::array<std::array<std::vector<detail::ImplPtr>, N>, K> cols;
  // Or, where the directions ran as one batch, each block whole (a null block: zeros).
  std::array<bool, N> whole{};
  std::array<std::array<detail::ImplPtr, N>, K> blocks_of{};
  std::array<detail::ImplPtr, K> ys{};
  bool seen = false;
  // Linearize once per input, then replay the recorded tangent steps for all directions at once or
  // per direction, where f's forward-mode pass can be replayed: at the top level (nothing
  // differentiates the Jacobian, no enclosing jvp) and when f runs no backward pass itself
  // (detail::TangentReplay).
  const bool replayable = detail::jacfwd_replayable(xs);
  auto add_columns = [&](const auto& yv, auto tangent_of) {
    const auto flat = detail::flat_impls(yv);
    if (!seen) ys = flat, seen = true;
    return [&, flat, tangent_of](std::size_t input) {
      for (std::size_t k = 0; k < K; ++k) cols[k][input].push_back(tangent_of(flat[k]));
    };
  };
  auto tangent_or_zeros = [](const detail::ImplPtr& y) {
    return y->tangent ? y->tangent : dispatch_floating(y->dtype, [&](auto z) {
      using U = decltype(z);
      return Tensor<U>::zeros(y->shape, y->device).impl();
    });
  };
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (
        [&] {
          const auto& xj = std::get<I>(xs);
          TENAX_CHECK(xj.defined(), "jacfwd", "input ", I, " is undefined");
          using Tj = typename std::remove_cvref_t<decltype(xj)>::value_type;
          std::int64_t e = 0;
          if (replayable && xj.numel() > 0) {
            // The first direction's pass, its forward-mode steps recorded.
            std::tuple<Tensor<T>...> xt;
            detail::TangentReplay replay;
            const Y y = detail::linearize_first<I>(f, xs, xt, replay);
            Tensor<Tj>& v = std::get<I>(xt);
            auto push = add_columns(y, tangent_or_zeros);
            push(I);
            e = 1;
            if (detail::replay_batches(replay) && xj.numel() > 1) {
              // All directions in batches (one when they fit, detail::directions_per_batch): the
              // tangent of x_j is columns of the identity, in x_j's shape padded to the steps' rank
              // (tangent_shape).
              const std::int64_t n = xj.numel();
              const std::int64_t per = detail::directions_per_batch(n, std::max(replay.extent.numel, n));
              const auto flat = detail::flat_impls(y);
              std::array<std::vector<detail::ImplPtr>, K> parts;
              for (std::int64_t e0 = 0; e0 < n; e0 += per) {
                const std::int64_t c = std::min(per, n - e0);
                const detail::TangentBatchScope batch(replay.extent.rank, c);
                v.impl()->tangent =
                    detail::identity_columns<Tj>(n, e0, c, detail::tangent_shape(xj.shape()), xj.device()).impl();
                for (const auto& step : replay.steps) step->run();
                for (std::size_t k = 0; k < K; ++k) parts[k].push_back(flat[k] ? flat[k]->tangent : detail::ImplPtr());
              }
              for (std::size_t k = 0; k < K; ++k) blocks_of[k][I] = detail::join_batches(parts[k]);
              whole[I] = true;
              e = n;
            } else if (replay.usable) {
              for (; e < xj.numel(); ++e) {
                v.impl()->tangent = detail::unit_tensor<Tj>(xj.shape(), e, Tj(1), xj.device()).impl();
                for (const auto& step : replay.steps) step->run();
                push(I);
              }
            }
          }
          for (; e < xj.numel(); ++e) {
            std::tuple<Tensor<T>...> dx;
            std::get<I>(dx) = detail::unit_tensor<Tj>(xj.shape(), e, Tj(1), xj.device());
            const auto [yv, dy] = jvp(f, xs, dx);
            const auto flat = detail::flat_impls(dy);
            if (!seen) ys = detail::flat_impls(yv), seen = true;
            for (std::size_t k = 0; k < K; ++k) cols[k][I].push_back(flat[k]);
          }
        }(),
        ...);
  }
  (std::index_sequence_for<T...>{});
  if (!seen) {  // every input is empty: f once, for the outputs' shapes
    NoGradGuard off;
    ys = detail::flat_impls(std::apply(f, xs));
  }
  std::vector<detail::ImplPtr> blocks;
  blocks.reserve(K * N);
  const std::array<const detail::TensorImpl*, N> ins =
      std::apply([](const auto&... t) { return std::array<const detail::TensorImpl*, N>{t.impl().get()...}; }, xs);
  for (std::size_t k = 0; k < K; ++k) {
    TENAX_CHECK(ys[k], "jacfwd", "the function returned an undefined tensor");
    for (std::size_t j = 0; j < N; ++j) {
      detail::check_holomorphic("jacfwd", ins[j]->dtype, ys[k]->dtype);
      const Shape shape = detail::block_shape("jacfwd", ys[k]->shape, ins[j]->shape);
      blocks.push_back(dispatch_floating(ys[k]->dtype, [&](auto z) {
        using U = decltype(z);
        if (whole[j])
          return blocks_of[k][j] ? reshape(Tensor<U>(blocks_of[k][j]), shape).contiguous().impl()
                                 : Tensor<U>::zeros(shape, ys[k]->device).impl();
        std::vector<Tensor<U>> c;
        c.reserve(cols[k][j].size());
        for (const detail::ImplPtr& p : cols[k][j]) c.push_back(reshape(Tensor<U>(p), Shape{ys[k]->numel()}));
        return detail::assemble_block(c, 1, shape, ys[k]->device);
      }));
    }
  }
  return detail::unflatten_as<J>(blocks);
}

// How jacfwd(f, x...) computes each input's columns (see the top of this file): batched (all
// directions as batches of tangents, as many directions at once as detail::directions_per_batch
// allows; an input of one element needs only the first pass), replayed (the recorded JVP rules once
// per direction; then `unbatched` names the ops whose rules take no batch) or full (a jvp of f per
// direction). It runs f once per input, with a tangent, as jacfwd's first direction does.
struct JacfwdPlan {
  enum class Mode { batched, replayed, full };
  std::vector<Mode> modes;
  std::vector<std::string> unbatched;
};
template <class F, Floating... T>
requires(sizeof...(T) > 0) JacfwdPlan jacfwd_plan(F&& f, const Tensor<T>&... x) {
  const std::tuple<Tensor<T>...> xs{x...};
  JacfwdPlan plan;
  const bool replayable = detail::jacfwd_replayable(xs);
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (
        [&] {
          TENAX_CHECK(std::get<I>(xs).defined(), "jacfwd_plan", "input ", I, " is undefined");
          if (!replayable || std::get<I>(xs).numel() == 0) {
            plan.modes.push_back(JacfwdPlan::Mode::full);
            return;
          }
          std::tuple<Tensor<T>...> xt;
          detail::TangentReplay replay;
          (void)detail::linearize_first<I>(f, xs, xt, replay);
          plan.modes.push_back(detail::replay_batches(replay) ? JacfwdPlan::Mode::batched
                               : replay.usable                ? JacfwdPlan::Mode::replayed
                                                              : JacfwdPlan::Mode::full);
          if (plan.modes.back() == JacfwdPlan::Mode::replayed)
            for (const char* op : replay.unbatched)
              if (std::find(plan.unbatched.begin(), plan.unbatched.end(), op) == plan.unbatched.end())
                plan.unbatched.emplace_back(op);
        }(),
        ...);
  }
  (std::index_sequence_for<T...>{});
  return plan;
}

// The Hessian of a real scalar-valued f at real x... (jacrev of grad; layout: the top of this file).
template <class F, Floating... T>
requires(sizeof...(T) > 0) auto hessian(F&& f, const Tensor<T>&... x) {
  static_assert((... && !is_complex_v<T>),
                "hessian: real inputs only (split a complex input into real and imaginary parts, or use hvp)");
  return jacrev([&f](const Tensor<T>&... z) { return grad(f, z...); }, x...);
}

// The same, differentiating only the arguments I... (the others held fixed).
template <class F, std::size_t... I, Floating... T>
requires(sizeof...(T) > 0) auto jacrev(F&& f, Argnums<I...>, const Tensor<T>&... x) {
  const std::tuple<Tensor<T>...> all{x...};
  return jacrev(detail::select_args<I...>(f, all), std::get<I>(all)...);
}
template <class F, std::size_t... I, Floating... T>
requires(sizeof...(T) > 0) auto jacfwd(F&& f, Argnums<I...>, const Tensor<T>&... x) {
  const std::tuple<Tensor<T>...> all{x...};
  return jacfwd(detail::select_args<I...>(f, all), std::get<I>(all)...);
}
template <class F, std::size_t... I, Floating... T>
requires(sizeof...(T) > 0) auto hessian(F&& f, Argnums<I...>, const Tensor<T>&... x) {
  const std::tuple<Tensor<T>...> all{x...};
  return hessian(detail::select_args<I...>(f, all), std::get<I>(all)...);
}

}  // namespace tenax
