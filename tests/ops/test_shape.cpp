// Shape ops and views: values against index arithmetic, and the AD battery (their rules are
// linear re-indexings, so the VJP-vs-JVP identity is the transpose check).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <complex>
#include <vector>

#include "support/gradcheck.hpp"

namespace tx = tenax;
using tx::Shape;
using tx::Tensor;
using tx::testing::expect_layout_invariant;
using tx::testing::noncontiguous;
using C = std::complex<double>;

namespace {

// The AD battery on a real and a complex input of the same shape, and on a view of each.
template <class F>
void both_types(F f, const Shape& s) {
  const auto x = Tensor<double>::randn(s, 11);
  const auto z = Tensor<C>::randn(s, 12);
  TENAX_CHECK_GRADS(f, x);
  TENAX_CHECK_GRADS(f, z);
  TENAX_CHECK_GRADS(f, noncontiguous(x));
  expect_layout_invariant(f, noncontiguous(x));
  expect_layout_invariant(f, noncontiguous(z));
}

// A (3, 4, 2) tensor whose entry (i, j, k) is i + 10 j + 100 k, to read indices off values.
Tensor<double> iota3() {
  Tensor<double> t = Tensor<double>::empty({3, 4, 2});
  for (std::int64_t k = 0; k < 2; ++k)
    for (std::int64_t j = 0; j < 4; ++j)
      for (std::int64_t i = 0; i < 3; ++i) t.mutable_data()[i + 3 * (j + 4 * k)] = double(i + 10 * j + 100 * k);
  return t;
}

bool shares_storage(const tx::detail::ImplPtr& a, const tx::detail::ImplPtr& b) { return a->storage == b->storage; }

}  // namespace

TEST(Shape, TransposeAndPermute) {
  const auto x = iota3();
  const auto t = tx::transpose(x, 0, 1);
  ASSERT_EQ(t.shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(t.at({2, 1, 1}), x.at({1, 2, 1}));
  EXPECT_TRUE(shares_storage(t.impl(), x.impl()));
  EXPECT_EQ(tx::transpose(x, -1, 0).shape(), (Shape{2, 4, 3}));
  const auto p = tx::permute(x, {2, 0, 1});
  ASSERT_EQ(p.shape(), (Shape{2, 3, 4}));
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 4; ++j)
      for (std::int64_t k = 0; k < 2; ++k) EXPECT_EQ(p.at({k, i, j}), x.at({i, j, k}));
  EXPECT_EQ(tx::permute(x, {-1, 0, 1}).to_vector(), p.to_vector());
  both_types([](const auto& v) { return tx::transpose(v, 0, 1); }, {3, 4, 2});
  both_types([](const auto& v) { return tx::transpose(v, 2, 0); }, {3, 4, 2});
  both_types([](const auto& v) { return tx::permute(v, {2, 0, 1}); }, {3, 4, 2});
  both_types([](const auto& v) { return v.mT(); }, {3, 5});
  both_types([](const auto& v) { return v.mH(); }, {3, 5});
  TENAX_CHECK_GRADS([](const auto& v) { return tx::permute(v, {1, 0}); }, Tensor<double>::randn({0, 3}, 1));
  EXPECT_EQ(tx::transpose(Tensor<double>::zeros({0, 3})).shape(), (Shape{3, 0}));
  EXPECT_EQ(Tensor<double>::zeros({3}).mT().shape(), (Shape{3}));  // rank < 2: unchanged
  EXPECT_TENAX_ERROR(tx::permute(x, {0, 1}), "permute");
  EXPECT_TENAX_ERROR(tx::permute(x, {0, 1, 1}), "permute");
  EXPECT_TENAX_ERROR(tx::permute(x, {0, 1, 3}), "permute");
  EXPECT_TENAX_ERROR(tx::transpose(x, 0, 3), "transpose");
  EXPECT_TENAX_ERROR(tx::transpose(Tensor<double>::zeros({3}), 0, 2), "transpose");
}

// A conjugate transpose (a transposing map) of an empty tensor whose other extents are huge
// runs nothing (fuzz_linalg found it writing out of bounds: base64 MkDjf////r8=).
TEST(Shape, EmptyTransposedMapWithHugeExtents) {
  const std::int64_t huge = std::int64_t{1} << 40;
  const auto x = Tensor<std::complex<float>>::zeros({2, huge, 0});
  const auto y = x.mH();
  EXPECT_EQ(y.shape(), (Shape{huge, 2, 0}));
  EXPECT_EQ(y.numel(), 0);
  const auto z = tenax::contiguous(Tensor<double>::zeros({huge, 17, 0}).mT());
  EXPECT_EQ(z.shape(), (Shape{17, huge, 0}));
}

