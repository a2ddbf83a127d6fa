// The backend seam (backend/backend.hpp): op, kernel and core headers name no device; the CPU's
// backend keeps the interface's contract; the kernel slots of a device backend built into this
// tenax are filled when the registry starts (checked without a device).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tenax/backend/backend.hpp"
#include "tenax/tenax.hpp"

namespace tx = tenax;
namespace d = tenax::detail;

namespace {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

// Device code lives behind the backend interface: no header under ops/, kernels/ or core/ tests
// for a backend, includes one's own header or chooses by the device (an op with a host loop and a
// device-neutral form picks between them through a kernels/dispatch.hpp slot); core/device.hpp,
// which defines the device kinds, is the one exception for the device tests.
TEST(Backend, NoDeviceCodeInOpsKernelsOrCore) {
  const std::filesystem::path inc = std::filesystem::path(TENAX_SOURCE_DIR) / "include" / "tenax";
  int headers = 0;
  for (const char* dir : {"ops", "kernels", "core"}) {
    ASSERT_TRUE(std::filesystem::is_directory(inc / dir)) << inc / dir;
    for (const auto& e : std::filesystem::recursive_directory_iterator(inc / dir)) {
      if (e.path().extension() != ".hpp") continue;
      ++headers;
      const std::string s = read_file(e.path());
      for (const char* banned : {"TENAX_HAS_CUDA", "backend/cuda.hpp", "detail::cuda::"})
        EXPECT_EQ(s.find(banned), std::string::npos) << e.path() << " contains " << banned;
      if (e.path().filename() == "device.hpp" && e.path().parent_path().filename() == "core") continue;
      for (const char* banned : {"is_cpu()", "is_cuda()", "Kind::CPU", "Kind::CUDA", "Device::cuda("})
        EXPECT_EQ(s.find(banned), std::string::npos) << e.path() << " chooses by the device: " << banned;
    }
  }
  EXPECT_GT(headers, 50);
}

TEST(Backend, CpuIsAlwaysRegistered) {
  EXPECT_TRUE(d::has_backend(tx::Device::cpu()));
  EXPECT_STREQ(d::backend_for("test", tx::Device::cpu()).name, "cpu");
  EXPECT_EQ(d::has_backend(tx::Device::cuda(0)), tx::config().cuda);
}

// With a device backend built in, its map and reduction slots are filled (a sample of functors
// and dtypes from each of the lists the backend registers); without one they stay empty, and the
// CPU's slot is always set.
TEST(Backend, DeviceKernelSlotsAreFilledWhenBuilt) {
  (void)d::device_backend_built(tx::Device::cuda(0));  // the registry has started
  const int gpu = tx::kind_index(tx::Device::cuda(0)), host = tx::kind_index(tx::Device::cpu());
  const bool built = tx::config().cuda;
  using c128 = std::complex<double>;
  auto check = [&](auto* slot, const char* what) {
    EXPECT_NE(slot[host], nullptr) << what;
    EXPECT_EQ(slot[gpu] != nullptr, built) << what;
  };
  check(d::MapKernel<double, tx::fn::Exp, double>::on, "exp f64");
  check(d::MapKernel<float, tx::fn::Abs, std::complex<float>>::on, "abs c64");
  check(d::MapKernel<c128, tx::fn::Mul, c128, c128>::on, "mul c128");
  check(d::MapKernel<float, tx::fn::Where, bool, float, float>::on, "where f32");
  check(d::MapKernel<double, tx::fn::ReluMask, double, double>::on, "relu_mask f64");
  check(d::MapKernel<bool, tx::fn::Lt, std::int64_t, std::int64_t>::on, "lt i64");
  check(d::MapKernel<c128, tx::fn::Convert<c128>, std::int32_t>::on, "convert i32 -> c128");
  check(d::ReduceKernel<double, double, tx::fn::Add>::on, "sum f64");
  check(d::ReduceKernel<float, float, tx::fn::FoldMax>::on, "max f32");
  check(d::FillKernel<bool>::on, "fill bool");
  check(d::FillKernel<std::int64_t>::on, "fill i64");
  check(d::FillKernel<float>::on, "fill f32");
  check(d::FillKernel<c128>::on, "fill c128");
  check(d::ScatterAddKernel<c128>::on, "scatter_add c128");
  check(d::ScatterAddKernel<std::int32_t>::on, "scatter_add i32");
  check(d::SortKernel<double>::on, "sort f64");
  check(d::SortKernel<bool>::on, "sort bool");
}

TEST(Backend, CpuKernelsFillZeroTrianglesAndPermuteRows) {
  const auto& k = *d::backend_for("test", tx::Device::cpu()).kernels;
  std::vector<std::complex<double>> z(5);
  const std::complex<double> v{1.5, -2};
  d::fill_elements("test", tx::Device::cpu(), z.data(), 5, v);
  for (const auto& e : z) EXPECT_EQ(e, v);
  EXPECT_EQ(tx::Tensor<float>::full({3}, -0.0f).to_vector(), (std::vector<float>{-0.0f, -0.0f, -0.0f}));
  EXPECT_TRUE(std::signbit(tx::Tensor<float>::full({3}, -0.0f).to_vector()[2]));

  // tril/triu of a 3 x 4 x 2 batch against the ops.
  for (bool lower : {true, false})
    for (std::int64_t diag : {-1, 0, 2}) {
      const auto x = tx::Tensor<float>::randn({3, 4, 2}, 7);
      auto y = tx::clone(x);
      k.zero_triangle(0, lower, diag, 3, 4, 2, y.mutable_data(), sizeof(float));
      const auto want = lower ? tx::tril(x, diag) : tx::triu(x, diag);
      for (std::int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(y.data()[i], want.data()[i]) << lower << diag << i;
    }

  const auto x = tx::Tensor<double>::from_col_major({3, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  const std::vector<std::int64_t> perm{2, 0, 1, 1, 1, 0};
  std::vector<double> out(12);
  k.permute_rows(0, 3, 2, 2, x.data(), perm.data(), out.data(), sizeof(double));
  EXPECT_EQ(out, (std::vector<double>{3, 1, 2, 6, 4, 5, 8, 8, 7, 11, 11, 10}));
}

TEST(Backend, CpuPivotKernels) {
  const auto& k = *d::backend_for("test", tx::Device::cpu()).kernels;
  // Matrix 0: interchanges (1 3), (2 2); matrix 1: a pivot 5 outside 1..3 at index 1.
  const std::vector<std::int32_t> piv{3, 2, 1, 5};
  std::vector<std::int64_t> perm(6), inv(6);
  std::vector<std::int32_t> safe(4), bad(4);
  k.check_pivots(0, 2, 3, 2, piv.data(), perm.data(), safe.data(), bad.data());
  EXPECT_EQ(perm, (std::vector<std::int64_t>{2, 1, 0, 0, 1, 2}));
  EXPECT_EQ(safe, (std::vector<std::int32_t>{3, 2, 1, 2}));
  EXPECT_EQ(bad, (std::vector<std::int32_t>{0, 0, 2, 5}));
  const std::vector<std::int64_t> p{2, 0, 1, 1, 2, 0};
  k.inverse_permutation(0, 3, 2, p.data(), inv.data());
  EXPECT_EQ(inv, (std::vector<std::int64_t>{1, 2, 0, 2, 0, 1}));
}

// The batched pivot check through the CPU's backend leaves its check with the device's deferred
// checks, which raise it when they run.
TEST(Backend, CpuPivotCheckIsDeferred) {
  const auto piv = tx::Tensor<std::int32_t>::from_col_major({2, 1}, {1, 7});
  d::batched::check_pivots_on_device("lu_solve", piv, 2, tx::Tensor<std::int64_t>(), tx::Tensor<std::int32_t>());
  try {
    d::run_deferred_checks(tx::Device::cpu());
    FAIL() << "no error";
  } catch (const tx::Error& e) {
    EXPECT_NE(std::string(e.what()).find("lu_solve"), std::string::npos) << e.what();
  }
}

// A batch of products through the CPU's BatchedLinalg equals matmul.
TEST(Backend, CpuLinalgGemmBatch) {
  const auto a = tx::Tensor<double>::randn({3, 4, 2}, 1), b = tx::Tensor<double>::randn({4, 5, 2}, 2);
  std::vector<double> c(30);
  d::linalg_backend<double>("test", tx::Device::cpu())
      .gemm(0, tx::blas::Trans::N, tx::blas::Trans::N, 3, 5, 4, a.data(), 3, 12, b.data(), 4, 20, c.data(), 3, 15, 2);
  const auto want = tx::matmul(a, b);
  for (int i = 0; i < 30; ++i) EXPECT_DOUBLE_EQ(c[i], want.data()[i]);
}
