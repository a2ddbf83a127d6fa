// Indexing and sorting: gather, take_along_axis, index_select, scatter_add, index_add,
// put_along_axis, masked_fill, sort, argsort and topk. Values against direct host loops (duplicates,
// negative indices, strided and transposed operands, every axis, empty index tensors), the gradient
// harness, sort stability and NaN placement, topk against sort, compiled == eager, and errors
// (out-of-range indices at once and from a prepared program, shapes, ranks).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <tuple>
#include <vector>

#include <tenax/tenax.hpp>

#include "support/expect.hpp"
#include "support/gradcheck.hpp"
#include "support/messages.hpp"
#include "trace/trace_support.hpp"

namespace tx = tenax;
using tx::testing::expect_ad;
using tx::testing::expect_error;

namespace {

using TD = tx::Tensor<double>;
using TZ = tx::Tensor<tx::c128>;
using TI = tx::Tensor<std::int64_t>;
using Sh = std::vector<std::int64_t>;

Sh dims(const tx::Shape& s) { return Sh(s.begin(), s.end()); }
std::int64_t count(const Sh& s) { return std::accumulate(s.begin(), s.end(), std::int64_t{1}, std::multiplies<>()); }
// Column-major coordinates of position q, and back.
Sh coords(const Sh& s, std::int64_t q) {
  Sh c(s.size());
  for (std::size_t d = 0; d < s.size(); ++d) c[d] = q % s[d], q /= s[d];
  return c;
}
std::int64_t flat(const Sh& s, const Sh& c) {
  std::int64_t o = 0, st = 1;
  for (std::size_t d = 0; d < s.size(); ++d) o += c[d] * st, st *= s[d];
  return o;
}

// Random indices in [lo, hi) (negative ones count from the end).
TI rand_idx(const tx::Shape& s, std::int64_t lo, std::int64_t hi, std::uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<std::int64_t> u(lo, hi - 1);
  std::vector<std::int64_t> v(static_cast<std::size_t>(tx::numel_of(s)));
  for (auto& e : v) e = u(g);
  return TI::from_col_major(s, v);
}

// The host's gather / scatter-add / put (positions over idx's shape, column-major order).
template <class T>
std::vector<T> host_gather(const tx::Tensor<T>& x, const TI& idx, int axis) {
  const Sh xs = dims(x.shape()), is = dims(idx.shape());
  const auto xv = x.contiguous().to_vector();
  const auto iv = idx.contiguous().to_vector();
  std::vector<T> out(static_cast<std::size_t>(count(is)));
  for (std::int64_t q = 0; q < count(is); ++q) {
    Sh c = coords(is, q);
    std::int64_t v = iv[static_cast<std::size_t>(q)];
    c[static_cast<std::size_t>(axis)] = v < 0 ? v + xs[static_cast<std::size_t>(axis)] : v;
    out[static_cast<std::size_t>(q)] = xv[static_cast<std::size_t>(flat(xs, c))];
  }
  return out;
}
template <class T>
std::vector<T> host_scatter(const tx::Tensor<T>& x, const TI& idx, const tx::Tensor<T>& src, int axis, bool add) {
  const Sh xs = dims(x.shape()), is = dims(idx.shape());
  auto out = x.contiguous().to_vector();
  const auto iv = idx.contiguous().to_vector();
  const auto sv = src.contiguous().to_vector();
  for (std::int64_t q = 0; q < count(is); ++q) {
    Sh c = coords(is, q);
    std::int64_t v = iv[static_cast<std::size_t>(q)];
    c[static_cast<std::size_t>(axis)] = v < 0 ? v + xs[static_cast<std::size_t>(axis)] : v;
    T& o = out[static_cast<std::size_t>(flat(xs, c))];
    o = add ? o + sv[static_cast<std::size_t>(q)] : sv[static_cast<std::size_t>(q)];
  }
  return out;
}

template <class T>
void expect_values(const tx::Tensor<T>& got, const tx::Shape& shape, const std::vector<T>& want,
                   const std::string& what) {
  ASSERT_EQ(got.shape(), shape) << what;
  EXPECT_EQ(got.contiguous().to_vector(), want) << what;
}

TEST(Index, GatherEveryAxisDuplicatesNegativeAndStrided) {
  const TD x = TD::randn({3, 4, 5}, 1);
  const TD xt = tx::permute(TD::randn({4, 3, 5}, 2), {1, 0, 2});  // 3 x 4 x 5, not contiguous
  for (int axis = 0; axis < 3; ++axis) {
    const std::int64_t n = x.shape()[axis];
    tx::Shape is{2, 3, 4};
    is[axis] = 6;  // more positions than the axis holds: duplicates
    const TI idx = rand_idx(is, -n, n, 10 + axis);
    expect_values(tx::gather(x, axis, idx), is, host_gather(x, idx, axis), "gather axis " + std::to_string(axis));
    expect_values(tx::gather(xt, axis, idx), is, host_gather(xt, idx, axis), "transposed x");
    // A transposed index tensor.
    tx::Shape ts = is;
    std::swap(ts[0], ts[2]);
    const TI it = tx::permute(rand_idx(ts, -n, n, 20 + axis), {2, 1, 0});
    ASSERT_EQ(it.shape(), is);
    expect_values(tx::gather(xt, axis, it), is, host_gather(xt, it, axis), "transposed idx");
    // Every dtype is a bit copy.
    const tx::Tensor<tx::c128> z = tx::complex(x, tx::neg(x));
    expect_values(tx::gather(z, axis, idx), is, host_gather(z, idx, axis), "complex");
    const tx::Tensor<std::int32_t> xi = tx::cast<std::int32_t>(tx::mul(x, 100.0));
    expect_values(tx::gather(xi, axis, idx), is, host_gather(xi, idx, axis), "int32");
    const tx::Tensor<bool> xb = tx::gt(x, TD::zeros({}));
    expect_values(tx::gather(xb, axis, idx), is, host_gather(xb, idx, axis), "bool");
  }
  // Empty index tensors and an empty x with an empty index.
  EXPECT_EQ(tx::gather(x, 1, TI::zeros({3, 0, 5})).shape(), (tx::Shape{3, 0, 5}));
  EXPECT_EQ(tx::gather(TD::zeros({0, 2}), 1, TI::zeros({0, 2})).shape(), (tx::Shape{0, 2}));
  // A 1-D gather.
  const TD v = TD::from_col_major({4}, {10, 20, 30, 40});
  EXPECT_EQ(tx::gather(v, 0, TI::from_col_major({5}, {3, -1, 0, 0, -4})).to_vector(),
            (std::vector<double>{40, 40, 10, 10, 10}));
}

TEST(Index, TakeAlongAxisBroadcastsAndIndexSelect) {
  // x 3 x 1 x 2 and idx 2 x 4 x 1: result 2 x 4 x 2.
  const TD x = TD::randn({3, 1, 2}, 3);
  const TI idx = rand_idx({2, 4, 1}, -3, 3, 4);
  const TD r = tx::take_along_axis(x, idx, 0);
  const TD xb = tx::contiguous(tx::broadcast_to(x, {3, 4, 2}));
  const TI ib = tx::contiguous(tx::broadcast_to(idx, {2, 4, 2}));
  expect_values(r, {2, 4, 2}, host_gather(xb, ib, 0), "take_along_axis broadcast");
  // NumPy's use: the positions of argsort.
  const TD y = TD::randn({5, 3}, 5);
  const TD s = tx::take_along_axis(y, tx::argsort(y, 0), 0);
  EXPECT_EQ(s.to_vector(), tx::sort(y, 0).first.to_vector());
  // index_select along every axis, with repeats and negatives, strided x.
  const TD z = tx::permute(TD::randn({4, 3, 2}, 6), {1, 0, 2});  // 3 x 4 x 2
  for (int axis = 0; axis < 3; ++axis) {
    const std::int64_t n = z.shape()[axis];
    const TI i1 = rand_idx({5}, -n, n, 30 + axis);
    tx::Shape os = z.shape();
    os[axis] = 5;
    const TI spread = tx::contiguous(tx::broadcast_to(tx::reshape(i1, axis == 0   ? tx::Shape{5, 1, 1}
                                                                      : axis == 1 ? tx::Shape{1, 5, 1}
                                                                                  : tx::Shape{1, 1, 5}),
                                                      os));
    expect_values(tx::index_select(z, axis, i1), os, host_gather(z, spread, axis),
                  "index_select axis " + std::to_string(axis));
  }
  EXPECT_EQ(tx::index_select(z, 1, TI::zeros({0})).shape(), (tx::Shape{3, 0, 2}));
  // A strided 1-D index.
  const TI every_other = tx::slice(TI::from_col_major({6}, {2, 9, 0, 9, 1, 9}), 0, 0, 6, 2);
  EXPECT_EQ(tx::index_select(TD::from_col_major({3}, {5, 6, 7}), 0, every_other).to_vector(),
            (std::vector<double>{7, 5, 6}));
}

TEST(Index, ScatterAddIndexAddAndPutWithDuplicates) {
  const TD x = TD::randn({3, 4, 2}, 7);
  const TD xt = tx::permute(TD::randn({4, 3, 2}, 8), {1, 0, 2});
  for (int axis = 0; axis < 3; ++axis) {
    const std::int64_t n = x.shape()[axis];
    tx::Shape is{2, 3, 2};
    is[axis] = 5;
    const TI idx = rand_idx(is, -n, n, 40 + axis);
    const TD src = tx::permute(TD::randn({is[2], is[1], is[0]}, 50 + axis), {2, 1, 0});  // strided src
    expect_values(tx::scatter_add(x, axis, idx, src), x.shape(), host_scatter(x, idx, src, axis, true),
                  "scatter_add axis " + std::to_string(axis));
    expect_values(tx::scatter_add(xt, axis, idx, src), x.shape(), host_scatter(xt, idx, src, axis, true),
                  "scatter_add transposed x");
    tx::Shape ps = x.shape();  // put_along_axis: x's extents outside axis
    ps[axis] = 5;
    const TI ip = rand_idx(ps, -n, n, 45 + axis);
    const TD sp = TD::randn(ps, 55 + axis);
    expect_values(tx::put_along_axis(xt, ip, sp, axis), x.shape(), host_scatter(xt, ip, sp, axis, false),
                  "put_along_axis (last wins)");
    const tx::Tensor<std::int64_t> xi = tx::cast<std::int64_t>(tx::mul(x, 100.0));
    const tx::Tensor<std::int64_t> si = tx::cast<std::int64_t>(tx::mul(src, 100.0));
    expect_values(tx::scatter_add(xi, axis, idx, si), x.shape(), host_scatter(xi, idx, si, axis, true), "int64");
    const TZ xz = tx::complex(x, x), sz = tx::complex(src, tx::neg(src));
    expect_values(tx::scatter_add(xz, axis, idx, sz), x.shape(), host_scatter(xz, idx, sz, axis, true), "complex");
    // index_add: the slices of src at a 1-D index with repeats.
    const TI i1 = rand_idx({4}, -n, n, 60 + axis);
    tx::Shape ss = x.shape();
    ss[axis] = 4;
    const TD s1 = TD::randn(ss, 70 + axis);
    const TI spread = tx::contiguous(tx::broadcast_to(tx::reshape(i1, axis == 0   ? tx::Shape{4, 1, 1}
                                                                      : axis == 1 ? tx::Shape{1, 4, 1}
                                                                                  : tx::Shape{1, 1, 4}),
                                                      ss));
    expect_values(tx::index_add(xt, axis, i1, s1), x.shape(), host_scatter(xt, spread, s1, axis, true),
                  "index_add axis " + std::to_string(axis));
  }
  // Duplicates accumulate; the last of several puts wins.
  const TD v = TD::zeros({3});
  EXPECT_EQ(
      tx::scatter_add(v, 0, TI::from_col_major({4}, {1, 1, -2, 0}), TD::from_col_major({4}, {1, 2, 4, 8})).to_vector(),
      (std::vector<double>{8, 7, 0}));
  EXPECT_EQ(tx::index_add(v, 0, TI::from_col_major({3}, {2, 2, 2}), TD::from_col_major({3}, {1, 2, 4})).to_vector(),
            (std::vector<double>{0, 0, 7}));
  EXPECT_EQ(tx::put_along_axis(v, TI::from_col_major({4}, {1, 1, -2, 0}), TD::from_col_major({4}, {1, 2, 4, 8}), 0)
                .to_vector(),
            (std::vector<double>{8, 4, 0}));
  // put_along_axis broadcasts idx to x's other dims and the values to idx's shape.
  const TD m = TD::zeros({3, 2});
  EXPECT_EQ(tx::put_along_axis(m, TI::from_col_major({1, 1}, {2}), TD::full({}, 5.0), 0).to_vector(),
            (std::vector<double>{0, 0, 5, 0, 0, 5}));
  // Empty index tensors leave x as it is.
  EXPECT_EQ(tx::scatter_add(x, 1, TI::zeros({3, 0, 2}), TD::zeros({3, 0, 2})).to_vector(), x.to_vector());
  EXPECT_EQ(tx::put_along_axis(x, TI::zeros({3, 0, 2}), TD::zeros({}), 1).to_vector(), x.to_vector());
  EXPECT_EQ(tx::index_add(x, 2, TI::zeros({0}), TD::zeros({3, 4, 0})).to_vector(), x.to_vector());
}

TEST(Index, MaskedFill) {
  const TD x = TD::randn({3, 4}, 9);
  const tx::Tensor<bool> mask = tx::gt(TD::randn({3, 1}, 10), TD::zeros({}));  // broadcast along dim 1
  const TD r = tx::masked_fill(x, mask, 2.5);
  const std::vector<double> xv = x.to_vector(), rv = r.to_vector();
  const auto mv = mask.to_vector();
  ASSERT_EQ(r.shape(), x.shape());
  for (std::size_t i = 0; i < xv.size(); ++i) EXPECT_EQ(rv[i], mv[i % 3] ? 2.5 : xv[i]);
  EXPECT_EQ(tx::masked_fill(x, mask, TD::full({}, 2.5)).to_vector(), rv);
  const tx::Tensor<std::int32_t> xi = tx::Tensor<std::int32_t>::ones({3, 4});
  EXPECT_EQ(tx::masked_fill(xi, mask, 7).to_vector()[0], mv[0] ? 7 : 1);
}

// Host stable sort of each line along axis (NaN largest).
std::pair<std::vector<double>, std::vector<std::int64_t>> host_sort(const TD& x, int axis, bool desc) {
  const Sh s = dims(x.shape());
  const auto xv = x.contiguous().to_vector();
  std::vector<double> v(xv.size());
  std::vector<std::int64_t> ix(xv.size());
  const std::int64_t n = s[static_cast<std::size_t>(axis)];
  for (std::int64_t q = 0; q < count(s); ++q) {
    Sh c = coords(s, q);
    if (c[static_cast<std::size_t>(axis)] != 0) continue;
    auto at = [&](std::int64_t k) {
      Sh cc = c;
      cc[static_cast<std::size_t>(axis)] = k;
      return flat(s, cc);
    };
    std::vector<std::int64_t> order(static_cast<std::size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
      const double va = xv[static_cast<std::size_t>(at(a))], vb = xv[static_cast<std::size_t>(at(b))];
      if (std::isnan(va) || std::isnan(vb))
        return desc ? std::isnan(va) && !std::isnan(vb) : std::isnan(vb) && !std::isnan(va);
      return desc ? va > vb : va < vb;
    });
    for (std::int64_t k = 0; k < n; ++k) {
      v[static_cast<std::size_t>(at(k))] = xv[static_cast<std::size_t>(at(order[static_cast<std::size_t>(k)]))];
      ix[static_cast<std::size_t>(at(k))] = order[static_cast<std::size_t>(k)];
    }
  }
  return {v, ix};
}

