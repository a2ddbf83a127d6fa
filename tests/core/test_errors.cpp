// Bad input: every malformed call throws tenax::Error before any kernel runs, and the message
// begins with "[op]" and names the offending shapes.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <tenax/tenax.hpp>

#include "support/messages.hpp"

namespace tx = tenax;
using tx::testing::expect_error;

namespace {

using TD = tx::Tensor<double>;

}  // namespace

TEST(Errors, UndefinedTensorRaises) {
  // A default-constructed Tensor has no body: every use raises instead of dereferencing it.
  const TD u, x = TD::ones({2, 2});
  const char* undefined = "undefined";
  expect_error([&] { (void)u.shape(); }, "[tensor]", {undefined});
  expect_error([&] { (void)u.numel(); }, "[tensor]", {undefined});
  expect_error([&] { (void)u.item(); }, "[item]", {undefined});
  expect_error([&] { (void)u.to_vector(); }, "[", {undefined});
  expect_error([&] { (void)tx::exp(u); }, "[exp]", {undefined});
  expect_error([&] { (void)tx::add(x, u); }, "[add]", {undefined});
  expect_error([&] { (void)tx::add(u, x); }, "[add]", {undefined});
  expect_error([&] { (void)tx::sum(u); }, "[", {undefined});
  expect_error([&] { (void)tx::matmul(x, u); }, "[", {undefined});
  expect_error([&] { (void)tx::reshape(u, {4}); }, "[", {undefined});
  expect_error([&] { (void)tx::linalg::solve(x, u); }, "[", {undefined});
  EXPECT_FALSE(u.defined());
  EXPECT_FALSE(u.tracks_grad());
}

TEST(Errors, IsARuntimeError) {
  try {
    TD::zeros({2}).item();
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[item]", 0), 0u);
  }
}

TEST(Errors, BroadcastMismatchNamesOpAndShapes) {
  const auto a = TD::zeros({2, 3}), b = TD::zeros({3, 2});
  expect_error([&] { tx::add(a, b); }, "[add]", {"[2, 3]", "[3, 2]", "cannot be broadcast"});
  // ... and every input's dtype and shape, and the device.
  expect_error([&] { tx::add(a, b); }, "[add]", {"inputs f64 [2, 3], f64 [3, 2] on cpu"});
  expect_error([&] { tx::where(tx::Tensor<bool>::full({5}, true), a, a); }, "[where]",
               {"[5]", "[2, 3]", "dimension 0: 5 vs 2", "inputs bool [5], f64 [2, 3], f64 [2, 3] on cpu"});
  // Pairwise-compatible inputs that conflict only together are named as given, not as the
  // running broadcast shape: [3, 1] with [1, 4] is [3, 4], which [2, 4] cannot join.
  expect_error(
      [&] {
        tx::where(tx::Tensor<bool>::full({3, 1}, true), TD::zeros({1, 4}), TD::zeros({2, 4}));
      },
      "[where] shapes [3, 1] and [2, 4] cannot be broadcast (dimension 0: 3 vs 2;");
  expect_error([&] { a - b; }, "[sub]", {"[2, 3]", "[3, 2]"});
  expect_error([&] { a* b; }, "[mul]", {"[2, 3]", "[3, 2]"});
  expect_error([&] { a / b; }, "[div]", {"[2, 3]", "[3, 2]"});
  expect_error([&] { tx::maximum(a, b); }, "[maximum]", {"[2, 3]", "[3, 2]"});
  expect_error([&] { tx::minimum(a, b); }, "[minimum]", {"[2, 3]", "[3, 2]"});
  expect_error([&] { tx::where(tx::lt(a, a), a, b); }, "[where]", {"[2, 3]", "[3, 2]"});
  expect_error([&] { tx::lt(a, b); }, "[lt]", {"[2, 3]", "[3, 2]"});
  // Shapes align at dimension 0: [3] broadcasts against [3, 2] but not against [2, 3].
  EXPECT_NO_THROW(tx::add(TD::zeros({3}), b));
  expect_error([&] { tx::add(TD::zeros({3}), a); }, "[add]", {"[3]", "[2, 3]", "dimension 0"});
  // Same failure while recording a tape.
  auto x = a.requires_grad();
  expect_error([&] { tx::mul(x, b); }, "[mul]", {"[2, 3]", "[3, 2]"});
  expect_error([&] { tx::expand(a, {4, 3}); }, "[expand] cannot expand shape [2, 3] to [4, 3]");
  expect_error([&] { tx::broadcast_to(a, {2}); }, "[broadcast_to] cannot broadcast shape [2, 3] to [2]");
}

