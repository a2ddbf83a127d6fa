// The linalg fuzz target's driver for std::complex<double> (fuzz_linalg.hpp).
#include "fuzz_linalg.hpp"

namespace tenax_fuzz {
template void run<std::complex<double>>(Bytes&);
}  // namespace tenax_fuzz
