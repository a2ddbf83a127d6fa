// libFuzzer target: every tenax::linalg op, its _ex variant, and its VJP and JVP, on inputs decoded
// from the fuzz bytes: dtype, batch rank, sizes (0, 1, small, huge, negative), layout (contiguous,
// transposed view, strided slice, broadcast batch), mode flags and raw float bits (NaN, Inf,
// denormals, huge values). Every call must return or throw tenax::Error; anything else (a crash, a
// sanitizer report, another exception type, a hang caught by -timeout) is a finding.
//
// Build: cmake -DTENAX_BUILD_FUZZ=ON with clang (fuzz/CMakeLists.txt); run:
//   build-fuzz/fuzz/fuzz_linalg fuzz/corpus/linalg -max_total_time=60
#include <complex>

#include "fuzz_linalg.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tenax_fuzz::Bytes in(data, size);
  try {
    switch (in.u8() % 4) {
      case 0:
        tenax_fuzz::run<float>(in);
        break;
      case 1:
        tenax_fuzz::run<double>(in);
        break;
      case 2:
        tenax_fuzz::run<std::complex<float>>(in);
        break;
      default:
        tenax_fuzz::run<std::complex<double>>(in);
        break;
    }
  } catch (const tenax::Error&) {
    // A clear error is an acceptable outcome (LinAlgError derives from it).
  }
  return 0;
}