TEST(Errors, BadAxis) {
  const auto a = TD::zeros({2, 3});
  expect_error([&] { tx::sum(a, {2}); }, "[sum] axis 2 out of range for a f64 tensor of shape [2, 3] on cpu");
  expect_error([&] { tx::sum(a, {-3}); }, "[sum] axis -3 out of range for a f64 tensor of shape [2, 3] on cpu");
  expect_error([&] { tx::sum(a, {0, 0}); }, "[sum] axis 0 listed twice (f64 tensor of shape [2, 3] on cpu)");
  expect_error([&] { tx::sum(a, {1, -1}); }, "[sum] axis -1 listed twice");
  expect_error([&] { tx::mean(a, {5}); }, "[mean] axis 5 out of range");
  expect_error([&] { tx::prod(a, {5}); }, "[prod] axis 5 out of range");
  expect_error([&] { tx::max(a, {5}); }, "[max] axis 5 out of range");
  expect_error([&] { tx::min(a, {-9}); }, "[min] axis -9 out of range");
  expect_error([&] { a.slice(2, 0, 1); }, "[slice] axis 2 out of range for a f64 tensor of shape [2, 3]");
  expect_error([&] { a.slice(0, 0, 1, 0); }, "[slice] step must be positive, got 0");
  expect_error([&] { a.transpose(0, 2); }, "[transpose] axis 2 out of range");
  expect_error([&] { a.permute({0, 0}); }, "[permute] order [0, 0] repeats dimension 0");
  expect_error([&] { a.permute({0}); }, "[permute] order [0] does not match rank 2");
  expect_error([&] { a.squeeze(0); }, "[squeeze] dimension 0 of shape [2, 3] is not 1");
  expect_error([&] { a.squeeze(3); }, "[squeeze] axis 3 out of range");
  expect_error([&] { a.unsqueeze(4); },
               "[unsqueeze] axis 4 out of range for inserting into a f64 tensor of shape [2, 3] on cpu (axes -3 to 2)");
  expect_error([&] { a.diagonal(0, 1, 1); }, "[diagonal] dimensions must differ");
  // Shape-op errors end with the input's dtype and device.
  expect_error([&] { a.squeeze(0); }, "[squeeze] dimension 0 of shape [2, 3] is not 1 (f64 on cpu)");
  expect_error([&] { a.permute({1, 1}); }, "[permute] order [1, 1] repeats dimension 1 of shape [2, 3] (f64 on cpu)");
  expect_error([&] { a.slice(0, 0, 1, -1); }, "[slice] step must be positive, got -1 for shape [2, 3] (f64 on cpu)");
  expect_error([&] { tx::tril(TD::zeros({3})); }, "[tril] needs rank >= 2, got shape [3] (f64 on cpu)");
  expect_error([&] { tx::sum_to(a, {3}); }, "[sum_to] cannot reduce shape [2, 3] to [3] (f64 on cpu)");
  expect_error(
      [&] {
        tx::max(TD::zeros({0, 2}));
      },
      "[max] reduction over an empty dimension of shape [0, 2] (f64 on cpu)");
  expect_error(
      [&] {
        tx::broadcast_to(a, {3, 3});
      },
      "[broadcast_to] cannot broadcast shape [2, 3] to [3, 3] (f64 on cpu)");
  // A vector's transpose: any pair of its axes, and (0, 1), leave it as it is.
  const auto v = TD::arange(3);
  EXPECT_EQ(v.transpose(0, 0).to_vector(), v.to_vector());
  EXPECT_EQ(v.transpose(-1, 0).to_vector(), v.to_vector());
  EXPECT_EQ(v.transpose(0, 1).to_vector(), v.to_vector());
  EXPECT_EQ(v.transpose(1, 0).to_vector(), v.to_vector());
  expect_error([&] { v.transpose(0, 2); }, "[transpose] axes 0 and 2 out of range for shape [3] (f64 on cpu)");
  expect_error([&] { a.size(2); }, "[size] axis 2 out of range for rank 2");
  expect_error([&] { tx::concat<double>({a, a}, 2); }, "[concat] axis 2 out of range");
}