TEST(Shape, Reshape) {
  const auto x = iota3();
  // View case: a contiguous input keeps its storage; column-major element order is kept.
  for (const Shape& s : {Shape{12, 2}, Shape{24}, Shape{2, 3, 4}, Shape{3, 8}, Shape{1, 24, 1}}) {
    const auto y = tx::reshape(x, s);
    EXPECT_EQ(y.shape(), s);
    EXPECT_TRUE(shares_storage(y.impl(), x.impl()));
    EXPECT_EQ(y.to_vector(), x.to_vector());
  }
  EXPECT_EQ(tx::reshape(x, {-1, 4}).shape(), (Shape{6, 4}));
  EXPECT_EQ(tx::reshape(x, {3, -1}).shape(), (Shape{3, 8}));
  // A view of a view that still allows it: splitting the last dimension of a transposed matrix.
  const auto tr = Tensor<double>::randn({4, 6}, 1).mT();  // (6, 4), strides (4, 1)
  const auto tv = tx::reshape(tr, {6, 2, 2});
  EXPECT_TRUE(shares_storage(tv.impl(), tr.impl()));
  EXPECT_EQ(tv.to_vector(), tr.to_vector());
  // Copy case: merging the dimensions of a transposed matrix.
  const auto tc = tx::reshape(tr, {24});
  EXPECT_FALSE(shares_storage(tc.impl(), tr.impl()));
  EXPECT_EQ(tc.to_vector(), tr.to_vector());
  both_types([](const auto& v) { return tx::reshape(v, {2, 12}); }, {3, 4, 2});
  both_types([](const auto& v) { return tx::reshape(v, {4, 3, 2}); }, {3, 4, 2});
  TENAX_CHECK_GRADS([](const auto& v) { return tx::reshape(v, {24}); }, tr);
  TENAX_CHECK_GRADS([](const auto& v) { return tx::reshape(v, {6, 2, 2}); }, tr);
  TENAX_CHECK_GRADS([](const auto& v) { return tx::reshape(v, {3, 8}); }, tr);
  expect_layout_invariant([](const auto& v) { return tx::reshape(v, {24}); }, tr);
  TENAX_CHECK_GRADS([](const auto& v) { return tx::reshape(v, {0, 2}); }, Tensor<double>::randn({2, 0}, 1));
  TENAX_CHECK_GRADS([](const auto& v) { return tx::reshape(v, {1, 1}); }, Tensor<C>::randn({}, 1));
  EXPECT_TENAX_ERROR(tx::reshape(x, {5, 5}), "reshape");
  EXPECT_TENAX_ERROR(tx::reshape(x, {-1, -1}), "reshape");
  EXPECT_TENAX_ERROR(tx::reshape(x, {-2, 12}), "reshape");
  EXPECT_TENAX_ERROR(tx::reshape(x, {-1, 5}), "reshape");
}

TEST(Shape, SqueezeUnsqueezeFlatten) {
  const auto x = Tensor<double>::randn({3, 1, 4}, 1);
  EXPECT_EQ(tx::squeeze(x, 1).shape(), (Shape{3, 4}));
  EXPECT_EQ(tx::squeeze(x, -2).shape(), (Shape{3, 4}));
  EXPECT_EQ(tx::unsqueeze(x, 0).shape(), (Shape{1, 3, 1, 4}));
  EXPECT_EQ(tx::unsqueeze(x, -1).shape(), (Shape{3, 1, 4, 1}));
  EXPECT_EQ(tx::unsqueeze(x, 3).shape(), (Shape{3, 1, 4, 1}));
  EXPECT_EQ(tx::squeeze(x, 1).to_vector(), x.to_vector());
  both_types([](const auto& v) { return tx::squeeze(v, 1); }, {3, 1, 4});
  both_types([](const auto& v) { return tx::unsqueeze(v, 1); }, {3, 4});
  both_types([](const auto& v) { return tx::unsqueeze(v, -1); }, {3, 4});
  both_types([](const auto& v) { return tx::flatten(v); }, {3, 4, 2});
  const auto t = Tensor<double>::randn({4, 3}, 2).mT();
  EXPECT_EQ(tx::flatten(t).to_vector(), t.to_vector());
  TENAX_CHECK_GRADS([](const auto& v) { return tx::flatten(v); }, t);
  TENAX_CHECK_GRADS([](const auto& v) { return tx::flatten(v); }, Tensor<double>::randn({}, 3));
  TENAX_CHECK_GRADS([](const auto& v) { return tx::squeeze(v, 0); }, Tensor<double>::randn({1, 0}, 3));
  EXPECT_EQ(tx::flatten(Tensor<double>::randn({}, 3)).shape(), (Shape{1}));
  EXPECT_TENAX_ERROR(tx::squeeze(x, 0), "squeeze");
  EXPECT_TENAX_ERROR(tx::squeeze(x, 3), "squeeze");
  EXPECT_TENAX_ERROR(tx::unsqueeze(x, 5), "unsqueeze");
}

