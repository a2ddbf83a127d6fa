// The library's explicit instances of einsum and tensordot (tenax/core/instances.hpp): compiled
// here once, with the library's flags, and linked by every program that includes their header.
#include "tenax/tenax.hpp"

#undef TENAX_INSTANCE
#define TENAX_INSTANCE template

namespace tenax {
TENAX_FOR_FLOATING(TENAX_INSTANCES_EINSUM)
}  // namespace tenax