// An undefined (default-constructed) input is reported by the op it was passed to.
TEST(Errors, UndefinedInputsNameTheOp) {
  const TD u;
  const auto a = TD::zeros({2, 2});
  const std::string msg = "undefined input tensor (default-constructed)";
  auto expect_named = [&](const std::string& op, auto&& f) { expect_error(f, "[" + op + "] " + msg); };
  expect_named("isfinite", [&] { tx::isfinite(u); });
  expect_named("imag", [&] { tx::imag(u); });
  expect_named("real", [&] { tx::real(u); });
  expect_named("conj", [&] { tx::conj(u); });
  expect_named("eq", [&] { tx::eq(u, a); });
  expect_named("ge", [&] { tx::ge(a, u); });
  expect_named("sum", [&] { tx::sum(u); });
  expect_named("sum", [&] { tx::sum(u, {0}); });
  expect_named("mean", [&] { tx::mean(u); });
  expect_named("mean", [&] { tx::mean(u, {0}); });
  expect_named("prod", [&] { tx::prod(u); });
  expect_named("max", [&] { tx::max(u, {0}); });
  expect_named("min", [&] { tx::min(u); });
  expect_named("sum_to", [&] { tx::sum_to(u, {1}); });
  expect_named("broadcast_to", [&] { tx::broadcast_to(u, {2}); });
  expect_named("expand", [&] { tx::expand(u, {2}); });
  expect_named("flatten", [&] { tx::flatten(u); });
  expect_named("tril", [&] { tx::tril(u); });
  expect_named("triu", [&] { tx::triu(u); });
  expect_named("diag", [&] { tx::diag(u); });
  expect_named("diag_embed", [&] { tx::diag_embed(u); });
  expect_named("concat", [&] { tx::concat<double>({a, u}, 0); });
  expect_named("stack", [&] { tx::stack<double>({u, a}, 0); });
  expect_named("contiguous", [&] { tx::contiguous(u); });
  expect_named("transpose", [&] { u.mT(); });
  expect_named("permute", [&] { u.permute({1, 0}); });
  expect_named("reshape", [&] { u.reshape({4}); });
  expect_named("slice", [&] { u.slice(0, 0, 1); });
  expect_named("diagonal", [&] { u.diagonal(); });
  expect_named("squeeze", [&] { u.squeeze(0); });
  expect_named("unsqueeze", [&] { u.unsqueeze(0); });
  expect_named("to_device", [&] { u.to(tx::Device::cpu()); });
  expect_named("matmul", [&] { tx::matmul(a, u); });
  expect_named("matmul", [&] { tx::matmul(u, a); });
  expect_named("eigvalsh", [&] { tx::linalg::eigvalsh(u); });
  expect_error([&] { u.item(); }, "[item] undefined tensor");
  expect_error([&] { u.to_vector(); }, "[to_vector] undefined tensor");
  expect_error([&] { u.at({0}); }, "[at] undefined tensor");
  // Function transforms name themselves, and print "undefined" rather than the 0-d shape [].
  const auto x = TD::ones({2});
  auto jitted = tx::jit([](const TD& v) { return tx::exp(v); });
  expect_error([&] { jitted(u); }, "[jit] input 0 is undefined");
  expect_error([&] { tx::vjp([](const TD&) { return TD(); }, x); }, "[vjp] the function returned an undefined tensor");
  expect_error([&] { tx::jvp([](const TD&) { return TD(); }, x, x); },
               "[jvp] the function returned an undefined tensor");
  expect_error([&] { tx::vjp([](const TD& v) { return v; }, u); }, "[vjp] undefined input");
  expect_error([&] { tx::jvp([](const TD& v) { return v; }, u, x); }, "[jvp] tangent of shape [2]",
               {"primal of shape undefined"});
  expect_error([&] { tx::jvp([](const TD& v) { return v; }, x, u); }, "[jvp] tangent of shape undefined");
  expect_error([&] { tx::grad([](const TD&) { return TD(); }, x); }, "[grad]", {"got shape undefined"});
  expect_error([&] { u.backward(); }, "[backward]", {"got shape undefined"});
  expect_error([&] { x.requires_grad().backward(u); }, "[backward] cotangent of shape undefined");
  const auto pullback = tx::vjp([](const TD& v) { return tx::mul(v, v); }, x).second;
  expect_error([&] { pullback(u); }, "[vjp] cotangent of shape undefined");
}

