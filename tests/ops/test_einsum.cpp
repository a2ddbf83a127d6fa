// einsum, einsum_path and tensordot: random specs (repeated indices, "...", broadcasting, 0-d
// operands) against a direct nested-loop evaluation, named contractions against other ops, the
// contraction orders and their FLOP counts (numpy.einsum_path's), the gradient harness, compiled
// == eager, and errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <tenax/tenax.hpp>

#include "support/expect.hpp"
#include "support/gradcheck.hpp"
#include "support/messages.hpp"
#include "trace/trace_support.hpp"

namespace tx = tenax;
using tx::testing::expect_ad;
using tx::testing::expect_close;
using tx::testing::expect_error;

namespace {

using TD = tx::Tensor<double>;
using TZ = tx::Tensor<tx::c128>;

// One operand of a reference contraction: each dimension's label (a letter, or 1000 + t for the
// t-th broadcast dimension) and size (1 where it broadcasts).
struct RefOperand {
  std::vector<int> labels;
  tx::Shape shape;
};

// The contraction by nested loops over every label's values: out[o] = sum of prod_k x_k[...].
template <class T>
tx::Tensor<T> reference(const std::vector<RefOperand>& ops, const std::vector<tx::Tensor<T>>& xs,
                        const std::vector<int>& out, const std::map<int, std::int64_t>& size) {
  std::vector<int> all;
  for (const auto& [l, s] : size) all.push_back(l);
  tx::Shape os;
  for (int l : out) os.push_back(size.at(l));
  std::vector<T> r(static_cast<std::size_t>(tx::numel_of(os)), T(0));
  std::vector<std::vector<T>> v;
  for (const auto& x : xs) v.push_back(x.to_vector());
  std::map<int, std::int64_t> at;
  for (int l : all) at[l] = 0;
  for (;;) {
    T p(1);
    for (std::size_t k = 0; k < ops.size(); ++k) {
      std::int64_t off = 0, stride = 1;
      for (std::size_t d = 0; d < ops[k].labels.size(); ++d) {
        const std::int64_t n = ops[k].shape[static_cast<int>(d)];
        off += (n == 1 ? 0 : at[ops[k].labels[d]]) * stride;
        stride *= n;
      }
      p *= v[k][static_cast<std::size_t>(off)];
    }
    std::int64_t off = 0, stride = 1;
    for (std::size_t d = 0; d < out.size(); ++d) {
      off += at[out[d]] * stride;
      stride *= os[static_cast<int>(d)];
    }
    if (!r.empty()) r[static_cast<std::size_t>(off)] += p;
    std::size_t q = 0;
    for (; q < all.size(); ++q) {
      if (++at[all[q]] < size.at(all[q])) break;
      at[all[q]] = 0;
    }
    if (q == all.size()) break;
  }
  return tx::Tensor<T>::from_col_major(os, r);
}

// A random spec with its operands and the reference contraction.
struct RandomCase {
  std::string spec;
  std::vector<RefOperand> ops;
  std::vector<int> out;
  std::map<int, std::int64_t> size;
};

RandomCase random_case(std::mt19937& g) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(g); };
  RandomCase c;
  const std::string pool = std::string("abAcdB").substr(0, static_cast<std::size_t>(pick(1, 6)));
  for (char l : pool) c.size[l] = pick(1, 4);
  const int ell = pick(0, 3) == 0 ? pick(1, 2) : 0;  // the "..." rank offered to operands
  std::vector<std::int64_t> ell_size;
  for (int t = 0; t < ell; ++t) ell_size.push_back(pick(1, 3));
  const int n = pick(1, 4);
  int ell_rank = 0;
  bool any_ellipsis = false;
  std::vector<std::string> terms;
  std::map<int, int> count;
  for (int k = 0; k < n; ++k) {
    RefOperand op;
    std::string term;
    const int letters = pick(0, 3);
    const bool has_ell = ell > 0 && pick(0, 1) == 1;
    const int e = has_ell ? pick(0, ell) : 0;
    const int at = pick(0, letters);
    for (int q = 0; q <= letters; ++q) {
      if (q == at && has_ell) {
        term += "...";
        any_ellipsis = true;
        ell_rank = std::max(ell_rank, e);
        for (int t = 0; t < e; ++t) {
          const int gt = ell - e + t;  // aligned at the end, as NumPy
          op.labels.push_back(1000 + gt);
          op.shape.push_back(pick(0, 2) == 0 ? 1 : ell_size[static_cast<std::size_t>(gt)]);
        }
      }
      if (q == letters) break;
      const char l = pool[static_cast<std::size_t>(pick(0, static_cast<int>(pool.size()) - 1))];
      term += l;
      op.labels.push_back(l);
      op.shape.push_back(c.size[l]);
      ++count[l];
    }
    terms.push_back(term);
    c.ops.push_back(op);
  }
  // The "..." dims: ell_rank of them, renumbered from the end; sizes as the broadcast gives.
  for (auto& op : c.ops)
    for (int& l : op.labels)
      if (l >= 1000) l = 1000 + (l - 1000) - (ell - ell_rank);
  for (int t = 0; t < ell_rank; ++t) {
    std::int64_t s = 1;
    for (const auto& op : c.ops)
      for (std::size_t d = 0; d < op.labels.size(); ++d)
        if (op.labels[d] == 1000 + t) s = std::max(s, op.shape[static_cast<int>(d)]);
    c.size[1000 + t] = s;
  }
  for (auto it = c.size.begin(); it != c.size.end();)
    it = (it->first < 1000 && !count.count(it->first)) ? c.size.erase(it) : std::next(it);
  for (int k = 0; k < n; ++k) c.spec += (k ? "," : "") + terms[static_cast<std::size_t>(k)];
  if (pick(0, 2) > 0) {
    // Explicit output: a random subset of the letters in random order, "..." somewhere.
    std::vector<int> letters;
    for (const auto& [l, m] : count) letters.push_back(l);
    std::shuffle(letters.begin(), letters.end(), g);
    letters.resize(static_cast<std::size_t>(pick(0, static_cast<int>(letters.size()))));
    const bool put_ell = ell_rank > 0 || (any_ellipsis && pick(0, 1) == 1);
    const int at = pick(0, static_cast<int>(letters.size()));
    c.spec += "->";
    for (int q = 0; q <= static_cast<int>(letters.size()); ++q) {
      if (q == at && put_ell) {
        c.spec += "...";
        for (int t = 0; t < ell_rank; ++t) c.out.push_back(1000 + t);
      }
      if (q == static_cast<int>(letters.size())) break;
      c.spec += static_cast<char>(letters[static_cast<std::size_t>(q)]);
      c.out.push_back(letters[static_cast<std::size_t>(q)]);
    }
  } else {
    // Implicit output (NumPy): the "..." dims, then the letters that appear once, sorted.
    for (int t = 0; t < ell_rank; ++t) c.out.push_back(1000 + t);
    for (const auto& [l, m] : count)
      if (m == 1) c.out.push_back(l);
  }
  return c;
}

