// DLPack import and export (tenax/interop/dlpack.hpp): round trips of every dtype without a copy,
// the deleter run exactly once when the last view is gone, NumPy-style row-major and strided
// imports, the bool codes of old and new producers, errors that leave the managed tensor with the
// caller, no in-place reuse of imported memory, and (built against a DLPack >= 1.0 header, target
// test_dlpack_v1) the versioned struct.
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <numeric>
#include <vector>

#include <tenax/interop/dlpack.hpp>
#include <tenax/kernels/donation.hpp>
#include <tenax/tenax.hpp>

#include "support/messages.hpp"

namespace tx = tenax;
using tx::testing::expect_error;

namespace {

// A producer's tensor: a host buffer, its shape and strides, and a deleter that counts its calls.
struct Producer {
  std::vector<double> buffer;
  std::vector<std::int64_t> shape, strides;
  int deleted = 0;
  DLManagedTensor managed{};

  Producer(std::vector<double> b, std::vector<std::int64_t> s, std::vector<std::int64_t> st = {})
      : buffer(std::move(b)), shape(std::move(s)), strides(std::move(st)) {
    DLTensor& t = managed.dl_tensor;
    t.data = buffer.data();
    t.device = {kDLCPU, 0};
    t.ndim = static_cast<int>(shape.size());
    t.dtype = {kDLFloat, 64, 1};
    t.shape = shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
    t.byte_offset = 0;
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor* self) { ++static_cast<Producer*>(self->manager_ctx)->deleted; };
  }
};

template <class T>
tx::Tensor<T> sample(const tx::Shape& shape) {
  if constexpr (std::is_same_v<T, bool>)
    return tx::gt(tx::Tensor<double>::randn(shape, 3), tx::Tensor<double>::zeros({}));
  else if constexpr (std::is_integral_v<T>)
    return tx::cast<T>(tx::mul(tx::Tensor<double>::randn(shape, 3), 100.0));
  else
    return tx::Tensor<T>::randn(shape, 3);
}

template <class T>
void round_trip() {
  const tx::Tensor<T> x = sample<T>({3, 4, 2});
  const tx::Tensor<T> v = tx::transpose(x, 0, 1);  // a strided view travels as its strides
  for (const tx::Tensor<T>& a : {x, v}) {
    DLManagedTensor* m = tx::to_dlpack(a);
    EXPECT_EQ(m->dl_tensor.data, static_cast<const void*>(a.data()));
    EXPECT_EQ(m->dl_tensor.ndim, 3);
    EXPECT_EQ(tx::dlpack_dtype(m->dl_tensor), tx::dtype_of<T>);
    const tx::Tensor<T> b = tx::from_dlpack<T>(m);
    EXPECT_EQ(b.data(), a.data()) << "no copy";
    EXPECT_EQ(b.shape(), a.shape());
    EXPECT_EQ(b.strides(), a.strides());
    EXPECT_EQ(b.to_vector(), a.to_vector());
  }
}

TEST(DLPack, RoundTripsEveryDtypeWithoutACopy) {
  round_trip<bool>();
  round_trip<std::int32_t>();
  round_trip<std::int64_t>();
  round_trip<float>();
  round_trip<double>();
  round_trip<std::complex<float>>();
  round_trip<std::complex<double>>();
  // Export keeps the storage alive after the tensor is gone; the deleter releases it.
  DLManagedTensor* m = nullptr;
  {
    const auto x = tx::Tensor<double>::from_col_major({2}, {1.5, -2});
    m = tx::to_dlpack(x);
  }
  EXPECT_EQ(static_cast<const double*>(m->dl_tensor.data)[1], -2.0);
  EXPECT_EQ(m->dl_tensor.strides[0], 1);
  m->deleter(m);
  // A 0-d tensor and an empty one.
  const auto s = tx::from_dlpack<double>(tx::to_dlpack(tx::Tensor<double>::full({}, 4.0)));
  EXPECT_EQ(s.shape(), tx::Shape{});
  EXPECT_EQ(s.item(), 4.0);
  EXPECT_EQ(tx::from_dlpack<float>(tx::to_dlpack(tx::Tensor<float>::zeros({0, 3}))).shape(), (tx::Shape{0, 3}));
}

