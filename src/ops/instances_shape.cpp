// The library's explicit instances of the shape and view ops (tenax/core/instances.hpp):
// compiled here once, with the library's flags, and linked by every program that includes
// their headers.
#include "tenax/tenax.hpp"

#undef TENAX_INSTANCE
#define TENAX_INSTANCE template

namespace tenax {
TENAX_FOR_SCALAR(TENAX_INSTANCES_CLONE)
TENAX_FOR_SCALAR(TENAX_INSTANCES_CONCAT)
TENAX_FOR_SCALAR(TENAX_INSTANCES_DIAGONAL)
TENAX_FOR_SCALAR(TENAX_INSTANCES_EXPAND)
TENAX_FOR_SCALAR(TENAX_INSTANCES_RESHAPE)
TENAX_FOR_SCALAR(TENAX_INSTANCES_SLICE)
TENAX_FOR_SCALAR(TENAX_INSTANCES_TO_DEVICE)
TENAX_FOR_SCALAR(TENAX_INSTANCES_TRANSPOSE)
TENAX_FOR_SCALAR(TENAX_INSTANCES_TRIANGLE)
}  // namespace tenax
