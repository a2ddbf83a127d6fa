#pragma once
// Explicit instantiation of the public ops for the dtypes tenax ships (docs/ARCHITECTURE.md,
// "Explicit instances"). Each op header ends with a list of its instances for one dtype T,
//
//   #define TENAX_INSTANCES_EXP(T) TENAX_INSTANCE Tensor<T> exp(const Tensor<T>&);
//   TENAX_DECLARE_INSTANCES(TENAX_FOR_FLOATING, TENAX_INSTANCES_EXP)
//
// which declares them `extern template` for every dtype of the set: a program that includes the
// header compiles none of the op's code (its forward kernels, rules, recording) and links the
// library's optimised copy. The library defines each instance once, in src/ops/instances_*.cpp
// (TENAX_INSTANCE redefined to `template`). Other dtypes (and the ops not listed, such as cast)
// are instantiated by the program as before.
//
// Built with TENAX_EXPLICIT_INSTANTIATION=OFF, the library defines none and exports
// TENAX_NO_EXTERN_TEMPLATES, which empties the declarations: every program then instantiates
// what it uses.
#include <complex>
#include <cstdint>

#define TENAX_FOR_REAL(M) M(float) M(double)
#define TENAX_FOR_FLOATING(M) TENAX_FOR_REAL(M) M(std::complex<float>) M(std::complex<double>)
#define TENAX_FOR_INTEGER(M) M(std::int32_t) M(std::int64_t)
// The real dtypes with arithmetic (integers, then real floating point).
#define TENAX_FOR_REAL_NUMBER(M) TENAX_FOR_INTEGER(M) TENAX_FOR_REAL(M)
// The dtypes with an order (comparisons other than eq and ne).
#define TENAX_FOR_ORDERED(M) M(bool) M(std::int32_t) M(std::int64_t) TENAX_FOR_REAL(M)
// The dtypes that add (scatter_add, index_add).
#define TENAX_FOR_ADDABLE(M) M(std::int32_t) M(std::int64_t) TENAX_FOR_FLOATING(M)
#define TENAX_FOR_SCALAR(M) M(bool) M(std::int32_t) M(std::int64_t) TENAX_FOR_FLOATING(M)

#define TENAX_INSTANCE extern template
#ifdef TENAX_NO_EXTERN_TEMPLATES
#define TENAX_DECLARE_INSTANCES(FOR, M)
#else
#define TENAX_DECLARE_INSTANCES(FOR, M) FOR(M)
#endif
