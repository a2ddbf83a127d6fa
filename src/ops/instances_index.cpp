// The library's explicit instances of the indexing and sorting ops (tenax/core/instances.hpp):
// compiled here once, with the library's flags, and linked by every program that includes their
// headers.
#include "tenax/tenax.hpp"

#undef TENAX_INSTANCE
#define TENAX_INSTANCE template

namespace tenax {
TENAX_FOR_SCALAR(TENAX_INSTANCES_GATHER)
TENAX_FOR_ADDABLE(TENAX_INSTANCES_SCATTER_ADD)
TENAX_FOR_SCALAR(TENAX_INSTANCES_PUT_ALONG_AXIS)
TENAX_FOR_SCALAR(TENAX_INSTANCES_MASKED_FILL)
TENAX_FOR_ORDERED(TENAX_INSTANCES_SORT)
}  // namespace tenax