TEST(DLPack, ImportsRowMajorAndStridedArraysAndReleasesOnce) {
  // NumPy's default: C order with null strides. Element (i, j) of the 2 x 3 array is 3 i + j.
  Producer p({0, 1, 2, 3, 4, 5}, {2, 3});
  {
    const tx::Tensor<double> a = tx::from_dlpack<double>(&p.managed);
    EXPECT_EQ(a.data(), p.buffer.data());
    ASSERT_EQ(a.shape(), (tx::Shape{2, 3}));
    EXPECT_EQ(a.strides(), (tx::Strides{3, 1}));
    EXPECT_EQ(a.at({1, 2}), 5.0);
    EXPECT_EQ(a.at({1, 0}), 3.0);
    const tx::Tensor<double> row_sums = tx::sum(a, {1});
    EXPECT_EQ(row_sums.to_vector(), (std::vector<double>{3, 12}));
    const tx::Tensor<double> view = tx::transpose(a, 0, 1);  // a view keeps the import alive
    { const tx::Tensor<double> gone = a; }
    EXPECT_EQ(p.deleted, 0);
    EXPECT_EQ(tx::matmul(a, view).at({0, 1}), 0 * 3 + 1 * 4 + 2 * 5.0);
  }
  EXPECT_EQ(p.deleted, 1) << "released once, when the last view is gone";
  // Explicit strides: every other element of a vector, and a matrix's column block.
  Producer q({0, 1, 2, 3, 4, 5, 6, 7}, {4}, {2});
  EXPECT_EQ(tx::from_dlpack<double>(&q.managed).to_vector(), (std::vector<double>{0, 2, 4, 6}));
  EXPECT_EQ(q.deleted, 1);
  Producer r({0, 1, 2, 3, 4, 5, 6, 7, 8}, {2, 2}, {1, 3});  // column-major 2 x 2 in a 3 x 3 block
  const tx::Tensor<double> b = tx::from_dlpack<double>(&r.managed);
  EXPECT_EQ(tx::contiguous(b).to_vector(), (std::vector<double>{0, 1, 3, 4}));
  // A byte offset.
  Producer o({9, 8, 7}, {2});
  o.managed.dl_tensor.byte_offset = sizeof(double);
  EXPECT_EQ(tx::from_dlpack<double>(&o.managed).to_vector(), (std::vector<double>{8, 7}));
}

TEST(DLPack, ReadsBothBoolCodes) {
  std::vector<std::uint8_t> bits = {1, 0, 1};
  std::int64_t shape[] = {3};
  for (const std::uint8_t code : {std::uint8_t{kDLUInt}, tx::detail::dlpack::kBoolCode}) {
    DLManagedTensor m{};
    m.dl_tensor.data = bits.data();
    m.dl_tensor.device = {kDLCPU, 0};
    m.dl_tensor.ndim = 1;
    m.dl_tensor.dtype = {code, 8, 1};
    m.dl_tensor.shape = shape;
    EXPECT_EQ(tx::from_dlpack<bool>(&m).to_vector(), (std::vector<bool>{true, false, true}));
  }
}