TEST(Einsum, RandomSpecsMatchNestedLoops) {
  std::mt19937 g(2024);
  int with_ellipsis = 0, with_repeats = 0, multi = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const RandomCase c = random_case(g);
    std::vector<TD> xs;
    for (std::size_t k = 0; k < c.ops.size(); ++k)
      xs.push_back(TD::randn(c.ops[k].shape, 100 + static_cast<std::uint64_t>(trial) * 8 + k));
    SCOPED_TRACE(c.spec);
    const TD want = reference(c.ops, xs, c.out, c.size);
    const TD greedy = tx::einsum(c.spec, xs);
    ASSERT_EQ(greedy.shape(), want.shape());
    expect_close(greedy, want, 1e-12, 1e-12, c.spec);
    const TD optimal = tx::einsum(c.spec, xs, tx::EinsumOptions{tx::EinsumPath::optimal});
    expect_close(optimal, want, 1e-12, 1e-12, c.spec + " (optimal)");
    with_ellipsis += c.spec.find("...") != std::string::npos;
    multi += c.ops.size() >= 3;
    for (const auto& op : c.ops) {
      std::vector<int> ls = op.labels;
      std::sort(ls.begin(), ls.end());
      with_repeats += std::adjacent_find(ls.begin(), ls.end()) != ls.end();
    }
  }
  // The generator reaches the features it is meant to.
  EXPECT_GT(with_ellipsis, 30);
  EXPECT_GT(with_repeats, 30);
  EXPECT_GT(multi, 60);
}

