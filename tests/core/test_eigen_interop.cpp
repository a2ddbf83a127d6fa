// Eigen interop: zero-copy maps of 2-D CPU tensors (any strides) and copies from Eigen expressions.
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <string>

#include <tenax/interop/eigen.hpp>
#include <tenax/tenax.hpp>

#include "support/messages.hpp"

namespace tx = tenax;
using tx::testing::expect_error;

namespace {

// Element (i, j) of a 2-D tensor compared with an Eigen map, everywhere.
template <class T, class M>
void expect_same(const tx::Tensor<T>& t, const M& m) {
  ASSERT_EQ(t.dim(), 2);
  ASSERT_EQ(m.rows(), t.shape()[0]);
  ASSERT_EQ(m.cols(), t.shape()[1]);
  for (std::int64_t i = 0; i < t.shape()[0]; ++i)
    for (std::int64_t j = 0; j < t.shape()[1]; ++j) EXPECT_EQ(m(i, j), t.at({i, j})) << "at (" << i << ", " << j << ")";
}

// A tensor body that claims to live on a CUDA device (no storage): enough to test the device check.
tx::Tensor<double> fake_cuda_tensor() {
  tx::detail::ImplPtr p(tx::detail::TensorImpl::create());
  p->dtype = tx::DType::F64;
  p->device = tx::Device::cuda(0);
  p->shape = tx::Shape{2, 2};
  p->strides = tx::col_major_strides(p->shape);
  return tx::Tensor<double>(p);
}

// Mapping a temporary is refused at compile time: the map would outlive the storage.
template <class X>
concept CanMapRvalue = requires {
  tx::as_eigen(std::declval<X&&>());
};
template <class X>
concept CanMapRvalueMut = requires {
  tx::as_eigen_mut(std::declval<X&&>());
};
static_assert(!CanMapRvalue<tx::Tensor<double>>);
static_assert(!CanMapRvalueMut<tx::Tensor<double>>);
static_assert(requires(const tx::Tensor<double>& t) { tx::as_eigen(t); });
static_assert(requires(const tx::Tensor<double>& t) { tx::as_eigen_mut(t); });

}  // namespace

TEST(EigenInterop, ConstMapOfContiguousTensorIsZeroCopy) {
  auto t = tx::Tensor<double>::from_row_major({2, 3}, {1, 2, 3, 4, 5, 6});
  auto m = tx::as_eigen(t);
  static_assert(std::is_same_v<decltype(m), tx::EigenConstMap<double>>);
  EXPECT_EQ(m.data(), t.data());
  EXPECT_EQ(m.innerStride(), 1);
  EXPECT_EQ(m.outerStride(), 2);
  expect_same(t, m);
  EXPECT_EQ(m(1, 2), 6.0);
  EXPECT_EQ(m(0, 1), 2.0);
}

TEST(EigenInterop, MapOfTransposedViewUsesStrides) {
  auto t = tx::Tensor<double>::from_row_major({2, 3}, {1, 2, 3, 4, 5, 6});
  auto tt = t.mT();  // 3 x 2 view, strides {2, 1}
  ASSERT_FALSE(tt.is_contiguous());
  auto m = tx::as_eigen(tt);
  EXPECT_EQ(m.data(), t.data());
  EXPECT_EQ(m.rows(), 3);
  EXPECT_EQ(m.cols(), 2);
  EXPECT_EQ(m.innerStride(), 2);
  EXPECT_EQ(m.outerStride(), 1);
  expect_same(tt, m);
  EXPECT_EQ(m(2, 1), 6.0);
  EXPECT_EQ(m(2, 0), 3.0);
  // Eigen sees the same matrix as the transpose of the base map.
  EXPECT_TRUE(m.isApprox(tx::as_eigen(t).transpose(), 0.0));
}

TEST(EigenInterop, MapOfSteppedSliceAndOffset) {
  auto base = tx::Tensor<double>::from_col_major(
      {5, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19});
  auto v = base.slice(0, 1, 5, 2).slice(1, 1, 4);  // rows 1, 3; columns 1..3
  ASSERT_EQ(v.shape(), (tx::Shape{2, 3}));
  auto m = tx::as_eigen(v);
  EXPECT_EQ(m.data(), base.data() + 1 + 5);
  EXPECT_EQ(m.innerStride(), 2);
  EXPECT_EQ(m.outerStride(), 5);
  expect_same(v, m);
  EXPECT_EQ(m(0, 0), 6.0);
  EXPECT_EQ(m(1, 2), 18.0);
}