void expect_same_bits(const std::vector<double>& a, const std::vector<double>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i)
    EXPECT_TRUE(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i]))) << what << " at " << i;
}

TEST(Sort, StableNanLastEveryAxisStrided) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  // Ties (rounded values), NaN and infinities, transposed.
  TD x = tx::permute(TD::from_col_major({4, 3, 2},
                                        [&] {
                                          std::vector<double> v;
                                          std::mt19937 g(3);
                                          std::uniform_int_distribution<int> u(0, 5);
                                          for (int i = 0; i < 24; ++i) {
                                            const int k = u(g);
                                            v.push_back(k == 5 ? nan : k == 4 ? -inf : k);
                                          }
                                          return v;
                                        }()),
                     {1, 0, 2});
  for (int axis = 0; axis < 3; ++axis)
    for (bool desc : {false, true}) {
      const auto [v, i] = tx::sort(x, axis, desc);
      const auto [hv, hi] = host_sort(x, axis, desc);
      const std::string what = "axis " + std::to_string(axis) + (desc ? " descending" : " ascending");
      ASSERT_EQ(v.shape(), x.shape());
      expect_same_bits(v.to_vector(), hv, what);
      EXPECT_EQ(i.to_vector(), hi) << what;
      EXPECT_EQ(tx::argsort(x, axis, desc).to_vector(), hi) << what;
    }
  // Stability and NaN placement spelled out.
  const TD y = TD::from_col_major({6}, {2, nan, 1, 2, nan, 1});
  EXPECT_EQ(tx::argsort(y, 0).to_vector(), (std::vector<std::int64_t>{2, 5, 0, 3, 1, 4}));
  EXPECT_EQ(tx::argsort(y, 0, true).to_vector(), (std::vector<std::int64_t>{1, 4, 0, 3, 2, 5}));
  // Integers and bools, a negative axis, empty tensors.
  const tx::Tensor<std::int32_t> xi = tx::Tensor<std::int32_t>::from_col_major({5}, {3, -1, 3, 0, -1});
  EXPECT_EQ(tx::sort(xi, -1).first.to_vector(), (std::vector<std::int32_t>{-1, -1, 0, 3, 3}));
  EXPECT_EQ(tx::sort(xi, 0).second.to_vector(), (std::vector<std::int64_t>{1, 4, 3, 0, 2}));
  const tx::Tensor<bool> xb = tx::Tensor<bool>::from_col_major({3}, {true, false, true});
  EXPECT_EQ(tx::argsort(xb, 0).to_vector(), (std::vector<std::int64_t>{1, 0, 2}));
  EXPECT_EQ(tx::sort(TD::zeros({0, 3}), 0).first.shape(), (tx::Shape{0, 3}));
  EXPECT_EQ(tx::sort(TD::zeros({3, 0}), 0).second.shape(), (tx::Shape{3, 0}));
}