TEST(Einsum, NamedContractions) {
  const TD a = TD::randn({3, 4}, 1), b = TD::randn({4, 5}, 2), sq = TD::randn({4, 4}, 3);
  expect_close(tx::einsum("ij,jk->ik", a, b), tx::matmul(a, b), 1e-14, "matmul");
  expect_close(tx::einsum("ij,jk", a, b), tx::matmul(a, b), 1e-14, "implicit matmul");
  expect_close(tx::einsum("ij,kj->ik", a, b.mT()), tx::matmul(a, b), 1e-14, "matmul with a transposed view");
  expect_close(tx::einsum("ij->ji", a), a.mT(), 0, "transpose");
  expect_close(tx::einsum("ba", a), a.mT(), 0, "implicit transpose (sorted output)");
  expect_close(tx::einsum("ii->", sq), tx::sum(tx::diagonal(sq, 0, 0, 1)), 1e-14, "trace");
  expect_close(tx::einsum("ii", sq), tx::sum(tx::diagonal(sq, 0, 0, 1)), 1e-14, "implicit trace");
  expect_close(tx::einsum("ii->i", sq), tx::diagonal(sq, 0, 0, 1), 0, "diagonal");
  expect_close(tx::einsum("ij->", a), tx::sum(a), 1e-14, "sum");
  expect_close(tx::einsum("ij->j", a), tx::sum(a, {0}, false), 1e-14, "column sums");
  const TD u = TD::randn({3}, 4), v = TD::randn({5}, 5);
  expect_close(tx::einsum("i,j->ij", u, v), tx::mul(tx::reshape(u, {3, 1}), tx::reshape(v, {1, 5})), 0, "outer");
  expect_close(tx::einsum("i,i->", u, u), tx::sum(tx::mul(u, u)), 1e-14, "dot");
  expect_close(tx::einsum("i,i->i", u, u), tx::mul(u, u), 0, "elementwise");
  // Batched matmul in shape order: (b, i, j) x (b, j, k); matmul takes the batch last.
  const TD A = TD::randn({6, 3, 4}, 6), B = TD::randn({6, 4, 2}, 7);
  const TD want = tx::permute(tx::matmul(tx::permute(A, {1, 2, 0}), tx::permute(B, {1, 2, 0})), {2, 0, 1});
  expect_close(tx::einsum("bij,bjk->bik", A, B), want, 1e-14, "batched matmul");
  expect_close(tx::einsum("ijb,jkb->ikb", tx::permute(A, {1, 2, 0}), tx::permute(B, {1, 2, 0})),
               tx::permute(want, {1, 2, 0}), 1e-14, "batched matmul, batch last");
  expect_close(tx::einsum("...ij,...jk->...ik", A, B), want, 1e-14, "batched matmul by ellipsis");
  // "..." broadcasts size 1 (aligned at the end, as NumPy).
  const TD A1 = TD::randn({1, 3, 4}, 8);
  expect_close(tx::einsum("...ij,...jk->...ik", A1, B), tx::einsum("ij,bjk->bik", tx::reshape(A1, {3, 4}), B), 1e-14,
               "broadcast ellipsis");
  expect_close(tx::einsum("...ij,jk->...ik", A, b.mT().mT()), tx::einsum("bij,jk->bik", A, b), 0, "ellipsis, one side");
  // Repeated index inside an operand together with a contraction.
  const TD T3 = TD::randn({3, 3, 4}, 9);
  expect_close(tx::einsum("iij->j", T3), tx::sum(tx::diagonal(T3, 0, 0, 1), {0}, false), 1e-14, "iij->j");
  // 0-d operands.
  const TD s = TD::scalar(2.5);
  expect_close(tx::einsum(",->", s, s), TD::scalar(6.25), 0, "scalar product");
  expect_close(tx::einsum(",ij->ij", s, a), tx::mul(a, 2.5), 0, "scalar times matrix");
  expect_close(tx::einsum("->", s), s, 0, "0-d identity");
  // Strided (non-contiguous) inputs.
  const TD big = TD::randn({6, 8}, 10);
  const TD strided = tx::slice(big, 1, 0, 8, 2);  // 6 x 4, every other column
  expect_close(tx::einsum("ij,jk->ik", strided, TD::randn({4, 2}, 11)), tx::matmul(strided, TD::randn({4, 2}, 11)),
               1e-14, "strided operand");
  expect_close(tx::einsum("ji,jk->ik", strided, TD::randn({6, 2}, 11)), tx::matmul(strided.mT(), TD::randn({6, 2}, 11)),
               1e-14, "strided, transposed operand");
}

