// The CUDA device where none can be used: built without the backend, or built with it on a
// machine with no visible GPU (no driver, or no device). Every path reports a clear tenax::Error
// naming the device; nothing crashes. Runs everywhere (label cpu).
#include <gtest/gtest.h>

#include <tenax/tenax.hpp>

#include "support/messages.hpp"

namespace tx = tenax;
using tx::testing::error_of;
using tx::testing::has;

TEST(CudaAbsent, ConfigSaysWhatIsBuiltAndVisible) {
  const tx::Config c = tx::config();
  EXPECT_EQ(c.cuda_devices, tx::cuda::device_count());
  EXPECT_TRUE(has(c.str(), c.cuda ? "cuda: built, " : "cuda: not built")) << c.str();
#if defined(TENAX_HAS_CUDA)
  EXPECT_TRUE(c.cuda);
#else
  EXPECT_FALSE(c.cuda);
  EXPECT_EQ(tx::cuda::device_count(), 0);
#endif
}

TEST(CudaAbsent, UnusableDeviceIsAClearError) {
  const int n = tx::cuda::device_count();
  // The first ordinal that does not exist here: cuda:0 without a GPU.
  const tx::Device d = tx::Device::cuda(n);
  const auto cpu = tx::Tensor<double>::ones({2, 3});
  for (const std::string& e :
       {error_of([&] {
          tx::Tensor<double>::empty({2, 3}, d);
        }),
        error_of([&] { tx::Tensor<float>::zeros({4}, d); }), error_of([&] { cpu.to(d); }),
        error_of([&] { tx::release_cached_memory(d); }), error_of([&] { tx::allocator_stats(d); })}) {
#if defined(TENAX_HAS_CUDA)
    EXPECT_TRUE(has(e, "[device] " + d.str() + " is not available: ")) << e;
#else
    EXPECT_TRUE(has(e, "no backend for device " + d.str())) << e;
#endif
  }
  // The CPU is untouched by the failed attempts.
  EXPECT_DOUBLE_EQ(tx::sum(cpu).item(), 6.0);
}