TEST(Shape, Slice) {
  const auto x = iota3();
  const auto a = tx::slice(x, 1, 1, 4, 2);  // j = 1, 3
  ASSERT_EQ(a.shape(), (Shape{3, 2, 2}));
  EXPECT_TRUE(shares_storage(a.impl(), x.impl()));
  EXPECT_EQ(a.at({2, 1, 1}), 2 + 30 + 100);
  const auto b = tx::slice(x, 1, -3, -1);  // j = 1, 2
  ASSERT_EQ(b.shape(), (Shape{3, 2, 2}));
  EXPECT_EQ(b.at({0, 0, 0}), 10);
  EXPECT_EQ(b.at({0, 1, 0}), 20);
  EXPECT_EQ(tx::slice(x, 0, -10, 10).shape(), x.shape());  // clamped
  EXPECT_EQ(tx::slice(x, 0, 2, 1).shape(), (Shape{0, 4, 2}));
  EXPECT_EQ(tx::slice(x, -1, 1, 2).at({1, 3, 0}), 1 + 30 + 100);
  const auto c = tx::slice(x, 0, 0, 3, 5);  // only i = 0
  EXPECT_EQ(c.shape(), (Shape{1, 4, 2}));
  // Any step, however large (the length must not overflow): element 0 alone.
  const auto big = tx::slice(Tensor<double>::arange(10), 0, 0, 5, std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(big.to_vector(), (std::vector<double>{0}));
  EXPECT_EQ(tx::slice(Tensor<double>::arange(10), 0, 3, 10, std::numeric_limits<std::int64_t>::max() / 2).to_vector(),
            (std::vector<double>{3}));
  TENAX_CHECK_GRADS([](const auto& v) { return tx::slice(v, 0, 1, 4, std::numeric_limits<std::int64_t>::max()); },
                    Tensor<double>::randn({5}, 2));
  both_types([](const auto& v) { return tx::slice(v, 1, 1, 4, 2); }, {3, 4, 2});
  both_types([](const auto& v) { return tx::slice(v, 0, -2, 3); }, {3, 4, 2});
  both_types([](const auto& v) { return tx::slice(tx::slice(v, 1, 3, 0), 2, 0, 2, 3); }, {3, 4, 2});
  TENAX_CHECK_GRADS([](const auto& v) { return tx::slice(v, 0, 2, 1); }, Tensor<double>::randn({3, 4}, 1));
  TENAX_CHECK_GRADS([](const auto& v) { return tx::slice(v, 1, 0, 2); }, Tensor<double>::randn({0, 4}, 1));
  EXPECT_TENAX_ERROR(tx::slice(x, 0, 0, 3, 0), "slice");
  EXPECT_TENAX_ERROR(tx::slice(x, 0, 3, 0, -1), "slice");
  EXPECT_TENAX_ERROR(tx::slice(x, 3, 0, 1), "slice");
}

TEST(Shape, Diagonal) {
  const auto m = Tensor<double>::randn({4, 5}, 1);
  for (std::int64_t off : {0, 1, 3, -1, -3, 5, -4, 9}) {
    SCOPED_TRACE(::testing::Message() << "offset " << off);
    const auto d = tx::diagonal(m, off);
    std::vector<double> want;
    for (std::int64_t i = 0; i < 4; ++i)
      if (i + off >= 0 && i + off < 5) want.push_back(m.at({i, i + off}));
    EXPECT_EQ(d.to_vector(), want);
    auto f = [off](const auto& v) { return tx::diagonal(v, off); };
    TENAX_CHECK_GRADS(f, m);
    TENAX_CHECK_GRADS(f, Tensor<C>::randn({4, 5}, 2));
  }
  // Batched: n x n x batch gives n x batch; swapped dimensions read the transpose.
  const auto x = Tensor<double>::randn({3, 3, 2}, 3);
  const auto d = tx::diagonal(x);
  ASSERT_EQ(d.shape(), (Shape{3, 2}));
  EXPECT_EQ(d.at({2, 1}), x.at({2, 2, 1}));
  EXPECT_EQ(tx::diagonal(x, 1, 1, 0).at({0, 1}), x.at({1, 0, 1}));
  const auto e = tx::diagonal(x, 0, 1, 2);  // dims 1 and 2 -> diag at position 1
  ASSERT_EQ(e.shape(), (Shape{3, 2}));
  EXPECT_EQ(e.at({2, 1}), x.at({2, 1, 1}));
  both_types([](const auto& v) { return tx::diagonal(v); }, {3, 3, 2});
  both_types([](const auto& v) { return tx::diagonal(v, -1, 1, 0); }, {3, 3, 2});
  both_types([](const auto& v) { return tx::diagonal(v, 1, 0, 2); }, {3, 2, 3});
  TENAX_CHECK_GRADS([](const auto& v) { return tx::diagonal(v); }, Tensor<double>::randn({0, 3}, 1));
  EXPECT_TENAX_ERROR(tx::diagonal(Tensor<double>::zeros({3})), "diagonal");
  EXPECT_TENAX_ERROR(tx::diagonal(m, 0, 1, 1), "diagonal");
  EXPECT_TENAX_ERROR(tx::diagonal(m, 0, 0, 2), "diagonal");
}

TEST(Shape, DiagEmbedAndDiag) {
  const auto v = Tensor<double>::randn({3}, 1);
  const auto m = tx::diag_embed(v);
  ASSERT_EQ(m.shape(), (Shape{3, 3}));
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 3; ++j) EXPECT_EQ(m.at({i, j}), i == j ? v.at({i}) : 0.0);
  EXPECT_EQ(tx::diag(v).to_vector(), m.to_vector());
  EXPECT_EQ(tx::diag(m).to_vector(), v.to_vector());
  const auto b = Tensor<double>::randn({3, 2}, 2);
  const auto mb = tx::diag_embed(b);
  ASSERT_EQ(mb.shape(), (Shape{3, 3, 2}));
  EXPECT_EQ(mb.at({1, 1, 1}), b.at({1, 1}));
  EXPECT_EQ(mb.at({0, 1, 1}), 0.0);
  EXPECT_EQ(tx::diagonal(mb).to_vector(), b.to_vector());
  both_types([](const auto& x) { return tx::diag_embed(x); }, {3});
  both_types([](const auto& x) { return tx::diag_embed(x); }, {3, 2});
  both_types([](const auto& x) { return tx::diag(x); }, {4});
  both_types([](const auto& x) { return tx::diag(x); }, {4, 3});
  TENAX_CHECK_GRADS([](const auto& x) { return tx::diag_embed(x); }, Tensor<double>::randn({0, 2}, 1));
  EXPECT_EQ(tx::diag_embed(Tensor<double>::randn({0, 2}, 1)).shape(), (Shape{0, 0, 2}));
  EXPECT_TENAX_ERROR(tx::diag_embed(Tensor<double>::zeros({})), "diag_embed");
  EXPECT_TENAX_ERROR(tx::diag(Tensor<double>::zeros({2, 2, 2})), "diag");
}