TEST(Einsum, ThreeTensorNetworkAndOrders) {
  const TD x = TD::randn({3, 4, 5}, 12), y = TD::randn({4, 6}, 13), z = TD::randn({6, 5, 7}, 14);
  std::vector<RefOperand> ops{{{'i', 'j', 'k'}, {3, 4, 5}}, {{'j', 'l'}, {4, 6}}, {{'l', 'k', 'm'}, {6, 5, 7}}};
  const TD want = reference<double>(ops, {x, y, z}, {'i', 'm'}, {{'i', 3}, {'j', 4}, {'k', 5}, {'l', 6}, {'m', 7}});
  const TD greedy = tx::einsum("ijk,jl,lkm->im", x, y, z);
  const TD optimal = tx::einsum("ijk,jl,lkm->im", x, y, z, tx::EinsumOptions{tx::EinsumPath::optimal});
  expect_close(greedy, want, 1e-13, "greedy");
  expect_close(optimal, want, 1e-13, "optimal");
  // A longer chain in both orders, and the vector overload.
  std::vector<TD> chain{TD::randn({5, 2}, 15), TD::randn({2, 8}, 16), TD::randn({8, 3}, 17), TD::randn({3, 6}, 18)};
  expect_close(tx::einsum("ab,bc,cd,de->ae", chain, {tx::EinsumPath::optimal}), tx::linalg::multi_dot(chain), 1e-13,
               "chain (optimal)");
  expect_close(tx::einsum("ab,bc,cd,de->ae", chain), tx::linalg::multi_dot(chain), 1e-13, "chain (greedy)");
}

