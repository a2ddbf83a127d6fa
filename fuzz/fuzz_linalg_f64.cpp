// The linalg fuzz target's driver for double (fuzz_linalg.hpp).
#include "fuzz_linalg.hpp"

namespace tenax_fuzz {
template void run<double>(Bytes&);
}  // namespace tenax_fuzz
