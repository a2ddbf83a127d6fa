// Comparisons (ops/binary/compare.hpp) and the converting copies behind cast, contiguous and clone.
#include "map.cuh"

namespace tenax::detail::cuda {

using c64 = std::complex<float>;
using c128 = std::complex<double>;
using i32 = std::int32_t;
using i64 = std::int64_t;

#define TENAX_CMP(F, T) TENAX_MAP2(bool, F, T, T)
#define TENAX_CMP_REAL(F) \
  TENAX_CMP(F, bool) TENAX_CMP(F, i32) TENAX_CMP(F, i64) TENAX_CMP(F, float) TENAX_CMP(F, double)
#define TENAX_CMP_ALL(F) TENAX_CMP_REAL(F) TENAX_CMP(F, c64) TENAX_CMP(F, c128)
TENAX_CMP_ALL(fn::Eq)
TENAX_CMP_ALL(fn::Ne)
TENAX_CMP_REAL(fn::Lt)
TENAX_CMP_REAL(fn::Le)
TENAX_CMP_REAL(fn::Gt)
TENAX_CMP_REAL(fn::Ge)

#define TENAX_CONVERT(D, S) TENAX_MAP1(D, fn::Convert<D>, S)
#define TENAX_CONVERT_FROM(S) \
  TENAX_CONVERT(bool, S)      \
  TENAX_CONVERT(i32, S)       \
  TENAX_CONVERT(i64, S) TENAX_CONVERT(float, S) TENAX_CONVERT(double, S) TENAX_CONVERT(c64, S) TENAX_CONVERT(c128, S)
TENAX_CONVERT_FROM(bool)
TENAX_CONVERT_FROM(i32)
TENAX_CONVERT_FROM(i64)
TENAX_CONVERT_FROM(float)
TENAX_CONVERT_FROM(double)
TENAX_CONVERT_FROM(c64)
TENAX_CONVERT_FROM(c128)

}  // namespace tenax::detail::cuda