TEST(EigenInterop, ConstMapOfBroadcastView) {
  auto col = tx::Tensor<double>::from_col_major({3, 1}, {1, 2, 3});
  auto e = col.expand({3, 4});
  ASSERT_EQ(e.strides()[1], 0);
  auto m = tx::as_eigen(e);
  EXPECT_EQ(m.outerStride(), 0);
  expect_same(e, m);
  EXPECT_DOUBLE_EQ(m.sum(), 4 * (1 + 2 + 3));
}

TEST(EigenInterop, MutableMapWritesThroughToEveryView) {
  auto t = tx::Tensor<double>::zeros({3, 2});
  auto view = t.mT();
  auto w = tx::as_eigen_mut(t);
  static_assert(std::is_same_v<decltype(w), tx::EigenMap<double>>);
  EXPECT_EQ(w.data(), t.data());
  w(2, 1) = 7.0;
  w.col(0).setConstant(-1.0);
  EXPECT_EQ(t.at({2, 1}), 7.0);
  EXPECT_EQ(t.at({1, 0}), -1.0);
  EXPECT_EQ(view.at({1, 2}), 7.0);
  EXPECT_EQ(view.at({0, 0}), -1.0);
  EXPECT_EQ(t.at({0, 1}), 0.0);

  // A writable map of a strided view writes only the viewed elements.
  auto base = tx::Tensor<double>::zeros({4, 4});
  auto rows02 = base.slice(0, 0, 4, 2).mT();  // 4 x 2 view of rows 0 and 2
  auto wv = tx::as_eigen_mut(rows02);
  ASSERT_EQ(wv.rows(), 4);
  ASSERT_EQ(wv.cols(), 2);
  wv.setOnes();
  for (std::int64_t i = 0; i < 4; ++i)
    for (std::int64_t j = 0; j < 4; ++j) EXPECT_EQ(base.at({i, j}), i % 2 == 0 ? 1.0 : 0.0);
}

TEST(EigenInterop, MutableMapRejectsOverlappingLayout) {
  auto col = tx::Tensor<double>::from_col_major({3, 1}, {1, 2, 3});
  auto wide = col.expand({3, 4});
  expect_error([&] { tx::as_eigen_mut(wide); }, "[as_eigen_mut]");
  // Stride 0 along a dimension of size 1 is harmless.
  auto one = tx::Tensor<double>::from_col_major({1}, {5}).expand({1, 1});
  auto w = tx::as_eigen_mut(one);
  w(0, 0) = 6;
  EXPECT_EQ(one.item(), 6.0);
}

TEST(EigenInterop, RejectsNon2DTensors) {
  auto v = tx::Tensor<double>::arange(4);
  auto c = tx::Tensor<double>::zeros({2, 2, 2});
  auto s = tx::Tensor<double>::scalar(1.0);
  expect_error([&] { tx::as_eigen(v); }, "[as_eigen] needs a 2-D tensor, got shape [4]");
  expect_error([&] { tx::as_eigen(c); }, "[as_eigen] needs a 2-D tensor, got shape [2, 2, 2]");
  expect_error([&] { tx::as_eigen(s); }, "[as_eigen] needs a 2-D tensor, got shape []");
  expect_error([&] { tx::as_eigen_mut(v); }, "[as_eigen_mut] needs a 2-D tensor");
  expect_error([&] { tx::as_eigen_mut(c); }, "[as_eigen_mut] needs a 2-D tensor");
  tx::Tensor<double> undefined;
  expect_error([&] { tx::as_eigen(undefined); }, "[as_eigen] undefined tensor");
}

TEST(EigenInterop, RejectsNonCpuTensors) {
  auto g = fake_cuda_tensor();
  expect_error([&] { tx::as_eigen(g); }, "[as_eigen] needs a CPU tensor, got one on cuda:0");
  expect_error([&] { tx::as_eigen_mut(g); }, "[as_eigen_mut] needs a CPU tensor, got one on cuda:0");
}

TEST(EigenInterop, FromEigenMatrixCopies) {
  Eigen::MatrixXd a(2, 3);
  a << 1, 2, 3, 4, 5, 6;
  auto t = tx::from_eigen(a);
  static_assert(std::is_same_v<decltype(t), tx::Tensor<double>>);
  EXPECT_EQ(t.shape(), (tx::Shape{2, 3}));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.strides(), (tx::Strides{1, 2}));
  EXPECT_NE(static_cast<const void*>(t.data()), static_cast<const void*>(a.data()));
  expect_same(t, a);
  a(0, 0) = 100;  // a copy: later changes to the source do not show
  EXPECT_EQ(t.at({0, 0}), 1.0);
}

