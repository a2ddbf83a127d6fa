// einsum's planning (ops/linalg/einsum.hpp): parsing and checking the subscripts against the
// operand shapes, the per-operand preparation (diagonals, broadcast dims, sums), the contraction
// order (greedy or optimal) with NumPy's cost model, and einsum_path's report. Independent of the
// dtype: the header's templates only follow the plan.
#include <algorithm>
#include <bit>
#include <cstdio>
#include <limits>
#include <sstream>

#include "tenax/ops/linalg/einsum.hpp"

namespace tenax {
namespace detail {
namespace {

// Label codes: a letter is its ASCII code; the t-th broadcast ("...") dimension is kEll + t.
constexpr int kEll = 128;
constexpr int kCodes = kEll + kMaxRank;

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

using Labels = std::vector<int>;

// Checks with messages that end with the spec and the operand shapes.
struct Context {
  std::string_view op, spec;
  const std::vector<Shape>& shapes;
  std::string_view context;
  template <class... A>
  [[noreturn]] void fail(const A&... a) const {
    std::ostringstream s;
    for (std::size_t i = 0; i < shapes.size(); ++i) s << (i ? ", " : "") << shapes[i];
    detail::fail(op, a..., " (spec '", spec, "', operand shapes ", s.str(), ")", context);
  }
};

// One term: its labels in order, with -1 where "..." stands.
struct Term {
  Labels labels;
  bool ellipsis = false;
  int letters = 0;
};

Term parse_term(const Context& cx, std::string_view t, const std::string& what) {
  Term r;
  for (std::size_t i = 0; i < t.size();) {
    const char c = t[i];
    if (is_letter(c)) {
      r.labels.push_back(c);
      ++r.letters;
      ++i;
    } else if (c == '.') {
      if (t.substr(i, 3) != "...") cx.fail("'.' outside a '...' in ", what, " '", t, "'");
      if (r.ellipsis) cx.fail("more than one '...' in ", what, " '", t, "'");
      r.ellipsis = true;
      r.labels.push_back(-1);
      i += 3;
    } else {
      cx.fail("invalid character '", c, "' in ", what, " '", t, "' (indices are letters a-z, A-Z)");
    }
  }
  return r;
}

// A label as a character for messages and reports ("..." dims get the spare letters in `spare`).
char label_char(int l, const std::string& spare) {
  if (l < kEll) return static_cast<char>(l);
  const std::size_t t = static_cast<std::size_t>(l - kEll);
  return t < spare.size() ? spare[t] : '?';
}

std::string term_string(const Labels& ls, const std::string& spare) {
  std::string s;
  for (int l : ls) s += label_char(l, spare);
  return s;
}

// The labels of the contraction, numbered densely so that sets of them are 64-bit masks.
struct Index {
  std::vector<int> code_of;    // dense -> code
  std::vector<int> dense_of;   // code -> dense (-1 if unused)
  std::vector<double> extent;  // dense -> size
  std::uint64_t mask(const Labels& ls) const {
    std::uint64_t m = 0;
    for (int l : ls) m |= std::uint64_t{1} << dense_of[static_cast<std::size_t>(l)];
    return m;
  }
  double size(std::uint64_t m) const {
    double s = 1;
    for (; m; m &= m - 1) s *= extent[static_cast<std::size_t>(std::countr_zero(m))];
    return s;
  }
};

// NumPy's cost of one step over the indices `all`: one multiply-add per point for a pair, one more
// when indices are summed (numpy.einsum_path's _flop_count).
double flop_count(const Index& ix, std::uint64_t all, bool inner, int terms) {
  return ix.size(all) * (std::max(1, terms - 1) + (inner ? 1 : 0));
}

// Axes of a and b by role for a pairwise contraction whose result keeps the labels in `keep`.
EinsumPair pair_layout(const Labels& la, const Labels& lb, std::uint64_t keep, const Index& ix, Labels& result) {
  EinsumPair p;
  auto has = [](const Labels& ls, int l) { return std::find(ls.begin(), ls.end(), l) != ls.end(); };
  auto kept = [&](int l) { return (keep >> ix.dense_of[static_cast<std::size_t>(l)]) & 1; };
  Labels a, b;
  for (std::size_t d = 0; d < la.size(); ++d) {
    if (!has(lb, la[d]) && !kept(la[d]))
      p.sum_a.push_back(static_cast<std::int64_t>(d));
    else
      a.push_back(la[d]);
  }
  for (std::size_t d = 0; d < lb.size(); ++d) {
    if (!has(la, lb[d]) && !kept(lb[d]))
      p.sum_b.push_back(static_cast<std::int64_t>(d));
    else
      b.push_back(lb[d]);
  }
  auto pos = [](const Labels& ls, int l) {
    return static_cast<std::int64_t>(std::find(ls.begin(), ls.end(), l) - ls.begin());
  };
  Labels free_a, free_b, bat;
  for (std::size_t d = 0; d < a.size(); ++d) {
    const int l = a[d];
    if (!has(b, l)) {
      p.a_free.push_back(static_cast<std::int64_t>(d));
      free_a.push_back(l);
    } else if (kept(l)) {
      p.a_bat.push_back(static_cast<std::int64_t>(d));
      p.b_bat.push_back(pos(b, l));
      bat.push_back(l);
    } else {
      p.a_con.push_back(static_cast<std::int64_t>(d));
      p.b_con.push_back(pos(b, l));
    }
  }
  for (std::size_t d = 0; d < b.size(); ++d)
    if (!has(a, b[d])) {
      p.b_free.push_back(static_cast<std::int64_t>(d));
      free_b.push_back(b[d]);
    }
  result = free_a;
  result.insert(result.end(), free_b.begin(), free_b.end());
  result.insert(result.end(), bat.begin(), bat.end());
  return p;
}

// The labels that a contraction of the operands in `group` (a bit set of positions) keeps: those
// in the output or in an operand outside the group.
std::uint64_t kept_labels(const std::vector<std::uint64_t>& ops, std::uint64_t group, std::uint64_t out) {
  std::uint64_t k = out;
  for (std::size_t q = 0; q < ops.size(); ++q)
    if (!((group >> q) & 1)) k |= ops[q];
  return k;
}

// NumPy's greedy order: among pairs that share an index (any pair if none does), the one that
// removes the most elements, then the cheapest; the first such pair on ties. Pairs whose result
// would exceed kMaxRank are passed over.
std::vector<std::pair<int, int>> greedy_order(std::vector<std::uint64_t> ops, std::uint64_t out, const Index& ix) {
  std::vector<std::pair<int, int>> order;
  while (ops.size() > 1) {
    const int n = static_cast<int>(ops.size());
    int bi = -1, bj = -1;
    double best_removed = 0, best_cost = 0;
    for (int pass = 0; pass < 2 && bi < 0; ++pass)
      for (int i = 0; i < n; ++i)
        for (int j = i + 1; j < n; ++j) {
          if (pass == 0 && !(ops[static_cast<std::size_t>(i)] & ops[static_cast<std::size_t>(j)])) continue;
          const std::uint64_t both = ops[static_cast<std::size_t>(i)] | ops[static_cast<std::size_t>(j)];
          const std::uint64_t res = both & kept_labels(ops, (std::uint64_t{1} << i) | (std::uint64_t{1} << j), out);
          if (std::popcount(res) > kMaxRank) continue;
          const double removed =
              ix.size(ops[static_cast<std::size_t>(i)]) + ix.size(ops[static_cast<std::size_t>(j)]) - ix.size(res);
          const double cost = flop_count(ix, both, both != res, 2);
          if (bi < 0 || removed > best_removed || (removed == best_removed && cost < best_cost)) {
            bi = i, bj = j, best_removed = removed, best_cost = cost;
          }
        }
    if (bi < 0) return {};
    const std::uint64_t res = (ops[static_cast<std::size_t>(bi)] | ops[static_cast<std::size_t>(bj)]) &
                              kept_labels(ops, (std::uint64_t{1} << bi) | (std::uint64_t{1} << bj), out);
    order.emplace_back(bi, bj);
    ops.erase(ops.begin() + bj);
    ops.erase(ops.begin() + bi);
    ops.push_back(res);
  }
  return order;
}

// The order of fewest FLOPs (NumPy's cost model, outer products allowed), by dynamic programming
// over subsets of operands: O(3^n).
std::vector<std::pair<int, int>> optimal_order(const std::vector<std::uint64_t>& ops, std::uint64_t out,
                                               const Index& ix) {
  const std::size_t n = ops.size();
  const std::uint32_t full = (std::uint32_t{1} << n) - 1;
  std::vector<std::uint64_t> labels(full + 1, 0);
  std::vector<double> cost(full + 1, std::numeric_limits<double>::infinity());
  std::vector<std::uint32_t> split(full + 1, 0);
  for (std::uint32_t s = 1; s <= full; ++s) {
    std::uint64_t all = 0;
    for (std::size_t q = 0; q < n; ++q)
      if ((s >> q) & 1) all |= ops[q];
    labels[s] = all & kept_labels(ops, s, out);
    if (std::popcount(s) == 1) {
      cost[s] = 0;
      continue;
    }
    if (std::popcount(labels[s]) > kMaxRank && s != full) continue;
    for (std::uint32_t a = (s - 1) & s; a > 0; a = (a - 1) & s) {
      const std::uint32_t b = s ^ a;
      if (a < b) continue;
      const std::uint64_t both = labels[a] | labels[b];
      const double c = cost[a] + cost[b] + flop_count(ix, both, both != labels[s], 2);
      if (c < cost[s]) cost[s] = c, split[s] = a;
    }
  }
  if (!(cost[full] < std::numeric_limits<double>::infinity())) return {};
  // The tree as steps over the current list (groups of operands; results go last).
  std::vector<std::uint32_t> list;
  for (std::size_t q = 0; q < n; ++q) list.push_back(std::uint32_t{1} << q);
  std::vector<std::pair<int, int>> order;
  auto emit = [&](auto&& self, std::uint32_t s) -> void {
    if (std::popcount(s) == 1) return;
    const std::uint32_t a = split[s], b = s ^ a;
    self(self, a);
    self(self, b);
    const int i = static_cast<int>(std::find(list.begin(), list.end(), a) - list.begin());
    const int j = static_cast<int>(std::find(list.begin(), list.end(), b) - list.begin());
    order.emplace_back(std::min(i, j), std::max(i, j));
    list.erase(list.begin() + std::max(i, j));
    list.erase(list.begin() + std::min(i, j));
    list.push_back(s);
  };
  emit(emit, full);
  return order;
}

std::string sci(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3e", v);
  return b;
}

}  // namespace

EinsumPlan einsum_plan(std::string_view op, std::string_view spec_in, const std::vector<Shape>& shapes, EinsumPath path,
                       std::string_view context) {
  const Context cx{op, spec_in, shapes, context};
  std::string spec;
  for (char c : spec_in)
    if (c != ' ') spec += c;
  // Split "lhs->rhs" and the lhs at commas.
  const std::size_t arrow = spec.find("->");
  for (std::size_t i = 0; i < spec.size(); ++i)
    if ((spec[i] == '-' && i != arrow) || (spec[i] == '>' && (arrow == std::string::npos || i != arrow + 1)))
      cx.fail("misplaced '", spec[i], "' (the output follows a single '->')");
  const std::string lhs = spec.substr(0, arrow);
  std::vector<std::string> terms_s;
  for (std::size_t b = 0;;) {
    const std::size_t e = lhs.find(',', b);
    terms_s.push_back(lhs.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  const std::size_t n = shapes.size();
  if (n == 0) cx.fail("needs at least one operand");
  if (terms_s.size() != n) cx.fail("the spec has ", terms_s.size(), " operand terms but ", n, " operands were given");
  if (n > 64) cx.fail(n, " operands exceed the maximum of 64");

  // Terms, ranks and the broadcast rank (NumPy's: "..." dims align at the end, size 1 broadcasts).
  std::vector<Term> terms;
  int ell_rank = 0;
  for (std::size_t k = 0; k < n; ++k) {
    terms.push_back(parse_term(cx, terms_s[k], "operand term " + std::to_string(k)));
    const Term& t = terms.back();
    const int r = shapes[k].size();
    if (t.ellipsis ? r < t.letters : r != t.letters)
      cx.fail("operand ", k, " has rank ", r, " but its term '", terms_s[k], "' names ", t.letters,
              t.ellipsis ? " or more dimensions" : " dimensions");
    if (t.ellipsis) ell_rank = std::max(ell_rank, r - t.letters);
  }
  // Labels per operand (ellipsis expanded) and each label's size.
  std::vector<Labels> labels(n);
  std::vector<std::int64_t> size(kCodes, -1);
  std::vector<int> first_seen(kCodes, -1), count(kCodes, 0);
  std::vector<std::vector<std::int64_t>> own(n);  // each operand's size along its labels
  bool any_ellipsis = false;
  for (std::size_t k = 0; k < n; ++k) {
    const Term& t = terms[k];
    const int e = shapes[k].size() - t.letters;
    for (int l : t.labels) {
      if (l >= 0) {
        labels[k].push_back(l);
        continue;
      }
      any_ellipsis = true;
      for (int q = 0; q < e; ++q) labels[k].push_back(kEll + ell_rank - e + q);
    }
    for (std::size_t d = 0; d < labels[k].size(); ++d) {
      const int l = labels[k][d];
      const std::int64_t s = shapes[k][static_cast<int>(d)];
      own[k].push_back(s);
      ++count[static_cast<std::size_t>(l)];
      std::int64_t& g = size[static_cast<std::size_t>(l)];
      if (g < 0 || (l >= kEll && g == 1)) {
        g = s;
        first_seen[static_cast<std::size_t>(l)] = static_cast<int>(k);
      } else if (s != g && !(l >= kEll && s == 1)) {
        if (l < kEll)
          cx.fail("index '", static_cast<char>(l), "' has size ", g, " in operand ",
                  first_seen[static_cast<std::size_t>(l)], " but ", s, " in operand ", k);
        cx.fail("the '...' dimensions of operand ", first_seen[static_cast<std::size_t>(l)], " and operand ", k,
                " do not broadcast (sizes ", g, " and ", s, ")");
      }
    }
  }
  // The output's labels.
  Labels out;
  if (arrow != std::string::npos) {
    const std::string rhs = spec.substr(arrow + 2);
    const Term t = parse_term(cx, rhs, "the output");
    std::vector<bool> seen(kCodes, false);
    for (int l : t.labels) {
      if (l < 0) {
        if (!any_ellipsis) cx.fail("the output has '...' but no operand term does");
        for (int q = 0; q < ell_rank; ++q) out.push_back(kEll + q);
        continue;
      }
      if (count[static_cast<std::size_t>(l)] == 0)
        cx.fail("output index '", static_cast<char>(l), "' does not appear in any operand term");
      if (seen[static_cast<std::size_t>(l)]) cx.fail("output index '", static_cast<char>(l), "' is repeated");
      seen[static_cast<std::size_t>(l)] = true;
      out.push_back(l);
    }
    if (!t.ellipsis && ell_rank > 0)
      cx.fail("the operands' '...' spans ", ell_rank, " dimensions but the output has no '...' to hold them");
  } else {
    // Implicit: the broadcast dims, then the letters that appear once, in ASCII order.
    for (int q = 0; q < ell_rank; ++q) out.push_back(kEll + q);
    for (int l = 0; l < kEll; ++l)
      if (count[static_cast<std::size_t>(l)] == 1) out.push_back(l);
  }
  if (static_cast<int>(out.size()) > kMaxRank)
    cx.fail("the output's rank ", out.size(), " exceeds the maximum of ", kMaxRank);

  // Spare letters name the "..." dims in reports.
  std::string spare;
  for (char c : std::string("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"))
    if (count[static_cast<std::size_t>(c)] == 0) spare += c;

  EinsumPlan plan;
  EinsumPathInfo& info = plan.info;
  {
    std::string c;
    for (std::size_t k = 0; k < n; ++k) {
      if (k) c += ',';
      c += term_string(labels[k], spare);
    }
    info.contraction = c + "->" + term_string(out, spare);
  }
  // Dense numbering.
  Index ix;
  ix.dense_of.assign(kCodes, -1);
  for (int l = 0; l < kCodes; ++l)
    if (count[static_cast<std::size_t>(l)] > 0) {
      ix.dense_of[static_cast<std::size_t>(l)] = static_cast<int>(ix.code_of.size());
      ix.code_of.push_back(l);
      ix.extent.push_back(static_cast<double>(size[static_cast<std::size_t>(l)]));
    }
  const std::uint64_t out_mask = ix.mask(out);
  {
    std::uint64_t all = 0;
    std::size_t total = 0;
    for (const Labels& ls : labels) {
      all |= ix.mask(ls);
      total += static_cast<std::size_t>(std::popcount(ix.mask(ls)));
    }
    info.naive_scaling = std::popcount(all);
    info.naive_flops = flop_count(ix, all, total > static_cast<std::size_t>(std::popcount(all)), static_cast<int>(n));
  }

  // Preparation: diagonals of repeated indices, broadcast size-1 dims dropped.
  plan.prep.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    EinsumPrep& p = plan.prep[k];
    Labels& ls = labels[k];
    std::vector<std::int64_t>& os = own[k];
    for (std::size_t a = 0; a < ls.size(); ++a)
      for (std::size_t b = a + 1; b < ls.size();)
        if (ls[a] == ls[b]) {
          p.diagonals.emplace_back(static_cast<int>(a), static_cast<int>(b));
          ls.erase(ls.begin() + static_cast<std::ptrdiff_t>(b));
          os.erase(os.begin() + static_cast<std::ptrdiff_t>(b));
        } else {
          ++b;
        }
    Labels kept;
    for (std::size_t d = 0; d < ls.size(); ++d) {
      if (os[d] == 1 && size[static_cast<std::size_t>(ls[d])] != 1) {
        p.squeeze = true;
        continue;
      }
      kept.push_back(ls[d]);
      p.squeezed.push_back(os[d]);
    }
    ls = kept;
  }
  // Sums of the indices that one operand alone holds and the output lacks.
  std::vector<std::uint64_t> ops(n);
  for (std::size_t k = 0; k < n; ++k) ops[k] = ix.mask(labels[k]);
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint64_t keep = kept_labels(ops, std::uint64_t{1} << k, out_mask);
    Labels kept;
    for (std::size_t d = 0; d < labels[k].size(); ++d) {
      if ((keep >> ix.dense_of[static_cast<std::size_t>(labels[k][d])]) & 1)
        kept.push_back(labels[k][d]);
      else
        plan.prep[k].sum_axes.push_back(static_cast<std::int64_t>(d));
    }
    if (!plan.prep[k].sum_axes.empty()) info.flops += ix.size(ops[k]);
    labels[k] = kept;
  }
  for (std::size_t k = 0; k < n; ++k) ops[k] = ix.mask(labels[k]);

  // The order.
  const bool optimal = path == EinsumPath::optimal && n <= static_cast<std::size_t>(kEinsumOptimalMax);
  info.strategy = optimal ? EinsumPath::optimal : EinsumPath::greedy;
  info.path = n < 2     ? std::vector<std::pair<int, int>>{}
              : optimal ? optimal_order(ops, out_mask, ix)
                        : greedy_order(ops, out_mask, ix);
  if (n >= 2 && info.path.empty())
    cx.fail("every contraction order needs an intermediate of rank above the maximum of ", kMaxRank);

  // The steps, over the current list of operands' labels.
  std::vector<Labels> cur = labels;
  info.largest_intermediate = n < 2 ? ix.size(out_mask) : 0;
  for (auto [i, j] : info.path) {
    std::vector<std::uint64_t> masks;
    for (const Labels& ls : cur) masks.push_back(ix.mask(ls));
    const std::uint64_t keep = kept_labels(masks, (std::uint64_t{1} << i) | (std::uint64_t{1} << j), out_mask);
    const Labels& la = cur[static_cast<std::size_t>(i)];
    const Labels& lb = cur[static_cast<std::size_t>(j)];
    Labels res;
    EinsumPair p = pair_layout(la, lb, keep, ix, res);
    p.i = i;
    p.j = j;
    const std::uint64_t both = ix.mask(la) | ix.mask(lb);
    info.flops += flop_count(ix, both, both != ix.mask(res), 2);
    info.step_scaling.push_back(std::popcount(both));
    info.largest_intermediate = std::max(info.largest_intermediate, ix.size(ix.mask(res)));
    info.steps.push_back(term_string(la, spare) + "," + term_string(lb, spare) + "->" + term_string(res, spare));
    plan.pairs.push_back(std::move(p));
    cur.erase(cur.begin() + std::max(i, j));
    cur.erase(cur.begin() + std::min(i, j));
    cur.push_back(res);
    std::string rem;
    for (std::size_t q = 0; q < cur.size(); ++q) {
      if (q) rem += ',';
      rem += term_string(cur[q], spare);
    }
    info.remaining.push_back(rem + "->" + term_string(out, spare));
  }
  info.scaling = 0;
  for (int s : info.step_scaling) info.scaling = std::max(info.scaling, s);
  if (n < 2) info.scaling = std::popcount(ops[0]);
  // The last tensor's labels are the output's, in some order.
  for (int l : out) plan.out_perm.push_back(std::find(cur[0].begin(), cur[0].end(), l) - cur[0].begin());
  return plan;
}

std::string tensordot_spec(const Shape& a, const Shape& b, const std::vector<std::int64_t>& axes_a,
                           const std::vector<std::int64_t>& axes_b, std::string_view context) {
  auto fail = [&](const auto&... m) {
    detail::fail("tensordot", m..., " (shapes ", a, " and ", b, ", axes ", Shape(axes_a), " and ", Shape(axes_b), ")",
                 context);
  };
  if (axes_a.size() != axes_b.size()) fail(axes_a.size(), " axes of a but ", axes_b.size(), " of b");
  std::string ta, tb, to;
  for (int d = 0; d < a.size(); ++d) ta += static_cast<char>('a' + d);
  for (int d = 0; d < b.size(); ++d) tb += static_cast<char>('a' + kMaxRank + d);
  std::vector<bool> used_a(static_cast<std::size_t>(a.size()), false),
      used_b(static_cast<std::size_t>(b.size()), false);
  for (std::size_t q = 0; q < axes_a.size(); ++q) {
    const std::int64_t x = axes_a[q], y = axes_b[q];
    if (x < -a.size() || x >= a.size()) fail("axis ", x, " out of range for a");
    if (y < -b.size() || y >= b.size()) fail("axis ", y, " out of range for b");
    const int da = static_cast<int>(x < 0 ? x + a.size() : x), db = static_cast<int>(y < 0 ? y + b.size() : y);
    if (used_a[static_cast<std::size_t>(da)]) fail("axis ", x, " of a listed twice");
    if (used_b[static_cast<std::size_t>(db)]) fail("axis ", y, " of b listed twice");
    used_a[static_cast<std::size_t>(da)] = used_b[static_cast<std::size_t>(db)] = true;
    if (a[da] != b[db]) fail("axis ", x, " of a has size ", a[da], " but axis ", y, " of b has ", b[db]);
    tb[static_cast<std::size_t>(db)] = ta[static_cast<std::size_t>(da)];
  }
  for (int d = 0; d < a.size(); ++d)
    if (!used_a[static_cast<std::size_t>(d)]) to += ta[static_cast<std::size_t>(d)];
  for (int d = 0; d < b.size(); ++d)
    if (!used_b[static_cast<std::size_t>(d)]) to += tb[static_cast<std::size_t>(d)];
  if (static_cast<int>(to.size()) > kMaxRank)
    fail("the result's rank ", to.size(), " exceeds the maximum of ", kMaxRank);
  return ta + "," + tb + "->" + to;
}

}  // namespace detail

EinsumPathInfo einsum_path(std::string_view spec, const std::vector<Shape>& shapes, const EinsumOptions& options) {
  return detail::einsum_plan("einsum_path", spec, shapes, options.path).info;
}

std::string EinsumPathInfo::report() const {
  std::ostringstream s;
  char line[160];
  s << "  Complete contraction:  " << contraction << "\n";
  s << "              Strategy:  " << (strategy == EinsumPath::optimal ? "optimal" : "greedy") << "\n";
  s << "         Naive scaling:  " << naive_scaling << "\n";
  s << "     Optimized scaling:  " << scaling << "\n";
  s << "      Naive FLOP count:  " << detail::sci(naive_flops) << "\n";
  s << "  Optimized FLOP count:  " << detail::sci(flops) << "\n";
  std::snprintf(line, sizeof line, "%.3f", flops > 0 ? naive_flops / flops : 1.0);
  s << "   Theoretical speedup:  " << line << "\n";
  s << "  Largest intermediate:  " << detail::sci(largest_intermediate) << " elements\n";
  const std::string rule(74, '-');
  std::snprintf(line, sizeof line, "%6s %24s %40s", "scaling", "current", "remaining");
  s << rule << "\n" << line << "\n" << rule << "\n";
  for (std::size_t q = 0; q < steps.size(); ++q) {
    std::snprintf(line, sizeof line, "%4d    %24s %40s", step_scaling[q], steps[q].c_str(), remaining[q].c_str());
    s << line << "\n";
  }
  return s.str();
}

std::ostream& operator<<(std::ostream& os, const EinsumPathInfo& info) { return os << info.report(); }

}  // namespace tenax
