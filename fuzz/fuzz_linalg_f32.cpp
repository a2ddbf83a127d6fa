// The linalg fuzz target's driver for float (fuzz_linalg.hpp).
#include "fuzz_linalg.hpp"

namespace tenax_fuzz {
template void run<float>(Bytes&);
}  // namespace tenax_fuzz