TEST(EigenInterop, FromEigenExpressions) {
  Eigen::MatrixXd a(3, 2), b(4, 2);
  a << 1, 2, 3, 4, 5, 6;
  b << 1, 0, 0, 1, 1, 1, 2, -1;
  auto t = tx::from_eigen(a * b.transpose() + Eigen::MatrixXd::Ones(3, 4));
  EXPECT_EQ(t.shape(), (tx::Shape{3, 4}));
  Eigen::MatrixXd ref = a * b.transpose() + Eigen::MatrixXd::Ones(3, 4);
  expect_same(t, ref);
  EXPECT_EQ(t.at({2, 3}), 5.0 * 2 - 6 + 1);

  // Row-major source, a block, a static-size matrix, a vector and a row vector.
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> r(2, 2);
  r << 1, 2, 3, 4;
  auto tr = tx::from_eigen(r);
  EXPECT_EQ(tr.to_vector(), (std::vector<double>{1, 3, 2, 4}));
  auto tb = tx::from_eigen(a.block(1, 0, 2, 2));
  EXPECT_EQ(tb.to_vector(), (std::vector<double>{3, 5, 4, 6}));
  auto ts = tx::from_eigen(Eigen::Matrix3d::Identity());
  EXPECT_EQ(ts.to_vector(), tx::Tensor<double>::eye(3).to_vector());
  Eigen::VectorXd v(3);
  v << 7, 8, 9;
  auto tv = tx::from_eigen(v);
  EXPECT_EQ(tv.shape(), (tx::Shape{3, 1}));
  EXPECT_EQ(tv.to_vector(), (std::vector<double>{7, 8, 9}));
  auto trv = tx::from_eigen(v.transpose());
  EXPECT_EQ(trv.shape(), (tx::Shape{1, 3}));
  EXPECT_EQ(trv.to_vector(), (std::vector<double>{7, 8, 9}));
}

TEST(EigenInterop, FromEigenOtherScalarTypes) {
  Eigen::MatrixXf f(2, 2);
  f << 1.5f, 2.5f, 3.5f, 4.5f;
  auto tf = tx::from_eigen(f);
  static_assert(std::is_same_v<decltype(tf), tx::Tensor<float>>);
  expect_same(tf, f);

  Eigen::MatrixXcd z(2, 1);
  z << std::complex<double>(1, 2), std::complex<double>(-3, 0.5);
  auto tz = tx::from_eigen(z);
  static_assert(std::is_same_v<decltype(tz), tx::Tensor<tx::c128>>);
  expect_same(tz, z);
  auto mz = tx::as_eigen(tz);
  EXPECT_EQ(mz(1, 0), std::complex<double>(-3, 0.5));
  auto tzh = tz.mH();
  EXPECT_TRUE(mz.adjoint().isApprox(tx::as_eigen(tzh), 0.0));

  Eigen::Matrix<std::int32_t, 2, 2> i;
  i << 1, -2, 3, -4;
  auto ti = tx::from_eigen(i);
  static_assert(std::is_same_v<decltype(ti), tx::Tensor<std::int32_t>>);
  expect_same(ti, i);
}

TEST(EigenInterop, EmptyMatrices) {
  auto t = tx::Tensor<double>::zeros({0, 3});
  auto m = tx::as_eigen(t);
  EXPECT_EQ(m.rows(), 0);
  EXPECT_EQ(m.cols(), 3);
  auto e = tx::from_eigen(Eigen::MatrixXd(4, 0));
  EXPECT_EQ(e.shape(), (tx::Shape{4, 0}));
  EXPECT_EQ(e.numel(), 0);
}

TEST(EigenInterop, RoundTripAndAgreementWithMatmul) {
  auto a = tx::Tensor<double>::randn({4, 3}, 1);
  auto b = tx::Tensor<double>::randn({5, 3}, 2);
  auto back = tx::from_eigen(tx::as_eigen(a));
  EXPECT_NE(back.data(), a.data());
  EXPECT_EQ(back.to_vector(), a.to_vector());

  // A transposed operand reaches Eigen as strides, and both products agree.
  auto bt = b.mT();
  auto c = tx::matmul(a, bt);
  Eigen::MatrixXd ref = tx::as_eigen(a) * tx::as_eigen(bt);
  ASSERT_EQ(ref.rows(), 4);
  ASSERT_EQ(ref.cols(), 5);
  for (std::int64_t i = 0; i < 4; ++i)
    for (std::int64_t j = 0; j < 5; ++j) EXPECT_NEAR(c.at({i, j}), ref(i, j), 1e-13);
}

TEST(EigenInterop, MapOfTensorThatRequiresGrad) {
  auto x = tx::Tensor<double>::from_col_major({2, 2}, {1, 2, 3, 4}).requires_grad();
  auto y = x * x;
  EXPECT_TRUE(y.tracks_grad());
  auto m = tx::as_eigen(y);
  EXPECT_EQ(m(1, 1), 16.0);
  EXPECT_EQ(m(1, 0), 4.0);
}