TEST(Errors, NegativeDimensions) {
  expect_error([] { TD::empty({-1}); }, "[empty] negative dimension in shape [-1]");
  expect_error([] { TD::empty({2, -3}); }, "[empty] negative dimension in shape [2, -3]");
  expect_error([] { TD::zeros({2, -3}); }, "[zeros] negative dimension in shape [2, -3]");
  expect_error([] { TD::ones({-2}); }, "[ones] negative dimension in shape [-2]");
  expect_error([] { TD::full({-2}, 1.0); }, "[full] negative dimension in shape [-2]");
  expect_error([] { TD::randn({-2}, 0); }, "[randn] negative dimension in shape [-2]");
  expect_error([] { TD::rand({-2}, 0); }, "[rand] negative dimension in shape [-2]");
  expect_error([] { TD::arange(-1); }, "[arange] negative dimension in shape [-1]");
  expect_error([] { TD::eye(-1); }, "[eye] negative dimension in shape [-1, -1]");
  expect_error([] { TD::eye(2, -2); }, "[eye] negative dimension in shape [2, -2]");
  expect_error([] { TD::eye(-2, 3); }, "[eye] negative dimension in shape [-2, 3]");
  expect_error([] { TD::from_col_major({-1}, {1.0}); }, "[from_col_major] negative dimension in shape [-1]");
  expect_error([] { TD::from_row_major({-1}, {1.0}); }, "[from_row_major] negative dimension in shape [-1]");
}

