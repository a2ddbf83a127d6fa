#pragma once
// einsum (NumPy's subscripts: letters a-zA-Z name dimensions in shape order, "..." broadcasts,
// "->" gives the output, implicit otherwise), einsum_path (the pairwise contraction order with its
// FLOP estimate, as numpy.einsum_path) and tensordot. A composition of public ops: repeated
// indices become diagonal views, indices in one operand only are summed first, each pairwise
// contraction is one batched matmul of permuted and reshaped views (a mul when nothing is
// contracted). So einsum runs on every device, in both AD modes, to any order and in prepared
// programs, without rules of its own; nothing is conjugated.
#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tenax/core/instances.hpp"
#include "tenax/ops/binary/mul.hpp"
#include "tenax/ops/linalg/matmul.hpp"
#include "tenax/ops/reduce/sum.hpp"
#include "tenax/ops/shape/diagonal.hpp"
#include "tenax/ops/shape/reshape.hpp"
#include "tenax/ops/shape/transpose.hpp"

namespace tenax {

// How einsum orders its pairwise contractions: greedy (NumPy's greedy rule: the pair that removes
// the most elements, then the cheapest) or optimal (the fewest FLOPs over every order, by dynamic
// programming over subsets of operands; beyond kEinsumOptimalMax operands it falls back to greedy).
enum class EinsumPath { greedy, optimal };
inline constexpr int kEinsumOptimalMax = 12;

struct EinsumOptions {
  EinsumPath path = EinsumPath::greedy;
};

// The chosen contraction order and its cost, as numpy.einsum_path reports them.
struct EinsumPathInfo {
  std::string contraction;                   // the complete contraction, "..." dims named by spare letters
  EinsumPath strategy = EinsumPath::greedy;  // the search that ran (optimal may fall back to greedy)
  std::vector<std::pair<int, int>> path;     // positions in the current operand list; the result goes last
  std::vector<std::string> steps;            // each pairwise contraction, "kl,jk->jl"
  std::vector<std::string> remaining;        // the operands left after each step, "ij,jl->il"
  std::vector<int> step_scaling;             // the number of indices each step loops over
  int naive_scaling = 0, scaling = 0;
  double naive_flops = 0;           // one einsum over every index at once (NumPy's naive count)
  double flops = 0;                 // the chosen order: sums first, then the pairwise contractions
  double largest_intermediate = 0;  // elements of the largest pairwise result (the output if none)
  std::string report() const;
};
std::ostream& operator<<(std::ostream& os, const EinsumPathInfo& info);

namespace detail {

// One pairwise contraction: axes of its operands a and b (positions in their current shapes).
struct EinsumPair {
  int i = 0, j = 0;                        // positions in the current operand list (a = i, b = j)
  std::vector<std::int64_t> sum_a, sum_b;  // axes summed out first (indices needed nowhere else)
  // After those sums: a's free axes, the contracted and batch axes of a and b (in the same index
  // order) and b's free axes. The result is free(a) x free(b) x batch.
  std::vector<std::int64_t> a_free, a_con, a_bat, b_free, b_con, b_bat;
};

// What einsum does to one operand before the pairwise contractions.
struct EinsumPrep {
  std::vector<std::pair<int, int>> diagonals;  // diagonal(x, 0, d0, d1) in turn, d0 < d1
  bool squeeze = false;                        // drop the size-1 "..." dims that broadcast:
  Shape squeezed;                              // reshape to this shape
  std::vector<std::int64_t> sum_axes;          // indices in this operand only and not in the output
};

struct EinsumPlan {
  std::vector<EinsumPrep> prep;
  std::vector<EinsumPair> pairs;
  Shape out_perm;  // the last tensor's axes in output order
  EinsumPathInfo info;
};

// Parses and checks spec against the operand shapes and plans the contraction (errors name `op`
// and end with `context`, the operands' dtype and device).
EinsumPlan einsum_plan(std::string_view op, std::string_view spec, const std::vector<Shape>& shapes, EinsumPath path,
                       std::string_view context = {});

// x with its axes in `order`: x itself when the order is the identity.
template <class T>
Tensor<T> einsum_arranged(const Tensor<T>& x, const std::vector<std::int64_t>& order) {
  for (std::size_t d = 0; d < order.size(); ++d)
    if (order[d] != static_cast<std::int64_t>(d)) return permute(x, Shape(order));
  return x;
}

// x's axes `rows`, `cols` (and trailing `bat`) as the r x c x batch matrix operand of matmul. A
// view where the strides allow: preferably one gemm reads in place, directly or as the transpose
// of a view (a transpose flag); a reshaped copy otherwise.
template <class T>
Tensor<T> einsum_matrix(const Tensor<T>& x, const std::vector<std::int64_t>& rows,
                        const std::vector<std::int64_t>& cols, const std::vector<std::int64_t>& bat) {
  auto extent = [&](const std::vector<std::int64_t>& ax) {
    std::int64_t n = 1;
    for (auto a : ax) n *= x.shape()[static_cast<int>(a)];
    return n;
  };
  auto concat = [&](const std::vector<std::int64_t>& first, const std::vector<std::int64_t>& second) {
    std::vector<std::int64_t> order = first;
    order.insert(order.end(), second.begin(), second.end());
    order.insert(order.end(), bat.begin(), bat.end());
    return order;
  };
  const std::int64_t r = extent(rows), c = extent(cols), b = extent(bat);
  const Tensor<T> direct = einsum_arranged(x, concat(rows, cols));
  if (x.numel() == 0) return reshape(direct, Shape{r, c, b});
  Strides sd, ss;
  const bool direct_view = view_strides(*direct.impl(), Shape{r, c, b}, sd);
  if (direct_view && gemm_operand(r, c, sd[0], sd[1]).ok) return reshape(direct, Shape{r, c, b});
  const Tensor<T> swapped = einsum_arranged(x, concat(cols, rows));
  if (view_strides(*swapped.impl(), Shape{c, r, b}, ss) && gemm_operand(r, c, ss[1], ss[0]).ok)
    return transpose(reshape(swapped, Shape{c, r, b}), 0, 1);
  return reshape(direct, Shape{r, c, b});
}

template <class T>
Tensor<T> einsum_pair(Tensor<T> a, Tensor<T> b, const EinsumPair& p) {
  if (!p.sum_a.empty()) a = sum(a, p.sum_a, false);
  if (!p.sum_b.empty()) b = sum(b, p.sum_b, false);
  Shape out;
  for (auto d : p.a_free) out.push_back(a.shape()[static_cast<int>(d)]);
  for (auto d : p.b_free) out.push_back(b.shape()[static_cast<int>(d)]);
  for (auto d : p.a_bat) out.push_back(a.shape()[static_cast<int>(d)]);
  if (p.a_con.empty()) {
    // Nothing contracted: a broadcast product, a as free(a) x 1... x batch, b as 1... x free(b) x batch.
    auto spread = [&](const Tensor<T>& x, const std::vector<std::int64_t>& free, const std::vector<std::int64_t>& bat,
                      std::size_t before, std::size_t after) {
      std::vector<std::int64_t> order = free;
      order.insert(order.end(), bat.begin(), bat.end());
      const Tensor<T> v = einsum_arranged(x, order);
      Shape s;
      for (std::size_t q = 0; q < before; ++q) s.push_back(1);
      for (auto d : free) s.push_back(x.shape()[static_cast<int>(d)]);
      for (std::size_t q = 0; q < after; ++q) s.push_back(1);
      for (auto d : bat) s.push_back(x.shape()[static_cast<int>(d)]);
      return reshape(v, s);
    };
    return mul(spread(a, p.a_free, p.a_bat, 0, p.b_free.size()), spread(b, p.b_free, p.b_bat, p.a_free.size(), 0));
  }
  const Tensor<T> c =
      matmul(einsum_matrix(a, p.a_free, p.a_con, p.a_bat), einsum_matrix(b, p.b_con, p.b_free, p.b_bat));
  return reshape(c, out);
}

}  // namespace detail

// einsum over any number of operands (at least one) of one dtype, on one device.
template <Floating T>
Tensor<T> einsum(std::string_view spec, std::span<const Tensor<T>> xs, const EinsumOptions& options = {}) {
  std::vector<Shape> shapes;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    TENAX_CHECK(xs[i].defined(), "einsum", "operand ", i, " is undefined (default-constructed) in '", spec, "'");
    TENAX_CHECK(xs[i].device() == xs[0].device(), "einsum", "operand ", i, " is on ", xs[i].device().str(),
                ", operand 0 on ", xs[0].device().str(), " in '", spec, "' (", dtype_traits<T>::name, ")");
    shapes.push_back(xs[i].shape());
  }
  const std::string context = xs.empty() ? std::string(" (") + dtype_traits<T>::name + ")" : detail::dtype_on(xs[0]);
  const detail::EinsumPlan plan = detail::einsum_plan("einsum", spec, shapes, options.path, context);
  std::vector<Tensor<T>> cur;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    Tensor<T> x = xs[i];
    const detail::EinsumPrep& p = plan.prep[i];
    for (auto [d0, d1] : p.diagonals) x = diagonal(x, 0, d0, d1);
    if (p.squeeze) x = reshape(x, p.squeezed);
    if (!p.sum_axes.empty()) x = sum(x, p.sum_axes, false);
    cur.push_back(std::move(x));
  }
  for (const detail::EinsumPair& p : plan.pairs) {
    Tensor<T> a = cur[static_cast<std::size_t>(p.i)], b = cur[static_cast<std::size_t>(p.j)];
    cur.erase(cur.begin() + std::max(p.i, p.j));
    cur.erase(cur.begin() + std::min(p.i, p.j));
    cur.push_back(detail::einsum_pair(a, b, p));
  }
  bool identity = true;
  for (int d = 0; d < plan.out_perm.size(); ++d) identity = identity && plan.out_perm[d] == d;
  return identity ? cur[0] : permute(cur[0], plan.out_perm);
}

