// The linalg fuzz target's driver for std::complex<float> (fuzz_linalg.hpp).
#include "fuzz_linalg.hpp"

namespace tenax_fuzz {
template void run<std::complex<float>>(Bytes&);
}  // namespace tenax_fuzz