TEST(Errors, Int64OverflowingShapes) {
  const std::int64_t big = std::int64_t{1} << 32;
  expect_error([&] { TD::empty({big, big}); }, "[empty] shape [4294967296, 4294967296] overflows int64 elements");
  expect_error([&] { TD::zeros({big, big, 2}); }, "[zeros] shape", {"overflows int64 elements"});
  expect_error([&] { TD::ones({INT64_MAX, 2}); }, "[ones] shape", {"overflows int64 elements"});
  // A zero dimension makes a shape empty, but the other dimensions still set the strides: their
  // product must fit in int64, and so must their byte offsets (fuzz finding: INT64_MAX x 0 passed
  // and a kernel then multiplied its stride by the element size).
  EXPECT_EQ(TD::empty({std::int64_t{1} << 40, 0}).numel(), 0);
  expect_error(
      [&] {
        TD::empty({INT64_MAX, 0});
      },
      "[empty] shape [9223372036854775807, 0] overflows int64 byte offsets");
  expect_error([&] { tx::Tensor<tx::c128>::zeros({std::int64_t{1} << 60, 0}); }, "[zeros] shape", {"byte offsets"});
  expect_error([&] { TD::empty({INT64_MAX, 0, 2}); }, "[empty] shape [9223372036854775807, 0, 2] overflows int64");
  expect_error([&] { TD::zeros({big, 0, big}); }, "[zeros] shape [4294967296, 0, 4294967296] overflows int64");
  // The element count fits in int64 but the byte count does not: 2^61 doubles = 2^64 bytes.
  const std::int64_t e61 = std::int64_t{1} << 61;
  expect_error([&] { TD::empty({e61}); }, "[empty] shape [2305843009213693952]", {"f64", "bytes"});
  expect_error([&] { tx::Tensor<tx::c128>::zeros({e61}); }, "[zeros] shape", {"c128", "bytes"});
  // Representable but beyond what the allocator can serve.
  expect_error([&] { TD::empty({std::int64_t{1} << 50}); }, "[allocator]");
  expect_error(
      [&] {
        tx::expand(TD::zeros({1, 1}), {big, big});
      },
      "[expand] shape", {"overflows int64 elements (f64 on cpu)"});
  expect_error([&] { TD::zeros({6}).reshape({big, big}); }, "[reshape] shape [4294967296, 4294967296] overflows");
  // An empty result's strides still span its other dimensions; the errors name the op called.
  const std::int64_t huge = std::int64_t{1} << 62;
  const tx::Shape empty_huge{0, huge, huge}, negative{3, -1}, wide_shape{huge};
  const auto empty = TD::zeros({0, 3}), three = TD::zeros({3});
  expect_error([&] { empty.reshape(empty_huge); }, "[reshape] shape [0, ", {"overflows", "f64 on cpu"});
  expect_error([&] { tx::broadcast_to(three, negative); },
               "[broadcast_to] negative dimension in shape [3, -1] (f64 on cpu)");
  expect_error([&] { tx::expand(three, negative); }, "[expand] negative dimension in shape [3, -1] (f64 on cpu)");
  const std::vector<tx::Tensor<tx::c64>> none;
  expect_error([&] { tx::concat(none, 0); }, "[concat] needs at least one tensor (c64)");
  expect_error([&] { tx::stack(none, 0); }, "[stack] needs at least one tensor (c64)");
  // Two broadcast views whose lengths add past int64.
  const auto wide = tx::expand(TD::zeros({1}), wide_shape);
  const std::vector<TD> pair{wide, wide};
  expect_error([&] { tx::concat(pair, 0); }, "[concat] the result's dimension 0 overflows int64",
               {"2 f64 inputs on cpu"});
  // Lengths that fit but bytes that do not; a huge view reshapes to itself.
  const auto half = tx::expand(TD::zeros({1}), tx::Shape{huge / 2});
  const std::vector<TD> halves{half, half};
  expect_error([&] { tx::concat(halves, 0); }, "[concat] the result's shape [", {"overflows int64 bytes"});
  EXPECT_EQ(wide.reshape(wide_shape).shape(), wide_shape);
  expect_error([&] { TD::zeros({6}).reshape({huge}); }, "[reshape] shape [4611686018427387904] has");
}

TEST(Errors, ReshapeToWrongNumel) {
  const auto a = TD::zeros({2, 3});
  expect_error([&] { a.reshape({4, 2}); }, "[reshape] shape [4, 2] has 8 elements, input [2, 3] has 6");
  expect_error([&] { a.reshape({7}); }, "[reshape] shape [7] has 7 elements");
  expect_error([&] { a.reshape({-1, 4}); }, "[reshape] cannot infer -1 in [-1, 4] for 6 elements");
  expect_error([&] { a.reshape({-1, -1}); }, "[reshape] more than one -1 in [-1, -1]");
  expect_error([&] { a.reshape({-2, -3}); }, "[reshape] negative dimension in [-2, -3]");
  expect_error([&] { TD::zeros({0, 3}).reshape({-1, 0}); }, "[reshape] cannot infer -1 in [-1, 0]");
  EXPECT_EQ(a.reshape({3, 2}).shape(), (tx::Shape{3, 2}));
}

