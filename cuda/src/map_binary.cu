// Elementwise kernels of the binary and scalar ops (ops/binary/), one instantiation per functor and dtype.
#include "map.cuh"

namespace tenax::detail::cuda {

using c64 = std::complex<float>;
using c128 = std::complex<double>;

#define TENAX_SAME2(F, T) TENAX_MAP2(T, F, T, T)
#define TENAX_FLOATING2(F) TENAX_SAME2(F, float) TENAX_SAME2(F, double) TENAX_SAME2(F, c64) TENAX_SAME2(F, c128)
#define TENAX_SCALAR(F)              \
  TENAX_MAP1(float, F<float>, float) \
  TENAX_MAP1(double, F<double>, double) TENAX_MAP1(c64, F<c64>, c64) TENAX_MAP1(c128, F<c128>, c128)
#define TENAX_WHERE(T) TENAX_MAP3(T, fn::Where, bool, T, T)

TENAX_FLOATING2(fn::Add)
TENAX_FLOATING2(fn::Sub)
TENAX_FLOATING2(fn::Mul)
TENAX_FLOATING2(fn::Div)
TENAX_FLOATING2(fn::Pow)
TENAX_SAME2(fn::Maximum, float)
TENAX_SAME2(fn::Maximum, double)
TENAX_SAME2(fn::Minimum, float)
TENAX_SAME2(fn::Minimum, double)
TENAX_SCALAR(fn::AddScalar)
TENAX_SCALAR(fn::MulScalar)
TENAX_SCALAR(fn::RSubScalar)
TENAX_SCALAR(fn::RDivScalar)
TENAX_SCALAR(fn::DivScalar)
TENAX_MAP2(c64, fn::MakeComplex, float, float)
TENAX_MAP2(c128, fn::MakeComplex, double, double)
TENAX_WHERE(bool)
TENAX_WHERE(std::int32_t)
TENAX_WHERE(std::int64_t)
TENAX_WHERE(float)
TENAX_WHERE(double)
TENAX_WHERE(c64)
TENAX_WHERE(c128)

}  // namespace tenax::detail::cuda