TEST(Shape, ExpandAndBroadcastTo) {
  const auto col = Tensor<double>::randn({3, 1}, 1);
  const auto e = tx::expand(col, {3, 4});
  ASSERT_EQ(e.shape(), (Shape{3, 4}));
  EXPECT_TRUE(shares_storage(e.impl(), col.impl()));
  EXPECT_EQ(e.strides()[1], 0);
  EXPECT_EQ(e.at({2, 3}), col.at({2, 0}));
  const auto v = Tensor<double>::randn({3}, 2);
  const auto bv = tx::broadcast_to(v, {3, 4, 2});  // missing trailing dimensions broadcast
  EXPECT_EQ(bv.at({1, 3, 1}), v.at({1}));
  EXPECT_EQ(tx::broadcast_to(Tensor<double>::scalar(2.5), {2, 2}).to_vector(), (std::vector<double>(4, 2.5)));
  both_types([](const auto& x) { return tx::expand(x, {3, 4}); }, {3, 1});
  both_types([](const auto& x) { return tx::broadcast_to(x, {3, 4, 2}); }, {3});
  both_types([](const auto& x) { return tx::broadcast_to(x, {2, 3}); }, {});
  both_types([](const auto& x) { return tx::expand(x, {3, 4, 5}); }, {1, 4, 1});
  TENAX_CHECK_GRADS([](const auto& x) { return tx::expand(x, {0, 3}); }, Tensor<double>::randn({1, 3}, 1));
  TENAX_CHECK_GRADS([](const auto& x) { return tx::expand(x, {0, 3}); }, Tensor<double>::randn({0, 1}, 1));
  EXPECT_TENAX_ERROR(tx::expand(Tensor<double>::zeros({3, 2}), {3, 4}), "expand");
  EXPECT_TENAX_ERROR(tx::expand(Tensor<double>::zeros({3, 4}), {3}), "expand");
  EXPECT_TENAX_ERROR(tx::broadcast_to(Tensor<double>::zeros({3}), {4, 3}), "broadcast_to");
  EXPECT_TENAX_ERROR(tx::broadcast_to(Tensor<double>::zeros({3, 4}), {3, 1}), "broadcast_to");
  EXPECT_TENAX_ERROR(tx::broadcast_to(Tensor<double>::zeros({3, 1, 1}), {3, 1}), "broadcast_to");
}