TEST(DLPack, BadImportsRaiseAndLeaveTheTensorWithTheCaller) {
  Producer p({1, 2, 3, 4}, {2, 2});
  expect_error([&] { (void)tx::from_dlpack<float>(&p.managed); }, "[from_dlpack]",
               {"holds float64 elements, asked for f32"});
  p.managed.dl_tensor.dtype.lanes = 2;
  expect_error([&] { (void)tx::from_dlpack<double>(&p.managed); }, "[from_dlpack]", {"float64x2"});
  p.managed.dl_tensor.dtype.lanes = 1;
  p.strides = {1, -2};
  p.managed.dl_tensor.strides = p.strides.data();
  expect_error([&] { (void)tx::from_dlpack<double>(&p.managed); }, "[from_dlpack]", {"stride -2 of dimension 1"});
  p.managed.dl_tensor.strides = nullptr;
  p.managed.dl_tensor.byte_offset = 3;
  expect_error([&] { (void)tx::from_dlpack<double>(&p.managed); }, "[from_dlpack]", {"not aligned for f64"});
  p.managed.dl_tensor.byte_offset = 0;
  p.managed.dl_tensor.device = {static_cast<DLDeviceType>(4), 0};  // kDLOpenCL
  expect_error([&] { (void)tx::from_dlpack<double>(&p.managed); }, "[from_dlpack]", {"DLPack device type 4"});
  p.managed.dl_tensor.device = {kDLCPU, 0};
  p.managed.dl_tensor.ndim = 9;
  expect_error([&] { (void)tx::from_dlpack<double>(&p.managed); }, "[from_dlpack]", {"rank 9"});
  p.managed.dl_tensor.ndim = 2;
  expect_error([&] { (void)tx::from_dlpack<double>(static_cast<DLManagedTensor*>(nullptr)); },
               "[from_dlpack] null DLManagedTensor");
  EXPECT_EQ(p.deleted, 0) << "a failed import does not release";
  if (!tx::detail::device_backend_built(tx::Device::cuda(0))) {
    p.managed.dl_tensor.device = {kDLCUDA, 0};
    expect_error([&] { (void)tx::from_dlpack<double>(&p.managed); }, "[from_dlpack]", {"no CUDA backend"});
  }
  // Export: undefined tensors and tensors that require grad.
  expect_error([&] { (void)tx::to_dlpack(tx::Tensor<double>()); }, "[to_dlpack] undefined tensor");
  const auto w = tx::Tensor<double>::ones({2}).requires_grad();
  expect_error([&] { (void)tx::to_dlpack(w); }, "[to_dlpack]", {"requires grad", "stop_gradient"});
  DLManagedTensor* m = tx::to_dlpack(tx::stop_gradient(w));
  m->deleter(m);
  EXPECT_EQ(tx::dlpack_dtype(p.managed.dl_tensor), tx::DType::F64);
  p.managed.dl_tensor.dtype = {kDLFloat, 16, 1};
  expect_error([&] { (void)tx::dlpack_dtype(p.managed.dl_tensor); }, "[dlpack_dtype] no tenax dtype for float16");
}

TEST(DLPack, ImportedMemoryIsNeverReusedForAnOutput) {
  // A prepared program offers a dying input's body to the next elementwise map
  // (kernels/donation.hpp): a tenax buffer is reused, an imported one is not.
  const auto own = tx::Tensor<double>::full({3}, 1.0);
  {
    tx::detail::DonationScope offer(own.impl().get());
    EXPECT_EQ(tx::exp(own).data(), own.data()) << "(the control: a tenax buffer is reused)";
  }
  Producer p({1, 2, 3}, {3});
  const tx::Tensor<double> a = tx::from_dlpack<double>(&p.managed);
  tx::Tensor<double> y;
  {
    tx::detail::DonationScope offer(a.impl().get());
    y = tx::exp(a);
  }
  EXPECT_NE(y.data(), a.data());
  EXPECT_EQ(p.buffer, (std::vector<double>{1, 2, 3}));
}

#if defined(DLPACK_MAJOR_VERSION) && DLPACK_MAJOR_VERSION >= 1
TEST(DLPack, VersionedStructRoundTripsAndChecksTheVersion) {
  const auto x = tx::Tensor<std::complex<float>>::randn({2, 3}, 4);
  DLManagedTensorVersioned* m = tx::to_dlpack_versioned(x);
  EXPECT_EQ(m->version.major, static_cast<std::uint32_t>(DLPACK_MAJOR_VERSION));
  EXPECT_EQ(m->flags, 0u);
  EXPECT_EQ(m->dl_tensor.dtype.code, kDLComplex);
  const auto y = tx::from_dlpack<std::complex<float>>(m);
  EXPECT_EQ(y.data(), x.data());
  EXPECT_EQ(y.to_vector(), x.to_vector());
  DLManagedTensorVersioned* b = tx::to_dlpack_versioned(tx::Tensor<bool>::ones({2}));
  EXPECT_EQ(b->dl_tensor.dtype.code, kDLBool);
  b->version.major = DLPACK_MAJOR_VERSION + 1;
  expect_error([&] { (void)tx::from_dlpack<bool>(b); }, "[from_dlpack]", {"is newer than this build's"});
  b->deleter(b);  // (a refused import leaves it with the caller)
}
#endif

}  // namespace