template <Floating T>
Tensor<T> einsum(std::string_view spec, const std::vector<Tensor<T>>& xs, const EinsumOptions& options = {}) {
  return einsum(spec, std::span<const Tensor<T>>(xs), options);
}

namespace detail {
template <class X, class Item>
concept EinsumArg = std::is_same_v<X, Item> || std::is_same_v<X, EinsumOptions>;

// The items of a variadic call and the options given among them (the defaults if none).
template <class Item, class... Rest>
std::pair<std::vector<Item>, EinsumOptions> einsum_args(const Item& first, const Rest&... rest) {
  std::pair<std::vector<Item>, EinsumOptions> r{{first}, {}};
  auto take = [&](const auto& x) {
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(x)>, EinsumOptions>)
      r.second = x;
    else
      r.first.push_back(x);
  };
  (take(rest), ...);
  return r;
}
}  // namespace detail

// einsum("ij,jk->ik", a, b), with an optional EinsumOptions last.
template <Floating T, detail::EinsumArg<Tensor<T>>... Rest>
Tensor<T> einsum(std::string_view spec, const Tensor<T>& first, const Rest&... rest) {
  const auto [xs, options] = detail::einsum_args(first, rest...);
  return einsum(spec, std::span<const Tensor<T>>(xs), options);
}

