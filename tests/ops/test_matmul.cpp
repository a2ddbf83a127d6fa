// matmul: 2-D, batched and broadcast batches (trailing), strided/transposed operands handed to
// BLAS, complex, empty and k = 0 shapes, and shape errors.
#include <gtest/gtest.h>

#include <climits>
#include <complex>
#include <initializer_list>
#include <tuple>
#include <vector>

#include "support/gradcheck.hpp"

namespace tx = tenax;
using tx::Shape;
using tx::Tensor;
using tx::testing::expect_layout_invariant;
using tx::testing::noncontiguous;
using C = std::complex<double>;

namespace {

auto mm = [](const auto& a, const auto& b) { return tx::matmul(a, b); };

// Naive triple loop for rank-2 operands.
template <class T>
std::vector<T> naive(const Tensor<T>& a, const Tensor<T>& b) {
  const std::int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  std::vector<T> c(static_cast<std::size_t>(m * n), T(0));
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t p = 0; p < k; ++p) c[i + m * j] += a.at({i, p}) * b.at({p, j});
  return c;
}

template <class T>
void expect_naive(const Tensor<T>& a, const Tensor<T>& b) {
  const auto c = tx::matmul(a, b);
  ASSERT_EQ(c.shape(), (Shape{a.size(0), b.size(1)}));
  tx::testing::expect_close(tx::testing::values(c),
                            tx::testing::values(Tensor<T>::from_col_major(c.shape(), naive(a, b))), 1e-14,
                            "matmul vs naive");
}

// Slice b of the trailing batch dimension of a rank-3 tensor (size-1 dimensions broadcast).
template <class T>
Tensor<T> batch(const Tensor<T>& x, std::int64_t b) {
  if (x.dim() == 2) return x;
  return tx::squeeze(tx::slice(x, 2, x.size(2) == 1 ? 0 : b, (x.size(2) == 1 ? 0 : b) + 1), 2);
}

}  // namespace

TEST(Matmul, TwoDimensional) {
  for (auto [m, k, n] : std::initializer_list<std::tuple<std::int64_t, std::int64_t, std::int64_t>>{
           {3, 4, 2}, {4, 4, 4}, {5, 2, 3}, {2, 5, 1}, {1, 3, 4}, {1, 1, 1}}) {
    SCOPED_TRACE(::testing::Message() << m << " x " << k << " x " << n);
    const auto a = Tensor<double>::randn({m, k}, 1), b = Tensor<double>::randn({k, n}, 2);
    expect_naive(a, b);
    TENAX_CHECK_GRADS(mm, a, b);
    const auto za = Tensor<C>::randn({m, k}, 3), zb = Tensor<C>::randn({k, n}, 4);
    expect_naive(za, zb);
    TENAX_CHECK_GRADS(mm, za, zb);
  }
  // One operand constant: the rule's single-input paths.
  const auto a = Tensor<C>::randn({3, 4}, 5), b = Tensor<C>::randn({4, 2}, 6);
  TENAX_CHECK_GRADS([&](const auto& x) { return tx::matmul(x, tx::cast<tx::testing::scalar_of<decltype(x)>>(b)); }, a);
  TENAX_CHECK_GRADS([&](const auto& y) { return tx::matmul(tx::cast<tx::testing::scalar_of<decltype(y)>>(a), y); }, b);
  // A product with itself: A A.
  TENAX_CHECK_GRADS([](const auto& x) { return tx::matmul(x, x); }, Tensor<C>::randn({3, 3}, 7));
}

TEST(Matmul, Batched) {
  // (m, k, batch) x (k, n, batch) equals the loop over the batch.
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{3, 4, 5}, {4, 2, 5}}, {{3, 4, 1}, {4, 2, 5}}, {{3, 4}, {4, 2, 5}}, {{3, 4, 5}, {4, 2}}, {{3, 4, 5}, {4, 2, 1}}};
  std::uint64_t seed = 1;
  for (const auto& [sa, sb] : cases) {
    SCOPED_TRACE(::testing::Message() << sa << " x " << sb);
    const auto a = Tensor<double>::randn(sa, ++seed), b = Tensor<double>::randn(sb, ++seed);
    const auto c = tx::matmul(a, b);
    ASSERT_EQ(c.shape(), (Shape{3, 2, 5}));
    for (std::int64_t i = 0; i < 5; ++i)
      tx::testing::expect_close(tx::testing::values(batch(c, i)),
                                tx::testing::values(tx::matmul(batch(a, i), batch(b, i))), 0,
                                "batch " + std::to_string(i));
    TENAX_CHECK_GRADS(mm, a, b);
    const auto za = Tensor<C>::randn(sa, ++seed), zb = Tensor<C>::randn(sb, ++seed);
    TENAX_CHECK_GRADS(mm, za, zb);
  }
  // Two batch dimensions, broadcast against each other.
  const auto a = Tensor<double>::randn({2, 3, 4, 1}, 20), b = Tensor<double>::randn({3, 2, 1, 3}, 21);
  EXPECT_EQ(tx::matmul(a, b).shape(), (Shape{2, 2, 4, 3}));
  TENAX_CHECK_GRADS(mm, a, b);
}