TEST(Einsum, PathMatchesNumpy) {
  // numpy 1.24: np.einsum_path('ij,jk,kl->il', ones((2,2)), ones((2,5)), ones((5,2)), optimize='greedy')
  // gives ['einsum_path', (1, 2), (0, 1)], naive FLOPs 1.2e2, optimized 5.7e1, largest intermediate
  // 4. NumPy adds 1 to its optimized count; the steps cost 40 + 16.
  const tx::EinsumPathInfo p = tx::einsum_path("ij,jk,kl->il", tx::Shape{2, 2}, tx::Shape{2, 5}, tx::Shape{5, 2});
  EXPECT_EQ(p.path, (std::vector<std::pair<int, int>>{{1, 2}, {0, 1}}));
  EXPECT_EQ(p.naive_flops, 120);
  EXPECT_EQ(p.flops, 56);
  EXPECT_EQ(p.largest_intermediate, 4);
  EXPECT_EQ(p.naive_scaling, 4);
  EXPECT_EQ(p.scaling, 3);
  EXPECT_EQ(p.steps, (std::vector<std::string>{"jk,kl->jl", "ij,jl->il"}));
  // 'ijk,jl,lkm->im' with i..m = 3..7: greedy (1, 2), (0, 1) at 2.521e3 (2520 + 1), largest 140;
  // optimal (0, 1), (0, 1) at 1.981e3, largest 90; naive 7.56e3 for both.
  const std::vector<tx::Shape> shapes{{3, 4, 5}, {4, 6}, {6, 5, 7}};
  const tx::EinsumPathInfo g = tx::einsum_path("ijk,jl,lkm->im", shapes);
  EXPECT_EQ(g.path, (std::vector<std::pair<int, int>>{{1, 2}, {0, 1}}));
  EXPECT_EQ(g.flops, 2520);
  EXPECT_EQ(g.naive_flops, 7560);
  EXPECT_EQ(g.largest_intermediate, 140);
  const tx::EinsumPathInfo o = tx::einsum_path("ijk,jl,lkm->im", shapes, {tx::EinsumPath::optimal});
  EXPECT_EQ(o.strategy, tx::EinsumPath::optimal);
  EXPECT_EQ(o.path, (std::vector<std::pair<int, int>>{{0, 1}, {0, 1}}));
  EXPECT_EQ(o.flops, 1980);
  EXPECT_EQ(o.largest_intermediate, 90);
  EXPECT_EQ(o.scaling, 4);
  const std::string r = o.report();
  for (const char* part : {"Complete contraction:  ijk,jl,lkm->im", "Optimized FLOP count:  1.980e+03",
                           "Naive FLOP count:  7.560e+03", "Largest intermediate:  9.000e+01 elements", "optimal"})
    EXPECT_NE(r.find(part), std::string::npos) << part << " missing from\n" << r;
  // Sums of indices in one operand only come first and count one FLOP per element.
  const tx::EinsumPathInfo s = tx::einsum_path("ij,jk->k", tx::Shape{3, 4}, tx::Shape{4, 5});
  EXPECT_EQ(s.flops, 12 + 2 * 20);
  // "..." dims are named by spare letters in the report.
  EXPECT_EQ(tx::einsum_path("...i,i->...", tx::Shape{2, 3}, tx::Shape{3}).contraction, "ai,i->a");
  // Beyond kEinsumOptimalMax operands the optimal search falls back to greedy (and says so).
  std::string chain;
  std::vector<tx::Shape> links;
  for (int q = 0; q <= tx::kEinsumOptimalMax; ++q) {
    chain += std::string(q ? "," : "") + static_cast<char>('a' + q) + static_cast<char>('a' + q + 1);
    links.push_back({2, 2});
  }
  const tx::EinsumPathInfo far = tx::einsum_path(chain, links, {tx::EinsumPath::optimal});
  EXPECT_EQ(far.strategy, tx::EinsumPath::greedy);
  EXPECT_EQ(far.path.size(), static_cast<std::size_t>(tx::kEinsumOptimalMax));
  std::ostringstream printed;
  printed << far;
  EXPECT_EQ(printed.str(), far.report());
  EXPECT_NE(printed.str().find("Strategy:  greedy"), std::string::npos);
  // The optimal order is never worse than the greedy one, on random networks.
  std::mt19937 gen(5);
  for (int trial = 0; trial < 40; ++trial) {
    const RandomCase c = random_case(gen);
    std::vector<tx::Shape> sh;
    for (const auto& op : c.ops) sh.push_back(op.shape);
    EXPECT_LE(tx::einsum_path(c.spec, sh, {tx::EinsumPath::optimal}).flops, tx::einsum_path(c.spec, sh).flops)
        << c.spec;
  }
}

TEST(Einsum, ComplexAndEmpty) {
  // No conjugation anywhere.
  const TZ a = TZ::randn({2, 3}, 20), b = TZ::randn({3, 2}, 21);
  expect_close(tx::einsum("ij,jk->ik", a, b), tx::matmul(a, b), 1e-14, "complex matmul");
  expect_close(tx::einsum("ij,ij->", a, a), tx::sum(tx::mul(a, a)), 1e-14, "complex, unconjugated");
  expect_close(tx::einsum("ij,jk->ik", tx::Tensor<float>::ones({2, 3}), tx::Tensor<float>::ones({3, 2})),
               tx::Tensor<float>::full({2, 2}, 3.0f), 0, "f32");
  // Empty dimensions: a zero-length sum gives zeros; a zero-length free index an empty result.
  EXPECT_EQ(tx::einsum("ij,jk->ik", TD::ones({2, 0}), TD::ones({0, 3})).to_vector(), std::vector<double>(6, 0.0));
  EXPECT_EQ(tx::einsum("ij,jk->ik", TD::ones({0, 2}), TD::ones({2, 3})).shape(), (tx::Shape{0, 3}));
  EXPECT_EQ(tx::einsum("ii->", TD::ones({0, 0})).item(), 0.0);
  EXPECT_EQ(tx::einsum("ijk,jl,lkm->im", TD::ones({2, 0, 3}), TD::ones({0, 4}), TD::ones({4, 3, 2})).to_vector(),
            std::vector<double>(4, 0.0));
}

