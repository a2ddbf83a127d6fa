#pragma once
// TENAX_SHARED_STATE marks the inline functions that hold per-thread state: the AD mode
// (ad/mode.hpp), the transform depths (ad/functional.hpp), the kernel capture
// (kernels/capture.hpp) and the donated body (kernels/donation.hpp). The library's op instances
// (core/instances.hpp) read them and the program's guards and transforms write them, so each must
// be one object per thread in the whole process. Default visibility keeps it so when a program
// that links a shared tenax compiles with -fvisibility=hidden (its copy would otherwise be a
// second object, and a NoGradGuard would not reach the library's ops).
#if defined(__GNUC__) || defined(__clang__)
#define TENAX_SHARED_STATE __attribute__((visibility("default")))
#else
#define TENAX_SHARED_STATE
#endif