TEST(Matmul, StridedOperandsMatchContiguous) {
  // Transposed views reach gemm as 'T' without a copy; other strides are copied first. Either
  // way the values and gradients equal those of contiguous operands.
  const auto at = Tensor<double>::randn({4, 3}, 1).mT();                    // (3, 4), row-major layout
  const auto bt = Tensor<double>::randn({2, 4}, 2).mT();                    // (4, 2)
  const auto as = noncontiguous(Tensor<double>::randn({3, 4}, 3));          // strides (2, 6)
  const auto bs = tx::slice(Tensor<double>::randn({4, 6}, 4), 1, 0, 6, 3);  // column stride 8
  for (const auto& [a, b] : {std::pair{at, bt}, std::pair{as, bt}, std::pair{at, bs}, std::pair{as, bs}}) {
    EXPECT_FALSE(a.is_contiguous());
    EXPECT_FALSE(b.is_contiguous());
    expect_naive(a, b);
    tx::testing::expect_close(tx::testing::values(tx::matmul(a, b)),
                              tx::testing::values(tx::matmul(tx::clone(a), tx::clone(b))), 1e-15, "view vs contiguous");
    expect_layout_invariant(mm, a, b);
    TENAX_CHECK_GRADS(mm, a, b);
  }
  // Batched transposed views (batch stride is not m*k), and a complex conjugate transpose.
  const auto ab = tx::transpose(Tensor<C>::randn({4, 3, 2}, 5), 0, 1);
  const auto bb = tx::permute(Tensor<C>::randn({2, 4, 2}, 6), {1, 0, 2});
  expect_layout_invariant(mm, ab, bb);
  TENAX_CHECK_GRADS(mm, ab, bb);
  const auto q = Tensor<C>::randn({4, 3}, 7);
  tx::testing::expect_close(tx::testing::values(tx::matmul(q.mH(), Tensor<C>::eye(4))),
                            tx::testing::values(tx::contiguous(q.mH())), 0, "A^H B");
  // Expanded (stride-0) operands.
  const auto row = Tensor<double>::randn({1, 4}, 8).expand({3, 4});
  expect_naive(row, Tensor<double>::randn({4, 2}, 9));
  TENAX_CHECK_GRADS(mm, row, Tensor<double>::randn({4, 2}, 9));
}

// A view whose leading dimension does not fit the providers' 32-bit int is copied, not handed
// to gemm truncated (such a view needs more memory than a test can take, so the layout rule).
TEST(Matmul, LeadingDimensionsPastInt32AreCopied) {
  const std::int64_t big = std::int64_t{INT_MAX} + 1;
  EXPECT_TRUE(tx::detail::gemm_operand(4, 3, 1, INT_MAX).ok);
  EXPECT_FALSE(tx::detail::gemm_operand(4, 3, 1, big).ok);
  EXPECT_FALSE(tx::detail::gemm_operand(4, 3, big, 1).ok);
  EXPECT_TRUE(tx::detail::gemm_operand(4, 3, 3, 1).ok);
  EXPECT_EQ(tx::detail::gemm_operand(4, 3, 3, 1).trans, tx::cpu::Trans::T);
}

TEST(Matmul, EmptyAndZeroInnerDimension) {
  // k = 0: the product is a zero matrix; gradients are empty.
  const auto a = Tensor<double>::randn({3, 0}, 1), b = Tensor<double>::randn({0, 2}, 2);
  const auto c = tx::matmul(a, b);
  EXPECT_EQ(c.shape(), (Shape{3, 2}));
  EXPECT_EQ(c.to_vector(), std::vector<double>(6, 0.0));
  TENAX_CHECK_GRADS(mm, a, b);
  TENAX_CHECK_GRADS(mm, Tensor<C>::randn({3, 0, 2}, 3), Tensor<C>::randn({0, 2, 2}, 4));
  // m = 0, n = 0, empty batch.
  EXPECT_EQ(tx::matmul(Tensor<double>::randn({0, 4}, 5), Tensor<double>::randn({4, 2}, 6)).shape(), (Shape{0, 2}));
  TENAX_CHECK_GRADS(mm, Tensor<double>::randn({0, 4}, 5), Tensor<double>::randn({4, 2}, 6));
  TENAX_CHECK_GRADS(mm, Tensor<double>::randn({3, 4}, 7), Tensor<double>::randn({4, 0}, 8));
  EXPECT_EQ(tx::matmul(Tensor<double>::randn({3, 4, 0}, 9), Tensor<double>::randn({4, 2}, 10)).shape(),
            (Shape{3, 2, 0}));
  TENAX_CHECK_GRADS(mm, Tensor<double>::randn({3, 4, 0}, 9), Tensor<double>::randn({4, 2}, 10));
}

TEST(Matmul, ShapeErrors) {
  const auto a = Tensor<double>::zeros({3, 4});
  EXPECT_TENAX_ERROR(tx::matmul(a, Tensor<double>::zeros({3, 2})), "matmul");
  EXPECT_TENAX_ERROR(tx::matmul(a, Tensor<double>::zeros({4})), "matmul");
  EXPECT_TENAX_ERROR(tx::matmul(Tensor<double>::zeros({4}), a), "matmul");
  EXPECT_TENAX_ERROR(tx::matmul(Tensor<double>::zeros({}), a), "matmul");
  EXPECT_TENAX_ERROR(tx::matmul(Tensor<double>::zeros({3, 4, 2}), Tensor<double>::zeros({4, 2, 3})), "matmul");
  EXPECT_TENAX_ERROR(tx::matmul(Tensor<double>::zeros({3, 4, 2, 2}), Tensor<double>::zeros({4, 2, 2, 3})), "matmul");
}