TEST(Shape, TrilTriu) {
  for (const Shape& s : {Shape{4, 4}, Shape{3, 5}, Shape{5, 3}, Shape{3, 3, 2}}) {
    const auto x = Tensor<double>::randn(s, 1);
    for (std::int64_t k : {0, 1, -1, 2, -4, 6}) {
      SCOPED_TRACE(::testing::Message() << "shape " << s << " k " << k);
      const auto l = tx::tril(x, k), u = tx::triu(x, k);
      const std::int64_t nb = s.size() > 2 ? s[2] : 1;
      for (std::int64_t b = 0; b < nb; ++b)
        for (std::int64_t i = 0; i < s[0]; ++i)
          for (std::int64_t j = 0; j < s[1]; ++j) {
            const double xv = s.size() > 2 ? x.at({i, j, b}) : x.at({i, j});
            const double lv = s.size() > 2 ? l.at({i, j, b}) : l.at({i, j});
            const double uv = s.size() > 2 ? u.at({i, j, b}) : u.at({i, j});
            EXPECT_EQ(lv, j - i <= k ? xv : 0.0);
            EXPECT_EQ(uv, j - i >= k ? xv : 0.0);
          }
      auto fl = [k](const auto& t) { return tx::tril(t, k); };
      auto fu = [k](const auto& t) { return tx::triu(t, k); };
      TENAX_CHECK_GRADS(fl, x);
      TENAX_CHECK_GRADS(fu, x);
    }
  }
  // Diagonals beyond the matrix, to the extremes of int64: everything or nothing kept.
  const auto x43 = Tensor<double>::randn({4, 3}, 3);
  constexpr std::int64_t kLo = std::numeric_limits<std::int64_t>::min(), kHi = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(tx::tril(x43, kHi).to_vector(), x43.to_vector());
  EXPECT_EQ(tx::triu(x43, kLo).to_vector(), x43.to_vector());
  EXPECT_EQ(tx::tril(x43, kLo).to_vector(), Tensor<double>::zeros({4, 3}).to_vector());
  EXPECT_EQ(tx::triu(x43, kHi).to_vector(), Tensor<double>::zeros({4, 3}).to_vector());
  // A strided input (a transposed view, a column slice) gives what its contiguous copy gives.
  const auto y = Tensor<double>::randn({5, 4, 2}, 2);
  for (const auto& v : {y.mT(), tx::slice(y, 1, 1, 3)})
    for (std::int64_t k : {0, 1, -2}) {
      EXPECT_EQ(tx::tril(v, k).to_vector(), tx::tril(tx::contiguous(v), k).to_vector()) << "k " << k;
      EXPECT_EQ(tx::triu(v, k).to_vector(), tx::triu(tx::contiguous(v), k).to_vector()) << "k " << k;
    }
  both_types([](const auto& t) { return tx::tril(t); }, {4, 3, 2});
  both_types([](const auto& t) { return tx::triu(t, 1); }, {3, 4});
  TENAX_CHECK_GRADS([](const auto& t) { return tx::tril(t); }, Tensor<double>::randn({0, 3}, 1));
  TENAX_CHECK_GRADS([](const auto& t) { return tx::triu(t); }, Tensor<double>::randn({3, 3, 0}, 1));
  EXPECT_TENAX_ERROR(tx::tril(Tensor<double>::zeros({3})), "tril");
  EXPECT_TENAX_ERROR(tx::triu(Tensor<double>::zeros({})), "triu");
}