TEST(Sort, TopkMatchesSort) {
  const TD x = TD::randn({5, 3, 2}, 11);
  for (int axis = 0; axis < 3; ++axis)
    for (bool largest : {true, false}) {
      const std::int64_t k = x.shape()[axis] - 1;
      const auto [v, i] = tx::topk(x, k, axis, largest);
      const auto [sv, si] = tx::sort(x, axis, largest);
      EXPECT_EQ(v.to_vector(), tx::contiguous(tx::slice(sv, axis, 0, k)).to_vector());
      EXPECT_EQ(i.to_vector(), tx::contiguous(tx::slice(si, axis, 0, k)).to_vector());
    }
  EXPECT_EQ(tx::topk(x, 0, 1).first.shape(), (tx::Shape{5, 0, 2}));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto [v, i] = tx::topk(TD::from_col_major({4}, {1, nan, 3, 3}), 2, 0);
  EXPECT_TRUE(std::isnan(v.to_vector()[0]));
  EXPECT_EQ(i.to_vector(), (std::vector<std::int64_t>{1, 2}));
}

TEST(Index, Gradients) {
  const TD x = TD::randn({3, 4, 2}, 12);
  const TI idx = rand_idx({5, 4, 2}, -3, 3, 80);  // along axis 0, duplicates
  expect_ad([&](const auto& v) { return tx::gather(v, 0, idx); }, x);
  expect_ad([&](const auto& v) { return tx::gather(v, 1, rand_idx({2, 6, 1}, -4, 4, 81)); }, x);
  expect_ad([&](const auto& v) { return tx::take_along_axis(v, rand_idx({3, 1, 5}, -2, 2, 82), 2); }, x);
  expect_ad([&](const auto& v) { return tx::index_select(v, 2, TI::from_col_major({3}, {1, 1, 0})); }, x);
  const TD src = TD::randn({5, 4, 2}, 13);
  expect_ad([&](const auto& v, const auto& s) { return tx::scatter_add(v, 0, idx, s); }, x, src);
  expect_ad(
      [&](const auto& v, const auto& s) {
        return tx::index_add(v, 1, TI::from_col_major({2}, {3, 3}), s);
      },
      x, TD::randn({3, 2, 2}, 14));
  // put_along_axis with duplicates: only the winning value moves y.
  expect_ad([&](const auto& v, const auto& s) { return tx::put_along_axis(v, idx, s, 0); }, x, src);
  expect_ad([&](const auto& v, const auto& s) { return tx::masked_fill(v, tx::gt(x, TD::zeros({})), s); }, x,
            TD::full({}, 0.5));
  // Complex values.
  const TZ z = TZ::randn({3, 4}, 15);
  const TI iz = rand_idx({2, 4}, -3, 3, 83);
  expect_ad([&](const auto& v, const auto& s) { return tx::scatter_add(v, 0, iz, s); }, z, TZ::randn({2, 4}, 16));
  expect_ad([&](const auto& v) { return tx::gather(v, 0, iz); }, z);
  // A composition of them all (test_cuda's loss on the device).
  const TI i3 = TI::from_col_major({6, 1, 3}, {0, 4, -1, 4, 2, 2, 1, 1, 1, 0, -5, 3, 2, 2, 4, 0, 0, 0});
  expect_ad(
      [&](const auto& a) {
        const auto g = tx::gather(a, 0, i3);
        const auto p = tx::put_along_axis(tx::scatter_add(a, 0, i3, tx::mul(g, g)), i3, g, 0);
        return tx::add(tx::sum(tx::sin(tx::topk(p, 3, 0).first)), tx::sum(tx::index_select(p, 0, i3.reshape({18}))));
      },
      TD::randn({5, 4, 3}, 20));
  // Sorting: distinct values, so the permutation is locally constant.
  expect_ad([](const auto& v) { return tx::sort(v, 1).first; }, TD::randn({3, 5}, 17));
  expect_ad([](const auto& v) { return tx::sort(v, 0, true).first; }, TD::randn({4, 3}, 18));
  expect_ad([](const auto& v) { return tx::topk(v, 2, 0).first; }, TD::randn({5, 3}, 19));
}

