// Elementwise kernels of the unary ops (ops/unary/), one instantiation per functor and dtype.
#include "map.cuh"

namespace tenax::detail::cuda {

using c64 = std::complex<float>;
using c128 = std::complex<double>;

#define TENAX_SAME1(F, T) TENAX_MAP1(T, F, T)
#define TENAX_FLOATING(F) TENAX_SAME1(F, float) TENAX_SAME1(F, double) TENAX_SAME1(F, c64) TENAX_SAME1(F, c128)
#define TENAX_REAL(F) TENAX_SAME1(F, float) TENAX_SAME1(F, double)
#define TENAX_TO_REAL(F) \
  TENAX_MAP1(float, F, float) TENAX_MAP1(double, F, double) TENAX_MAP1(float, F, c64) TENAX_MAP1(double, F, c128)

TENAX_FLOATING(fn::Neg)
TENAX_FLOATING(fn::Conj)
TENAX_SAME1(fn::Conj, bool)
TENAX_SAME1(fn::Conj, std::int32_t)
TENAX_SAME1(fn::Conj, std::int64_t)
TENAX_FLOATING(fn::Exp)
TENAX_FLOATING(fn::Log)
TENAX_FLOATING(fn::Sqrt)
TENAX_FLOATING(fn::Rsqrt)
TENAX_FLOATING(fn::Square)
TENAX_FLOATING(fn::Sin)
TENAX_FLOATING(fn::Cos)
TENAX_FLOATING(fn::Tanh)
TENAX_FLOATING(fn::Sigmoid)
TENAX_FLOATING(fn::Sign)
TENAX_REAL(fn::Log1p)
TENAX_REAL(fn::Expm1)
TENAX_REAL(fn::Relu)
TENAX_TO_REAL(fn::Abs)
TENAX_TO_REAL(fn::Real)
TENAX_TO_REAL(fn::Imag)
TENAX_MAP1(bool, fn::IsFinite, float)
TENAX_MAP1(bool, fn::IsFinite, double)
TENAX_MAP1(bool, fn::IsFinite, c64)
TENAX_MAP1(bool, fn::IsFinite, c128)
TENAX_MAP1(float, fn::PowScalar<float>, float)
TENAX_MAP1(double, fn::PowScalar<double>, double)
TENAX_MAP1(c64, fn::PowScalar<c64>, c64)
TENAX_MAP1(c128, fn::PowScalar<c128>, c128)

}  // namespace tenax::detail::cuda