TEST(Tensordot, MatchesNumpySemantics) {
  const TD a = TD::randn({3, 4, 5}, 30), b = TD::randn({4, 5, 2}, 31);
  // axes = 2: a's last two with b's first two.
  expect_close(tx::tensordot(a, b, 2), tx::einsum("ijk,jkl->il", a, b), 1e-14, "axes = 2");
  expect_close(tx::tensordot(a, b, 0), tx::einsum("ijk,lmn->ijklmn", a, b), 0, "axes = 0 (outer)");
  const TD c = TD::randn({5, 3}, 32);
  expect_close(tx::tensordot(a, c, {0, -1}, {1, 0}), tx::einsum("ijk,ki->j", a, c), 1e-14, "explicit axes");
  EXPECT_EQ(tx::tensordot(a, c, {2}, {0}).shape(), (tx::Shape{3, 4, 3}));
  const TD m = TD::randn({3, 4}, 33), n = TD::randn({4, 2}, 34);
  expect_close(tx::tensordot(m, n, 1), tx::matmul(m, n), 1e-14, "matrix product");
  expect_close(tx::tensordot(TD::scalar(2.0), m, 0), tx::mul(m, 2.0), 0, "0-d");
}

TEST(Einsum, Gradients) {
  const TD a = TD::randn({3, 4}, 40), b = TD::randn({4, 2}, 41);
  expect_ad([](const auto& x, const auto& y) { return tx::einsum("ij,jk->ik", x, y); }, a, b);
  expect_ad([](const auto& x, const auto& y) { return tx::einsum("ij,kj->ki", x, y); }, a, TD::randn({2, 4}, 42));
  const TD x = TD::randn({2, 3, 2}, 43), y = TD::randn({3, 2}, 44), z = TD::randn({2, 2, 3}, 45);
  expect_ad([](const auto& p, const auto& q, const auto& r) { return tx::einsum("ijk,jl,lkm->im", p, q, r); }, x, y, z);
  expect_ad(
      [](const auto& p, const auto& q, const auto& r) {
        return tx::einsum("ijk,jl,lkm->im", p, q, r, tx::EinsumOptions{tx::EinsumPath::optimal});
      },
      x, y, z);
  expect_ad([](const auto& p) { return tx::einsum("ii->i", p); }, TD::randn({3, 3}, 46));
  expect_ad([](const auto& p) { return tx::einsum("iij->j", p); }, TD::randn({2, 2, 3}, 47));
  expect_ad([](const auto& p, const auto& q) { return tx::einsum("...ij,...j->...i", p, q); }, TD::randn({2, 3, 2}, 48),
            TD::randn({1, 2}, 49));
  expect_ad([](const auto& p, const auto& q) { return tx::einsum("i,j->ij", p, q); }, TD::randn({3}, 50),
            TD::randn({2}, 51));
  // Complex: holomorphic, unconjugated.
  expect_ad([](const auto& p, const auto& q, const auto& r) { return tx::einsum("ijk,jl,lkm->im", p, q, r); },
            TZ::randn({2, 3, 2}, 52), TZ::randn({3, 2}, 53), TZ::randn({2, 2, 2}, 54));
  expect_ad(
      [](const auto& p, const auto& q) {
        return tx::tensordot(p, q, {0, 2}, {1, 0});
      },
      TZ::randn({2, 3, 4}, 55), TZ::randn({4, 2}, 56));
  expect_ad([](const auto& p, const auto& q) { return tx::tensordot(p, q, 1); }, a, b);
}