TEST(Index, PutGradientGoesToTheWinner) {
  const TD x = TD::zeros({3});
  const TI idx = TI::from_col_major({3}, {1, 1, 2});
  const TD vals = TD::from_col_major({3}, {1, 2, 3});
  const auto [gx, gv] =
      tx::grad([&](const TD& a, const TD& b) { return tx::sum(tx::put_along_axis(a, idx, b, 0)); }, x, vals);
  EXPECT_EQ(gx.to_vector(), (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(gv.to_vector(), (std::vector<double>{0, 1, 1}));
}

TEST(Index, CompiledEqualsEager) {
  auto loss = [](const TD& v, const TI& idx) {
    const TD g = tx::gather(v, 0, idx);
    const TD s = tx::scatter_add(v, 0, idx, tx::mul(g, g));
    const TD p = tx::put_along_axis(s, idx, g, 0);
    const TD t = tx::topk(p, 2, 0).first;
    return tx::add(tx::sum(tx::mul(t, t)), tx::sum(tx::index_select(p, 1, tx::slice(idx, 1, 0, 1).reshape({2}))));
  };
  const TD x0 = TD::randn({3, 4}, 20), x1 = TD::randn({3, 4}, 21);
  const TI i0 = rand_idx({2, 4}, -3, 3, 90), i1 = rand_idx({2, 4}, -3, 3, 91);
  tx::ttest::expect_compiled_matches_eager(
      "value and gradient",
      [&](const TD& v, const TI& idx) { return tx::value_and_grad([&](const TD& w) { return loss(w, idx); }, v); },
      std::tuple{x0, i0}, std::tuple{x1, i1});
  tx::ttest::expect_compiled_matches_eager(
      "sort", [](const TD& v) { return tx::sort(v, 1, true); }, std::tuple{x0}, std::tuple{x1});
  // A prepared program raises for an out-of-range index too.
  const auto prog = tx::compile(tx::trace([](const TD& v, const TI& idx) { return tx::gather(v, 0, idx); }, x0, i0));
  (void)prog(x0, i0);
  (void)prog(x0, i1);  // prepared
  expect_error(
      [&] {
        (void)prog(x0, TI::from_col_major({2, 4}, {0, 1, 2, 3, 0, 0, 0, 0}));
      },
      "[gather]", {"index 3", "position (1, 1)", "axis 0 of length 3"});
}

TEST(Index, Errors) {
  const TD x = TD::ones({3, 4});
  // Out of range, both signs: the op, the index, its position and the axis length.
  expect_error(
      [&] {
        tx::gather(x, 0, TI::from_col_major({1, 2}, {0, 3}));
      },
      "[gather]", {"index 3", "position (0, 1)", "length 3", "valid: -3 to 2"});
  expect_error([&] { tx::gather(x, 1, TI::from_col_major({1, 1}, {-5})); }, "[gather]", {"index -5", "length 4"});
  expect_error([&] { tx::take_along_axis(x, TI::from_col_major({1, 1}, {7}), 0); }, "[take_along_axis]", {"index 7"});
  expect_error(
      [&] {
        tx::index_select(x, 1, TI::from_col_major({3}, {0, 1, 4}));
      },
      "[index_select]", {"index 4", "position 2", "length 4"});
  expect_error(
      [&] {
        tx::scatter_add(x, 0, TI::from_col_major({1, 1}, {-4}), TD::ones({1, 1}));
      },
      "[scatter_add]", {"index -4"});
  expect_error(
      [&] {
        tx::index_add(x, 0, TI::from_col_major({2}, {0, 9}), TD::ones({2, 4}));
      },
      "[index_add]", {"index 9", "position 1"});
  expect_error(
      [&] {
        tx::put_along_axis(x, TI::from_col_major({1, 1}, {3}), TD::ones({}), 0);
      },
      "[put_along_axis]", {"index 3"});
  expect_error([&] { tx::gather(TD::zeros({0, 2}), 0, TI::zeros({1, 2})); }, "[gather]", {"the axis is empty"});
  // Shapes, ranks, axes.
  expect_error([&] { tx::gather(x, 0, TI::zeros({2})); }, "[gather]", {"rank"});
  expect_error([&] { tx::gather(x, 0, TI::zeros({2, 5})); }, "[gather]", {"dimension 1"});
  expect_error([&] { tx::gather(x, 2, TI::zeros({2, 2})); }, "[gather]", {"axis 2"});
  expect_error([&] { tx::take_along_axis(x, TI::zeros({2, 2}), 0); }, "[take_along_axis]", {"dimension 1"});
  expect_error([&] { tx::index_select(x, 0, TI::zeros({2, 1})); }, "[index_select]", {"1-D"});
  expect_error([&] { tx::scatter_add(x, 0, TI::zeros({2, 2}), TD::ones({2, 3})); }, "[scatter_add]", {"src"});
  expect_error([&] { tx::index_add(x, 0, TI::zeros({2}), TD::ones({3, 4})); }, "[index_add]", {"src"});
  expect_error([&] { tx::put_along_axis(x, TI::zeros({2, 2}), TD::ones({}), 0); }, "[put_along_axis]");
  expect_error([&] { tx::put_along_axis(x, TI::zeros({2, 4}), TD::ones({3, 4}), 0); }, "[put_along_axis]", {"values"});
  expect_error([&] { tx::masked_fill(x, tx::Tensor<bool>::ones({3, 5}), 1.0); }, "[masked_fill]", {"mask"});
  expect_error([&] { tx::masked_fill(x, tx::Tensor<bool>::ones({3, 4}), TD::ones({1})); }, "[masked_fill]", {"0-d"});
  expect_error([&] { tx::topk(x, 4, 0); }, "[topk]", {"k = 4"});
  expect_error([&] { tx::sort(x, 2); }, "[sort]", {"axis 2"});
  expect_error([&] { tx::gather(x, 0, TI()); }, "[gather]", {"undefined"});
}

}  // namespace
