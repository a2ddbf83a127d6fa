// The rules that choose between one batched cuBLAS/cuSOLVER call and one call per matrix
// (backend/cuda_batching.hpp): plain C++, checked on every machine. A rule that sent a matrix past
// an entry point's own limits would fail only on a GPU, so the limits are checked over a range.
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>

#include <tenax/backend/cuda_batching.hpp>

namespace b = tenax::detail::cuda::batching;

TEST(CudaBatching, RulesStayInsideTheBatchedEntryPointsLimits) {
  for (std::int64_t m = 0; m <= 80; ++m)
    for (std::int64_t n = 0; n <= 80; ++n)
      for (std::int64_t batch : {1, 2, 3, 40, 100000}) {
        // getrfBatched: square matrices only; a single matrix goes to cuSOLVER.
        if (b::getrf_batched<double>(m, n, batch) || b::getrf_batched<std::complex<float>>(m, n, batch)) {
          EXPECT_EQ(m, n);
          EXPECT_GT(batch, 1);
        }
        for (bool vectors : {false, true})
          for (bool thin : {false, true})
            if (b::gesvdj_batched(m, n, batch, vectors, thin)) {
              // gesvdjBatched: m, n <= 32 and full U and V only.
              EXPECT_LE(m, 32);
              EXPECT_LE(n, 32);
              EXPECT_TRUE(!vectors || !thin || m == n);
              EXPECT_GT(batch, 1);
            }
        if (b::syevj_batched(n, batch)) {
          EXPECT_LE(n, 32);  // syevjBatched: n <= 32
          EXPECT_GT(batch, 1);
        }
      }
  EXPECT_FALSE(b::potrf_batched(1));
  EXPECT_TRUE(b::potrf_batched(2));
}

TEST(CudaBatching, CutOffsFollowTheMeasuredOnes) {
  // getrf: batched while n^2 stays under the batch-dependent threshold.
  EXPECT_TRUE(b::getrf_batched<double>(32, 32, 8));
  EXPECT_TRUE(b::getrf_batched<double>(66, 66, 2));  // 4356 <= 2200 * 2
  EXPECT_FALSE(b::getrf_batched<double>(67, 67, 2));
  EXPECT_FALSE(b::getrf_batched<double>(512, 512, 3));
  EXPECT_TRUE(b::getrf_batched<double>(512, 512, 8));                 // 262144 <= 16600 * 8 * isqrt(8)
  EXPECT_FALSE(b::getrf_batched<std::complex<double>>(512, 512, 8));  // > 5200 * 8 * 2
  EXPECT_TRUE(b::getrf_batched<std::complex<double>>(512, 512, 16));
  EXPECT_TRUE(b::getrf_batched<float>(236, 236, 3));  // 55696 <= 18600 * 3
  EXPECT_FALSE(b::getrf_batched<float>(237, 237, 3));
  // getrs: tiny systems always batched (also a single one); larger ones only in batches of three
  // or more with few right-hand sides.
  EXPECT_TRUE(b::getrs_batched(4, 1, 1, false));
  EXPECT_TRUE(b::getrs_batched(16, 16, 1, false));
  EXPECT_FALSE(b::getrs_batched(17, 17, 100, false));
  EXPECT_FALSE(b::getrs_batched(40, 1, 2, false));
  EXPECT_TRUE(b::getrs_batched(40, 1, 3, false));
  EXPECT_FALSE(b::getrs_batched(40, 9, 3, false));
  EXPECT_TRUE(b::getrs_batched(100, 2, 3, true));
  EXPECT_FALSE(b::getrs_batched(100, 3, 3, false));
  EXPECT_FALSE(b::getrs_batched(200, 1, 1000, false));
  // eigh and svd: Jacobi batched up to 32.
  EXPECT_TRUE(b::syevj_batched(32, 2));
  EXPECT_FALSE(b::syevj_batched(33, 2));
  EXPECT_TRUE(b::gesvdj_batched(32, 20, 2, false, true));
  EXPECT_TRUE(b::gesvdj_batched(32, 20, 2, true, false));
  EXPECT_FALSE(b::gesvdj_batched(32, 20, 2, true, true));
  EXPECT_TRUE(b::gesvdj_batched(20, 20, 2, true, true));
}