TEST(Errors, RankAboveEightThrows) {
  expect_error([] { tx::Shape s{1, 1, 1, 1, 1, 1, 1, 1, 1}; }, "[shape] rank exceeds the maximum of 8");
  expect_error([] { TD::zeros({1, 2, 1, 1, 1, 1, 1, 1, 1}); }, "[shape] rank exceeds the maximum of 8");
  auto r8 = TD::zeros({1, 1, 1, 1, 1, 1, 1, 2});
  EXPECT_EQ(r8.dim(), 8);
  expect_error([&] { r8.unsqueeze(0); }, "[unsqueeze] rank 9 exceeds the maximum of 8");
  expect_error([&] { r8.reshape({1, 1, 1, 1, 1, 1, 1, 1, 2}); }, "[shape] rank exceeds the maximum of 8");
  // Ops that add a dimension name themselves.
  expect_error(
      [&] {
        tx::stack<double>({r8, r8}, 0);
      },
      "[stack] the result's rank 9 exceeds the maximum of 8", {"f64", "[1, 1, 1, 1, 1, 1, 1, 2]"});
  expect_error([&] { tx::diag_embed(r8); }, "[diag_embed] the result's rank 9 exceeds the maximum of 8");
  tx::Shape s;
  expect_error([&] { s.resize(9); }, "[shape] rank 9 exceeds the maximum of 8");
  expect_error([&] { s.resize(-1); }, "[shape] rank -1 exceeds the maximum of 8");
}

TEST(Errors, MatmulShapes) {
  expect_error(
      [] {
        tx::matmul(TD::zeros({2, 3}), TD::zeros({4, 2}));
      },
      "[matmul] inner dimensions differ: [2, 3] x [4, 2] (f64 on cpu)");
  expect_error(
      [] {
        tx::matmul(TD::zeros({3}), TD::zeros({3, 2}));
      },
      "[matmul] needs rank >= 2 operands", {"[3]", "[3, 2]"});
  expect_error([] { tx::matmul(TD::zeros({2, 3, 4}), TD::zeros({3, 2, 5})); }, "[matmul]", {"[4]", "[5]"});
  EXPECT_EQ(tx::matmul(TD::zeros({2, 3, 4}), TD::zeros({3, 2, 1})).shape(), (tx::Shape{2, 2, 4}));
}

TEST(Errors, DTypeMismatchOfUntypedBody) {
  auto f = tx::Tensor<float>::zeros({2});
  expect_error([&] { TD t(f.impl()); }, "[tensor] dtype mismatch: body holds f32, handle is f64");
  auto z = tx::Tensor<tx::c64>::zeros({2});
  expect_error([&] { tx::Tensor<float> t(z.impl()); }, "[tensor] dtype mismatch: body holds c64, handle is f32");
  EXPECT_NO_THROW(tx::Tensor<float>(f.impl()));
  EXPECT_NO_THROW(TD{tx::detail::ImplPtr()});  // an empty body makes an undefined handle
}

TEST(Errors, ElementAccessAndConstruction) {
  expect_error([] { TD::from_col_major({2, 2}, {1.0, 2.0}); }, "[from_col_major] shape [2, 2] needs 4 values, got 2");
  expect_error([] { TD::zeros({2}).item(); }, "[item] tensor of shape [2] has 2 elements");
  expect_error([] { TD::zeros({2}).at({2}); }, "[at] index 2 out of range in dimension 0 of shape [2]");
  expect_error([] { TD::ones({2}).backward(); }, "[backward] implicit cotangent needs a one-element tensor");
  expect_error([] { TD::ones({2}).requires_grad().backward(TD::ones({3})); },
               "[backward] cotangent of shape [3] for a tensor of shape [2]");
  expect_error([] { tx::Tensor<std::int32_t>::zeros({2}).requires_grad(); },
               "[requires_grad] only floating tensors can require grad, got i32");
}
