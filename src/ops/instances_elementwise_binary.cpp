// The library's explicit instances of the elementwise binary ops of tenax/ops/binary/ beyond
// instances_binary.cpp (atan2, hypot, logaddexp, remainder, fmod, clamp and the integer
// arithmetic), compiled here once (tenax/core/instances.hpp).
#include "tenax/tenax.hpp"

#undef TENAX_INSTANCE
#define TENAX_INSTANCE template

namespace tenax {
TENAX_FOR_REAL(TENAX_INSTANCES_ATAN2)
TENAX_FOR_REAL(TENAX_INSTANCES_CLAMP)
TENAX_FOR_REAL_NUMBER(TENAX_INSTANCES_FMOD)
TENAX_FOR_REAL(TENAX_INSTANCES_HYPOT)
TENAX_FOR_INTEGER(TENAX_INSTANCES_INTEGER)
TENAX_FOR_REAL(TENAX_INSTANCES_LOGADDEXP)
TENAX_FOR_REAL_NUMBER(TENAX_INSTANCES_REMAINDER)
}  // namespace tenax