TEST(Einsum, CompiledEqualsEager) {
  auto loss = [](const TD& p, const TD& q, const TD& r) {
    return tx::add(tx::sum(tx::einsum("ijk,jl,lkm->im", p, q, r)), tx::einsum("ii->", tx::einsum("ij,kj->ik", q, q)));
  };
  auto grads = [&](const TD& p, const TD& q, const TD& r) { return tx::value_and_grad(loss, p, q, r); };
  const std::tuple ex{TD::randn({2, 3, 4}, 60), TD::randn({3, 5}, 61), TD::randn({5, 4, 2}, 62)};
  const std::tuple in{TD::randn({2, 3, 4}, 63), TD::randn({3, 5}, 64), TD::randn({5, 4, 2}, 65)};
  tx::ttest::expect_compiled_matches_eager("einsum value and gradient", grads, ex, in);
  tx::ttest::expect_compiled_matches_eager(
      "batched", [](const TD& p, const TD& q) { return tx::einsum("bij,bjk->bik", p, q); },
      std::tuple{TD::randn({3, 2, 4}, 66), TD::randn({3, 4, 2}, 67)},
      std::tuple{TD::randn({3, 2, 4}, 68), TD::randn({3, 4, 2}, 69)});
}

TEST(Einsum, Errors) {
  const TD a = TD::ones({2, 3}), b = TD::ones({3, 4});
  expect_error([&] { tx::einsum("ij,j1->i", a, b); }, "[einsum] invalid character '1'",
               {"'ij,j1->i'", "[2, 3], [3, 4]", "(f64 on cpu)"});
  expect_error([&] { tx::einsum("ij,jk,kl->il", a, b); }, "[einsum] the spec has 3 operand terms but 2 operands");
  expect_error([&] { tx::einsum("ijk,jk->i", a, b); }, "[einsum] operand 0 has rank 2 but its term 'ijk' names 3");
  expect_error([&] { tx::einsum("ij,ik->jk", a, b); }, "[einsum] index 'i' has size 2 in operand 0 but 3 in operand 1");
  expect_error([&] { tx::einsum("ii->i", a); }, "[einsum] index 'i' has size 2 in operand 0 but 3 in operand 0");
  expect_error([&] { tx::einsum("ij,jk->iz", a, b); }, "[einsum] output index 'z' does not appear");
  expect_error([&] { tx::einsum("ij,jk->ii", a, b); }, "[einsum] output index 'i' is repeated");
  expect_error([&] { tx::einsum("...j,jk->k", a, b); }, "[einsum] the operands' '...' spans 1 dimensions");
  expect_error([&] { tx::einsum("ij,jk->...", a, b); }, "[einsum] the output has '...' but no operand");
  expect_error([&] { tx::einsum("....j,jk", a, b); }, "[einsum] '.' outside a '...'");
  expect_error([&] { tx::einsum("...i...,jk", a, b); }, "[einsum] more than one '...'");
  expect_error(
      [&] {
        tx::einsum("...j,...k", TD::ones({2, 3}), TD::ones({3, 4}));
      },
      "[einsum] the '...' dimensions of operand 0 and operand 1 do not broadcast");
  expect_error([&] { tx::einsum("ij-jk", a, b); }, "[einsum] misplaced '-'");
  expect_error([&] { tx::einsum("ij,jk->ik", a, TD()); }, "[einsum] operand 1 is undefined");
  expect_error([&] { tx::einsum("ij,jk->ik", std::vector<TD>{}); }, "[einsum] needs at least one operand");
  expect_error([&] { (void)tx::einsum_path("", std::vector<tx::Shape>{}); },
               "[einsum_path] needs at least one operand");
  expect_error([&] { tx::tensordot(a, b, 3); }, "[tensordot] axes = 3 out of range");
  expect_error([&] { tx::tensordot(a, b, {1}, {1}); }, "[tensordot] axis 1 of a has size 3 but axis 1 of b has 4",
               {"[2, 3]", "f64 on cpu"});
  expect_error([&] { tx::tensordot(a, b, {1, 0}, {0}); }, "[tensordot] 2 axes of a but 1 of b");
  expect_error([&] { tx::tensordot(a, b, {5}, {0}); }, "[tensordot] axis 5 out of range for a");
  expect_error([&] { tx::tensordot(a, a, {1, -1}, {1, 0}); }, "[tensordot] axis -1 of a listed twice");
}

}  // namespace