TEST(Shape, ConcatAndStack) {
  const auto a = Tensor<double>::randn({2, 3}, 1), b = Tensor<double>::randn({4, 3}, 2),
             c = Tensor<double>::randn({1, 3}, 3);
  const auto y = tx::concat<double>({a, b, c}, 0);
  ASSERT_EQ(y.shape(), (Shape{7, 3}));
  EXPECT_EQ(y.at({1, 2}), a.at({1, 2}));
  EXPECT_EQ(y.at({5, 0}), b.at({3, 0}));
  EXPECT_EQ(y.at({6, 1}), c.at({0, 1}));
  auto cat0 = [](const auto& p, const auto& q, const auto& r) {
    return tx::concat<tx::testing::scalar_of<decltype(p)>>({p, q, r}, 0);
  };
  auto cat1 = [](const auto& p, const auto& q) { return tx::concat<tx::testing::scalar_of<decltype(p)>>({p, q}, -1); };
  TENAX_CHECK_GRADS(cat0, a, b, c);
  TENAX_CHECK_GRADS(cat0, Tensor<C>::randn({2, 3}, 4), Tensor<C>::randn({4, 3}, 5), Tensor<C>::randn({1, 3}, 6));
  TENAX_CHECK_GRADS(cat0, noncontiguous(a), b.mT().contiguous().mT(), c);
  TENAX_CHECK_GRADS(cat0, a, Tensor<double>::randn({0, 3}, 7), c);  // an empty piece
  TENAX_CHECK_GRADS(cat1, Tensor<double>::randn({3, 2}, 8), Tensor<double>::randn({3, 1}, 9));
  expect_layout_invariant(cat0, noncontiguous(a), b.mT().contiguous().mT(), c);
  TENAX_CHECK_GRADS([](const auto& p) { return tx::concat<tx::testing::scalar_of<decltype(p)>>({p}, 1); }, a);
  // The same tensor twice: cotangents of both copies accumulate.
  TENAX_CHECK_GRADS([](const auto& p) { return tx::concat<tx::testing::scalar_of<decltype(p)>>({p, p}, 1); }, a);

  const auto s = tx::stack<double>({a, a, a}, 1);
  ASSERT_EQ(s.shape(), (Shape{2, 3, 3}));
  EXPECT_EQ(s.at({1, 2, 0}), a.at({1, 0}));
  EXPECT_EQ(tx::stack<double>({a, c.expand({2, 3})}, 2).shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(tx::stack<double>({a, a}, -1).shape(), (Shape{2, 3, 2}));
  auto st = [](int dim) {
    return [dim](const auto& p, const auto& q) { return tx::stack<tx::testing::scalar_of<decltype(p)>>({p, q}, dim); };
  };
  for (int dim : {0, 1, 2, -1}) {
    TENAX_CHECK_GRADS(st(dim), a, Tensor<double>::randn({2, 3}, 10));
    TENAX_CHECK_GRADS(st(dim), Tensor<C>::randn({2, 3}, 11), noncontiguous(Tensor<C>::randn({2, 3}, 12)));
  }
  TENAX_CHECK_GRADS(st(0), Tensor<double>::randn({0, 3}, 13), Tensor<double>::randn({0, 3}, 14));
  // Values are copied, not summed: -0.0 stays -0.0, and inf/NaN stay in their own place.
  const double inf = std::numeric_limits<double>::infinity();
  const auto z = tx::concat<double>(
      {Tensor<double>::full({1}, -0.0), Tensor<double>::full({1}, inf), Tensor<double>::full({1}, -0.0)}, 0);
  const auto zv = z.to_vector();
  EXPECT_TRUE(std::signbit(zv[0]) && zv[0] == 0.0 && std::isinf(zv[1]) && std::signbit(zv[2]));
  // Many pieces (an uneven balanced tree), each a different length, against the pieces; forward and
  // reverse derivatives too.
  std::vector<Tensor<double>> pieces;
  for (int k = 0; k < 11; ++k) pieces.push_back(Tensor<double>::randn({k % 3 + 1, 2}, 20 + k));
  const auto many = tx::concat(pieces, 0);
  std::int64_t row = 0;
  for (const auto& q : pieces) {
    for (std::int64_t r = 0; r < q.shape()[0]; ++r, ++row)
      for (std::int64_t col = 0; col < 2; ++col) EXPECT_EQ(many.at({row, col}), q.at({r, col}));
  }
  EXPECT_EQ(row, many.shape()[0]);
  TENAX_CHECK_GRADS(
      [](const auto& p, const auto& q) {
        using S = tx::testing::scalar_of<decltype(p)>;
        return tx::concat<S>({p, q, p * S(2), q, p, tx::exp(q), p}, 0);
      },
      Tensor<double>::randn({2, 2}, 40), Tensor<double>::randn({1, 2}, 41));
  // Non-floating tensors concatenate too (no AD).
  const auto i = tx::concat<std::int64_t>({Tensor<std::int64_t>::arange(2), Tensor<std::int64_t>::arange(3)}, 0);
  EXPECT_EQ(i.to_vector(), (std::vector<std::int64_t>{0, 1, 0, 1, 2}));
  const auto i3 = tx::concat<std::int64_t>(
      {Tensor<std::int64_t>::arange(1), Tensor<std::int64_t>::arange(2), Tensor<std::int64_t>::arange(3)}, 0);
  EXPECT_EQ(i3.to_vector(), (std::vector<std::int64_t>{0, 0, 1, 0, 1, 2}));
  EXPECT_TENAX_ERROR(tx::concat<double>({}, 0), "concat");
  EXPECT_TENAX_ERROR(tx::concat<double>({a, b}, 1), "concat");
  EXPECT_TENAX_ERROR(tx::concat<double>({a, Tensor<double>::zeros({2})}, 0), "concat");
  EXPECT_TENAX_ERROR(tx::concat<double>({a, b}, 2), "concat");
  EXPECT_TENAX_ERROR(tx::stack<double>({a, b}, 0), "stack");
  EXPECT_TENAX_ERROR(tx::stack<double>({a, a}, 3), "stack");
  EXPECT_TENAX_ERROR(tx::stack<double>({}, 0), "stack");
}

TEST(Shape, Cast) {
  // real <-> complex: dy = cast(dx); the adjoint of real -> complex keeps Re(gy).
  auto to_c = [](const auto& x) {
    using R = tx::testing::scalar_of<decltype(x)>;
    return tx::cast<std::complex<R>>(x);
  };
  auto to_r = [](const auto& x) {
    using Z = tx::testing::scalar_of<decltype(x)>;
    return tx::cast<typename Z::value_type>(x);
  };
  TENAX_CHECK_GRADS(to_c, Tensor<double>::randn({3, 4}, 1));
  TENAX_CHECK_GRADS(to_r, Tensor<C>::randn({3, 4}, 2));
  TENAX_CHECK_GRADS(to_c, noncontiguous(Tensor<double>::randn({3, 4}, 1)));
  TENAX_CHECK_GRADS(to_r, Tensor<C>::randn({0, 4}, 2));
  const auto z = Tensor<C>::from_col_major({2}, {C(1.5, -2), C(-3, 4)});
  EXPECT_EQ(tx::cast<double>(z).to_vector(), (std::vector<double>{1.5, -3}));
  EXPECT_EQ(tx::cast<C>(Tensor<double>::from_col_major({2}, {1, 2})).to_vector(), (std::vector<C>{1, 2}));
  // Precision changes: exact JVP and VJP (the cotangent is cast back).
  const auto x = Tensor<double>::randn({3, 2}, 3);
  const auto d = Tensor<double>::randn({3, 2}, 4);
  const auto [y32, t32] = tx::jvp([](const auto& v) { return tx::cast<float>(v); }, x, d);
  EXPECT_EQ(t32.to_vector(), tx::cast<float>(d).to_vector());
  EXPECT_EQ(y32.to_vector(), tx::cast<float>(x).to_vector());
  const auto w = Tensor<float>::randn({3, 2}, 5);
  const auto [yv, pb] = tx::vjp([](const auto& v) { return tx::cast<float>(v); }, x);
  EXPECT_EQ(pb(w).to_vector(), tx::cast<double>(w).to_vector());
  const auto [yc, pbc] = tx::vjp([](const auto& v) { return tx::cast<tx::c64>(v); }, Tensor<C>::randn({2}, 6));
  const auto wc = Tensor<tx::c64>::randn({2}, 7);
  EXPECT_EQ(pbc(wc).to_vector(), tx::cast<C>(wc).to_vector());
  // f32 -> f64 in a chain, differentiated in float32.
  const auto g = tx::grad([](const auto& v) { return tx::sum(tx::square(tx::cast<double>(v))); },
                          Tensor<float>::from_col_major({2}, {1.5f, -2.0f}));
  EXPECT_EQ(g.to_vector(), (std::vector<float>{3.0f, -4.0f}));
  // To integer and bool types: values only (truncation toward zero, nonzero -> true).
  const auto v = Tensor<double>::from_col_major({4}, {1.7, -1.7, 0.0, 2.0});
  EXPECT_EQ(tx::cast<std::int64_t>(v).to_vector(), (std::vector<std::int64_t>{1, -1, 0, 2}));
  const auto bv = tx::cast<bool>(v).to_vector();
  EXPECT_EQ(std::vector<bool>(bv.begin(), bv.end()), (std::vector<bool>{true, true, false, true}));
  // Out of range saturates and NaN becomes 0 (a plain conversion is undefined behaviour there).
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const auto big = Tensor<double>::from_col_major({7}, {nan, 1e300, -1e300, inf, -inf, 2147483647.9, -2147483648.9});
  EXPECT_EQ(tx::cast<std::int32_t>(big).to_vector(),
            (std::vector<std::int32_t>{0, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN}));
  EXPECT_EQ(tx::cast<std::int64_t>(big).to_vector(),
            (std::vector<std::int64_t>{0, INT64_MAX, INT64_MIN, INT64_MAX, INT64_MIN, 2147483647, -2147483648}));
  const auto big32 = Tensor<float>::from_col_major({3}, {9.3e18f, -9.3e18f, 2147483520.0f});
  EXPECT_EQ(tx::cast<std::int64_t>(big32).to_vector(), (std::vector<std::int64_t>{INT64_MAX, INT64_MIN, 2147483520}));
  EXPECT_EQ(tx::cast<std::int32_t>(big32).to_vector(), (std::vector<std::int32_t>{INT32_MAX, INT32_MIN, 2147483520}));
  EXPECT_EQ(tx::cast<std::int32_t>(Tensor<C>::from_col_major({2}, {C(nan, 1), C(-3e10, 0)})).to_vector(),
            (std::vector<std::int32_t>{0, INT32_MIN}));
  // A complex value is nonzero when either part is.
  const auto zb = tx::cast<bool>(Tensor<C>::from_col_major({3}, {C(0, 1), C(2, 0), C(0, 0)})).to_vector();
  EXPECT_EQ(std::vector<bool>(zb.begin(), zb.end()), (std::vector<bool>{true, true, false}));
  EXPECT_EQ(tx::cast<double>(Tensor<std::int32_t>::arange(3)).to_vector(), (std::vector<double>{0, 1, 2}));
}

TEST(Shape, CloneAndContiguous) {
  const auto x = Tensor<double>::randn({3, 4}, 1);
  const auto c = tx::clone(x);
  EXPECT_FALSE(shares_storage(c.impl(), x.impl()));
  EXPECT_EQ(c.to_vector(), x.to_vector());
  EXPECT_TRUE(shares_storage(tx::contiguous(x).impl(), x.impl()));  // already contiguous: no copy
  const auto t = x.mT();
  const auto tc = tx::contiguous(t);
  EXPECT_TRUE(tc.is_contiguous());
  EXPECT_FALSE(shares_storage(tc.impl(), t.impl()));
  EXPECT_EQ(tc.to_vector(), t.to_vector());
  both_types([](const auto& v) { return tx::clone(v); }, {3, 4});
  both_types([](const auto& v) { return tx::contiguous(v); }, {3, 4});
  TENAX_CHECK_GRADS([](const auto& v) { return tx::contiguous(v); }, t);
  TENAX_CHECK_GRADS([](const auto& v) { return tx::clone(v); }, Tensor<double>::randn({0, 2}, 1));
  EXPECT_EQ(tx::clone(Tensor<std::int64_t>::arange(3)).to_vector(), (std::vector<std::int64_t>{0, 1, 2}));
}

// Transposing copies (the output's inner dimension strides the input; kernels/map.hpp reads such
// inputs in tiles): values against the element-by-element definition for 2-D and 3-D permutations,
// strided and sliced sources, edges that are not multiples of the tile, a converting copy, and 1 or
// 2 threads (the same bits either way).
TEST(Shape, TransposingCopiesInTiles) {
  const int saved = tx::num_threads();
  for (const int threads : {1, 2}) {
    tx::set_num_threads(threads);
    const auto a = tx::Tensor<double>::randn({70, 45}, 3);
    const auto at = tx::contiguous(tx::transpose(a, 0, 1));
    ASSERT_EQ(at.shape(), (tx::Shape{45, 70}));
    for (std::int64_t i = 0; i < 45; ++i)
      for (std::int64_t j = 0; j < 70; ++j) ASSERT_EQ(at.at({i, j}), a.at({j, i}));
    const auto b = tx::Tensor<double>::randn({33, 40, 3, 37}, 4);
    const auto bp = tx::contiguous(tx::permute(b, {3, 2, 0, 1}));
    ASSERT_EQ(bp.shape(), (tx::Shape{37, 3, 33, 40}));
    for (std::int64_t i = 0; i < 33; i += 4)
      for (std::int64_t j = 0; j < 40; j += 3)
        for (std::int64_t k = 0; k < 3; ++k)
          for (std::int64_t l = 0; l < 37; l += 5) ASSERT_EQ(bp.at({l, k, i, j}), b.at({i, j, k, l}));
    // A sliced source (every other row) and a converting copy.
    const auto s = tx::slice(tx::Tensor<double>::randn({130, 50}, 5), 0, 0, 130, 2);
    const auto st = tx::contiguous(tx::transpose(s, 0, 1));
    for (std::int64_t i = 0; i < 50; ++i)
      for (std::int64_t j = 0; j < 65; ++j) ASSERT_EQ(st.at({i, j}), s.at({j, i}));
    const auto f = tx::cast<float>(tx::transpose(a, 0, 1));
    for (std::int64_t i = 0; i < 45; i += 7)
      for (std::int64_t j = 0; j < 70; j += 3) ASSERT_EQ(f.at({i, j}), static_cast<float>(a.at({j, i})));
    const auto c = tx::Tensor<tx::c128>::randn({64, 64}, 6);
    EXPECT_EQ(tx::contiguous(tx::transpose(tx::transpose(c, 0, 1), 0, 1)).to_vector(), c.to_vector());
    // A matmul of a transposed-batch layout (its operands copied to scratch through the same path).
    const auto x = tx::Tensor<double>::randn({40, 40, 40}, 7), y = tx::Tensor<double>::randn({40, 40, 40}, 8);
    const auto xp = tx::permute(x, {1, 2, 0}), yp = tx::permute(y, {1, 2, 0});
    EXPECT_EQ(tx::matmul(xp, yp).to_vector(), tx::matmul(tx::contiguous(xp), tx::contiguous(yp)).to_vector());
  }
  tx::set_num_threads(saved);
}
