// Tensor<T> construction, element access, printing, strides and views.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <tenax/tenax.hpp>

#include "support/messages.hpp"

namespace tx = tenax;
using tx::testing::expect_error;

namespace {

// Whether [p, p + n) lies inside the storage of t.
template <class T, class U>
bool inside_storage(const tx::Tensor<T>& base, const U* p) {
  const auto& s = base.impl()->storage;
  const char* lo = static_cast<const char*>(s->data);
  const char* q = reinterpret_cast<const char*>(p);
  return q >= lo && q < lo + s->bytes;
}

template <class T>
std::string str(const tx::Tensor<T>& t) {
  std::ostringstream o;
  o << t;
  return o.str();
}

}  // namespace

TEST(Smoke, GradOfMulChain) {
  auto x = tx::Tensor<double>::from_col_major({2, 2}, {1, 2, 3, 4});
  auto g = tx::grad([](const tx::Tensor<double>& a) { return tx::sum(tx::exp(a) * a); }, x);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      double v = x.at({i, j});
      EXPECT_NEAR(g.at({i, j}), std::exp(v) * (1 + v), 1e-12);
    }
}

// ---- construction -------------------------------------------------------------------------------

TEST(TensorConstruct, FromColMajor) {
  auto t = tx::Tensor<double>::from_col_major({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(t.shape(), (tx::Shape{2, 3}));
  EXPECT_EQ(t.dim(), 2);
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.size(0), 2);
  EXPECT_EQ(t.size(-1), 3);
  EXPECT_EQ(t.at({0, 0}), 1);
  EXPECT_EQ(t.at({1, 0}), 2);
  EXPECT_EQ(t.at({0, 1}), 3);
  EXPECT_EQ(t.at({1, 2}), 6);
  EXPECT_EQ(t.device(), tx::Device::cpu());
  // From any sized range, converting the element type.
  std::vector<int> v{1, 2, 3};
  auto f = tx::Tensor<float>::from_col_major({3}, v);
  EXPECT_EQ(f.to_vector(), (std::vector<float>{1, 2, 3}));
  expect_error(
      [] {
        tx::Tensor<double>::from_col_major({2, 2}, {1, 2, 3});
      },
      "[from_col_major] shape [2, 2] needs 4 values, got 3");
}

TEST(TensorConstruct, FromRowMajor) {
  auto t = tx::Tensor<double>::from_row_major({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(t.at({0, 0}), 1);
  EXPECT_EQ(t.at({0, 1}), 2);
  EXPECT_EQ(t.at({0, 2}), 3);
  EXPECT_EQ(t.at({1, 0}), 4);
  EXPECT_EQ(t.at({1, 2}), 6);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.to_vector(), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  // Rank 3: last index fastest in the input.
  auto u = tx::Tensor<double>::from_row_major({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::int64_t j = 0; j < 2; ++j)
      for (std::int64_t k = 0; k < 2; ++k) EXPECT_EQ(u.at({i, j, k}), 4 * i + 2 * j + k);
  expect_error([] { tx::Tensor<double>::from_row_major({3}, {1, 2}); }, "[from_row_major] shape [3] needs 3 values");
}

TEST(TensorConstruct, ZerosOnesFull) {
  auto z = tx::Tensor<double>::zeros({3, 2});
  auto o = tx::Tensor<float>::ones({4});
  auto f = tx::Tensor<tx::c128>::full({2, 2}, tx::c128(1, -2));
  EXPECT_EQ(z.to_vector(), std::vector<double>(6, 0.0));
  EXPECT_EQ(o.to_vector(), std::vector<float>(4, 1.0f));
  EXPECT_EQ(f.to_vector(), std::vector<tx::c128>(4, tx::c128(1, -2)));
  auto e = tx::Tensor<double>::zeros({0, 5});
  EXPECT_EQ(e.numel(), 0);
  EXPECT_EQ(e.shape(), (tx::Shape{0, 5}));
  EXPECT_TRUE(e.to_vector().empty());
}

TEST(TensorConstruct, EyeSquareAndRectangular) {
  auto check = [](std::int64_t m, std::int64_t n) {
    auto e = tx::Tensor<double>::eye(m, n);
    ASSERT_EQ(e.shape(), (tx::Shape{m, n}));
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) EXPECT_EQ(e.at({i, j}), i == j ? 1.0 : 0.0) << m << "x" << n;
  };
  check(3, 3);
  check(2, 4);
  check(4, 2);
  check(1, 1);
  check(0, 3);
  auto sq = tx::Tensor<tx::c64>::eye(3);
  EXPECT_EQ(sq.shape(), (tx::Shape{3, 3}));
  EXPECT_EQ(sq.at({2, 2}), tx::c64(1, 0));
  EXPECT_EQ(sq.at({2, 1}), tx::c64(0, 0));
}

TEST(TensorConstruct, Arange) {
  auto a = tx::Tensor<double>::arange(5);
  EXPECT_EQ(a.shape(), (tx::Shape{5}));
  EXPECT_EQ(a.to_vector(), (std::vector<double>{0, 1, 2, 3, 4}));
  auto e = tx::Tensor<float>::arange(0);
  EXPECT_EQ(e.shape(), (tx::Shape{0}));
  EXPECT_EQ(e.numel(), 0);
}

TEST(TensorConstruct, Scalar) {
  auto s = tx::Tensor<double>::scalar(2.5);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.shape(), tx::Shape{});
  EXPECT_EQ(s.item(), 2.5);
  EXPECT_EQ(s.at({}), 2.5);
  EXPECT_TRUE(s.is_contiguous());
}

TEST(TensorConstruct, RandnSeededDeterminismAndStatistics) {
  auto a = tx::Tensor<double>::randn({100, 1000}, 42);
  auto b = tx::Tensor<double>::randn({100, 1000}, 42);
  auto c = tx::Tensor<double>::randn({100, 1000}, 43);
  EXPECT_EQ(a.to_vector(), b.to_vector());
  EXPECT_NE(a.to_vector(), c.to_vector());
  const auto v = a.to_vector();
  const double n = static_cast<double>(v.size());
  double mean = 0, var = 0, within1 = 0;
  for (double x : v) mean += x / n;
  for (double x : v) {
    var += (x - mean) * (x - mean) / n;
    within1 += std::abs(x) < 1 ? 1 / n : 0;
    ASSERT_TRUE(std::isfinite(x));
  }
  // 1e5 samples: the sample mean has sd 0.0032 and the sample variance sd 0.0045.
  EXPECT_NEAR(mean, 0.0, 0.02);
  EXPECT_NEAR(var, 1.0, 0.03);
  EXPECT_NEAR(within1, 0.6827, 0.01);
  // float uses the same stream.
  auto af = tx::Tensor<float>::randn({10}, 42);
  auto ad = tx::Tensor<double>::randn({10}, 42);
  for (std::int64_t i = 0; i < 10; ++i) EXPECT_EQ(af.at({i}), static_cast<float>(ad.at({i})));
  // Complex: E|z|^2 = 1, parts uncorrelated with variance 1/2 each.
  auto z = tx::Tensor<tx::c128>::randn({100000}, 7).to_vector();
  double m2 = 0, vr = 0, vi = 0, cov = 0;
  const double nz = static_cast<double>(z.size());
  for (auto w : z) {
    m2 += std::norm(w) / nz;
    vr += w.real() * w.real() / nz;
    vi += w.imag() * w.imag() / nz;
    cov += w.real() * w.imag() / nz;
  }
  EXPECT_NEAR(m2, 1.0, 0.03);
  EXPECT_NEAR(vr, 0.5, 0.02);
  EXPECT_NEAR(vi, 0.5, 0.02);
  EXPECT_NEAR(cov, 0.0, 0.02);
}

TEST(TensorConstruct, RandSeededDeterminismAndRange) {
  auto a = tx::Tensor<double>::rand({50000}, 3, -2.0, 3.0);
  auto b = tx::Tensor<double>::rand({50000}, 3, -2.0, 3.0);
  EXPECT_EQ(a.to_vector(), b.to_vector());
  EXPECT_NE(a.to_vector(), tx::Tensor<double>::rand({50000}, 4, -2.0, 3.0).to_vector());
  double mean = 0, lo = 1e9, hi = -1e9;
  for (double x : a.to_vector()) {
    ASSERT_GE(x, -2.0);
    ASSERT_LT(x, 3.0);
    mean += x / 50000;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  EXPECT_NEAR(mean, 0.5, 0.05);  // sd of the mean: 5/sqrt(12 * 5e4) = 0.0065
  EXPECT_LT(lo, -1.99);
  EXPECT_GT(hi, 2.99);
  auto u = tx::Tensor<float>::rand({1000}, 1);
  for (float x : u.to_vector()) {
    EXPECT_GE(x, 0.0f);
    EXPECT_LE(x, 1.0f);
  }
  auto z = tx::Tensor<tx::c64>::rand({1000}, 1, 1.0, 2.0);
  for (auto w : z.to_vector()) {
    EXPECT_GE(w.real(), 1.0f);
    EXPECT_LE(w.real(), 2.0f);
    EXPECT_GE(w.imag(), 1.0f);
    EXPECT_LE(w.imag(), 2.0f);
  }
}

// ---- element access ---------------------------------------------------------------------------

TEST(TensorAccess, AtChecksRankAndBounds) {
  auto t = tx::Tensor<double>::zeros({2, 3});
  expect_error([&] { t.at({0}); }, "[at] index of rank 1 for tensor of shape [2, 3]");
  expect_error([&] { t.at({0, 0, 0}); }, "[at] index of rank 3");
  expect_error([&] { t.at({2, 0}); }, "[at] index 2 out of range in dimension 0 of shape [2, 3]");
  expect_error([&] { t.at({0, 3}); }, "[at] index 3 out of range in dimension 1 of shape [2, 3]");
  expect_error([&] { t.at({-1, 0}); }, "[at] index -1 out of range in dimension 0");
  EXPECT_NO_THROW(t.at({1, 2}));
}

TEST(TensorAccess, Item) {
  EXPECT_EQ(tx::Tensor<double>::full({1, 1, 1}, 3.0).item(), 3.0);
  EXPECT_EQ(tx::Tensor<double>::arange(4).slice(0, 2, 3).item(), 2.0);  // offset view
  expect_error([] { tx::Tensor<double>::zeros({2}).item(); }, "[item] tensor of shape [2] has 2 elements");
  expect_error([] { tx::Tensor<double>::zeros({0}).item(); }, "[item] tensor of shape [0] has 0 elements");
}

TEST(TensorAccess, ToVectorFollowsTheViewsColumnMajorOrder) {
  auto t = tx::Tensor<double>::from_col_major({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(t.to_vector(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(t.mT().to_vector(), (std::vector<double>{1, 3, 5, 2, 4, 6}));
  EXPECT_EQ(t.slice(1, 0, 3, 2).to_vector(), (std::vector<double>{1, 2, 5, 6}));
  EXPECT_EQ(t.slice(0, 1, 2).to_vector(), (std::vector<double>{2, 4, 6}));
}

// ---- printing ---------------------------------------------------------------------------------

TEST(TensorPrint, MatrixRowsAndHeader) {
  auto t = tx::Tensor<double>::from_row_major({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(str(t), "Tensor(f64, shape=[2, 2], cpu)\n  1 2\n  3 4");
  EXPECT_EQ(str(t.mT()), "Tensor(f64, shape=[2, 2], cpu)\n  1 3\n  2 4");
  EXPECT_EQ(str(tx::Tensor<float>::scalar(1.5f)), "Tensor(f32, shape=[], cpu)\n  1.5");
  EXPECT_EQ(str(tx::Tensor<double>::arange(3)), "Tensor(f64, shape=[3], cpu)\n  0\n  1\n  2");
  EXPECT_EQ(str(tx::Tensor<double>()), "Tensor(undefined)");
  EXPECT_EQ(str(tx::Tensor<double>::zeros({0, 2})), "Tensor(f64, shape=[0, 2], cpu)");
  EXPECT_EQ(str(tx::Tensor<tx::c128>::full({1, 1}, tx::c128(1, 2))), "Tensor(c128, shape=[1, 1], cpu)\n  (1,2)");
  EXPECT_EQ(str(tx::Tensor<double>::ones({1}).requires_grad()), "Tensor(f64, shape=[1], cpu, requires_grad)\n  1");
}

TEST(TensorPrint, Batches) {
  auto t = tx::Tensor<double>::from_col_major({1, 2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(str(t), "Tensor(f64, shape=[1, 2, 2], cpu)\n[batch 0]\n  1 2\n[batch 1]\n  3 4");
}

TEST(TensorPrint, SummarisedAndPrecision) {
  // 40 x 30 = 1200 elements > the threshold 1000: the first and last 3 rows and columns.
  const auto t = tx::reshape(tx::Tensor<double>::arange(1200), {40, 30});
  const std::string s = str(t);
  EXPECT_EQ(
      s.rfind("Tensor(f64, shape=[40, 30], cpu)\n  0 40 80 ... 1080 1120 1160\n  1 41 81 ... 1081 1121 1161\n", 0), 0u)
      << s;
  EXPECT_NE(s.find("\n  ... ... ... ... ... ... ...\n  37 77 117 ... 1117 1157 1197"), std::string::npos) << s;
  EXPECT_EQ(s.substr(s.size() - 28), "39 79 119 ... 1119 1159 1199");
  // Batches: the first and last 3 matrices.
  const std::string b = str(tx::Tensor<double>::zeros({2, 2, 300}));
  EXPECT_NE(b.find("[batch 2]\n  0 0\n  0 0\n...\n[batch 297]"), std::string::npos) << b;
  EXPECT_EQ(b.find("[batch 3]"), std::string::npos);
  // Precision (significant digits), restored on the stream afterwards; the threshold is an option.
  const tx::PrintOptions before = tx::print_options();
  tx::set_print_options({3, 4, 1});
  EXPECT_EQ(str(tx::Tensor<double>::full({1}, 3.14159265)), "Tensor(f64, shape=[1], cpu)\n  3.14");
  EXPECT_EQ(str(tx::reshape(tx::Tensor<double>::arange(6), {2, 3})),
            "Tensor(f64, shape=[2, 3], cpu)\n  0 ... 4\n  1 ... 5");
  tx::set_print_options(before);
  std::ostringstream o;
  o.precision(2);
  o << tx::Tensor<double>::full({1}, 3.14159265) << ' ' << 2.71828;
  EXPECT_EQ(o.str(), "Tensor(f64, shape=[1], cpu)\n  3.14159 2.7");
}

// ---- strides, contiguity, views -------------------------------------------------------------

TEST(TensorLayout, ColumnMajorStridesAndContiguity) {
  auto t = tx::Tensor<double>::zeros({2, 3, 4});
  EXPECT_EQ(t.strides(), (tx::Strides{1, 2, 6}));
  EXPECT_EQ(t.offset(), 0);
  EXPECT_TRUE(t.is_contiguous());
  auto tt = t.transpose(0, 2);
  EXPECT_EQ(tt.shape(), (tx::Shape{4, 3, 2}));
  EXPECT_EQ(tt.strides(), (tx::Strides{6, 2, 1}));
  EXPECT_FALSE(tt.is_contiguous());
  auto cols = t.slice(1, 1, 3);  // whole columns of each matrix: not contiguous across the batch
  EXPECT_EQ(cols.strides(), (tx::Strides{1, 2, 6}));
  EXPECT_EQ(cols.offset(), 2);
  EXPECT_FALSE(cols.is_contiguous());
  auto first = t.slice(2, 0, 1);  // the first matrix: contiguous
  EXPECT_TRUE(first.is_contiguous());
  auto row = tx::Tensor<double>::zeros({2, 3}).slice(0, 1, 2);
  EXPECT_EQ(row.shape(), (tx::Shape{1, 3}));
  EXPECT_FALSE(row.is_contiguous());
  auto c = tt.contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.strides(), (tx::Strides{1, 4, 12}));
  // Size-0 and size-1 dimensions keep strides >= 1; empty tensors are contiguous.
  EXPECT_EQ(tx::Tensor<double>::zeros({0, 3}).strides(), (tx::Strides{1, 1}));
  EXPECT_TRUE(tx::Tensor<double>::zeros({0, 3}).is_contiguous());
  EXPECT_TRUE(tx::Tensor<double>::zeros({3, 0, 2}).is_contiguous());
  EXPECT_TRUE(tx::Tensor<double>::zeros({0, 3}).mT().is_contiguous());
  EXPECT_EQ(tx::Tensor<double>::zeros({1, 3}).strides(), (tx::Strides{1, 1}));
}

TEST(TensorLayout, ViewsShareStorage) {
  auto base = tx::Tensor<double>::from_col_major({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  const auto live = tx::allocator_stats().bytes_live;
  auto tr = base.mT();
  auto sl = base.slice(1, 1, 4, 2);
  auto dg = base.diagonal();
  auto ex = base.slice(1, 0, 1).expand({3, 5});
  auto rs = base.reshape({4, 3});
  auto sq = base.unsqueeze(2);
  for (const auto* v : {&tr, &sl, &dg, &ex, &rs, &sq}) {
    EXPECT_TRUE(v->impl()->storage == base.impl()->storage);
    EXPECT_TRUE(inside_storage(base, v->data()));
  }
  EXPECT_EQ(sl.data(), base.data() + 3);
  EXPECT_EQ(dg.strides(), (tx::Strides{4}));
  EXPECT_EQ(dg.to_vector(), (std::vector<double>{0, 4, 8}));
  // No data was copied: only view metadata (from the pool's small-object classes) is live.
  EXPECT_LT(tx::allocator_stats().bytes_live - live, 6 * 1024);
  // A write through the base shows in every view.
  base.mutable_data()[4] = 100;  // element (1, 1)
  EXPECT_EQ(tr.at({1, 1}), 100);
  EXPECT_EQ(sl.at({1, 0}), 100);
  EXPECT_EQ(dg.at({1}), 100);
  EXPECT_EQ(rs.at({0, 1}), 100);
  EXPECT_EQ(sq.at({1, 1, 0}), 100);
}

TEST(TensorLayout, ReshapeOfNonViewableLayoutCopies) {
  auto base = tx::Tensor<double>::from_col_major({2, 3}, {1, 2, 3, 4, 5, 6});
  auto tr = base.mT();  // 3 x 2, strides {2, 1}
  auto flat = tr.reshape({6});
  EXPECT_FALSE(flat.impl()->storage == base.impl()->storage);
  EXPECT_FALSE(inside_storage(base, flat.data()));
  EXPECT_TRUE(flat.is_contiguous());
  EXPECT_EQ(flat.to_vector(), (std::vector<double>{1, 3, 5, 2, 4, 6}));
  base.mutable_data()[0] = -1;  // the copy is independent
  EXPECT_EQ(flat.at({0}), 1);
  // A viewable reshape of the same transposed view (split a dimension) stays a view.
  auto split = tr.reshape({3, 1, 2});
  EXPECT_TRUE(split.impl()->storage == base.impl()->storage);
  EXPECT_EQ(split.at({2, 0, 1}), 6);
  // reshape with -1.
  EXPECT_EQ(base.reshape({-1}).shape(), (tx::Shape{6}));
  EXPECT_EQ(base.reshape({3, -1}).shape(), (tx::Shape{3, 2}));
}

TEST(TensorLayout, RealAndImagOfComplex) {
  auto z = tx::Tensor<tx::c128>::from_col_major({2, 2}, {{1, -1}, {2, 0.5}, {-3, 4}, {0, -2}});
  auto re = tx::real(z);
  auto im = tx::imag(z);
  static_assert(std::is_same_v<decltype(re), tx::Tensor<double>>);
  EXPECT_EQ(re.shape(), z.shape());
  EXPECT_EQ(re.to_vector(), (std::vector<double>{1, 2, -3, 0}));
  EXPECT_EQ(im.to_vector(), (std::vector<double>{-1, 0.5, 4, -2}));
  // imag of a transposed view.
  EXPECT_EQ(tx::imag(z.mT()).to_vector(), (std::vector<double>{-1, 4, 0.5, -2}));
  auto back = tx::complex(re, im);
  EXPECT_EQ(back.to_vector(), z.to_vector());
  // Real input: real is the identity, imag is zero.
  auto r = tx::Tensor<float>::from_col_major({2}, {1.5f, -2});
  EXPECT_EQ(tx::real(r).to_vector(), r.to_vector());
  EXPECT_EQ(tx::imag(r).to_vector(), (std::vector<float>{0, 0}));
  // c64 gives f32 parts.
  auto z32 = tx::Tensor<tx::c64>::full({3}, tx::c64(2, 3));
  static_assert(std::is_same_v<decltype(tx::imag(z32)), tx::Tensor<float>>);
  EXPECT_EQ(tx::imag(z32).to_vector(), (std::vector<float>{3, 3, 3}));
}

TEST(TensorDType, Names) {
  EXPECT_STREQ(tx::dtype_name(tx::DType::Bool), "bool");
  EXPECT_STREQ(tx::dtype_name(tx::DType::I32), "i32");
  EXPECT_STREQ(tx::dtype_name(tx::DType::I64), "i64");
  EXPECT_STREQ(tx::dtype_name(tx::DType::F32), "f32");
  EXPECT_STREQ(tx::dtype_name(tx::DType::F64), "f64");
  EXPECT_STREQ(tx::dtype_name(tx::DType::C64), "c64");
  EXPECT_STREQ(tx::dtype_name(tx::DType::C128), "c128");
  EXPECT_EQ(tx::Tensor<float>().dtype(), tx::DType::F32);
  EXPECT_EQ(tx::Tensor<double>().dtype(), tx::DType::F64);
  EXPECT_EQ(tx::Tensor<tx::c64>().dtype(), tx::DType::C64);
  EXPECT_EQ(tx::Tensor<tx::c128>().dtype(), tx::DType::C128);
  EXPECT_STREQ(tx::dtype_traits<tx::c128>::name, "c128");
  EXPECT_EQ(tx::dtype_size(tx::DType::C128), 16u);
  EXPECT_EQ(tx::dtype_size(tx::DType::F32), 4u);
  EXPECT_EQ(tx::dtype_size(tx::DType::Bool), 1u);
  static_assert(std::is_same_v<tx::real_t<tx::c64>, float>);
  static_assert(tx::is_complex_v<tx::c128> && !tx::is_complex_v<double>);
}