// The contraction order einsum takes for operands of these shapes, with its cost.
EinsumPathInfo einsum_path(std::string_view spec, const std::vector<Shape>& shapes, const EinsumOptions& options = {});

// einsum_path("ij,jk->ik", Shape{2, 3}, Shape{3, 4}), with an optional EinsumOptions last.
template <detail::EinsumArg<Shape>... Rest>
EinsumPathInfo einsum_path(std::string_view spec, const Shape& first, const Rest&... rest) {
  const auto [shapes, options] = detail::einsum_args(first, rest...);
  return einsum_path(spec, shapes, options);
}

namespace detail {
// The einsum spec of tensordot: a's axes_a contracted with b's axes_b, the rest of a then of b.
std::string tensordot_spec(const Shape& a, const Shape& b, const std::vector<std::int64_t>& axes_a,
                           const std::vector<std::int64_t>& axes_b, std::string_view context);
}  // namespace detail

// numpy.tensordot: sum over a's axes_a and b's axes_b (pairwise, negative axes count from the end);
// the result has a's other axes, then b's.
template <Floating T>
Tensor<T> tensordot(const Tensor<T>& a, const Tensor<T>& b, const std::vector<std::int64_t>& axes_a,
                    const std::vector<std::int64_t>& axes_b) {
  detail::check_defined("tensordot", a, b);
  TENAX_CHECK(a.device() == b.device(), "tensordot", "operands on different devices (", a.device().str(), " and ",
              b.device().str(), "; shapes ", a.shape(), " and ", b.shape(), ", ", dtype_traits<T>::name, ")");
  const std::string context = std::string(" (") + dtype_traits<T>::name + " on " + a.device().str() + ")";
  return einsum(detail::tensordot_spec(a.shape(), b.shape(), axes_a, axes_b, context), a, b);
}

// The last `axes` axes of a with the first `axes` axes of b.
template <Floating T>
Tensor<T> tensordot(const Tensor<T>& a, const Tensor<T>& b, int axes) {
  detail::check_defined("tensordot", a, b);
  TENAX_CHECK(axes >= 0 && axes <= a.dim() && axes <= b.dim(), "tensordot", "axes = ", axes,
              " out of range for shapes ", a.shape(), " and ", b.shape(), " (0 to the smaller rank; ",
              dtype_traits<T>::name, " on ", a.device().str(), ")");
  std::vector<std::int64_t> aa, ab;
  for (int q = 0; q < axes; ++q) {
    aa.push_back(a.dim() - axes + q);
    ab.push_back(q);
  }
  return tensordot(a, b, aa, ab);
}

// Explicit instances (core/instances.hpp): the library compiles these; includers link them.
#define TENAX_INSTANCES_EINSUM(T)                                                                          \
  TENAX_INSTANCE Tensor<T> einsum(std::string_view, std::span<const Tensor<T>>, const EinsumOptions&);     \
  TENAX_INSTANCE Tensor<T> einsum(std::string_view, const std::vector<Tensor<T>>&, const EinsumOptions&);  \
  TENAX_INSTANCE Tensor<T> tensordot(const Tensor<T>&, const Tensor<T>&, const std::vector<std::int64_t>&, \
                                     const std::vector<std::int64_t>&);                                    \
  TENAX_INSTANCE Tensor<T> tensordot(const Tensor<T>&, const Tensor<T>&, int);
TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_EINSUM)

}  // namespace tenax
