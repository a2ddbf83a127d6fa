// The library's explicit instances of the scans and arg-reductions (cumsum, cumprod, argmax, argmin)
// (tenax/core/instances.hpp).
#include "tenax/tenax.hpp"

#undef TENAX_INSTANCE
#define TENAX_INSTANCE template

namespace tenax {
TENAX_FOR_FLOATING(TENAX_INSTANCES_CUMULATIVE)
TENAX_FOR_ARG_ORDERED(TENAX_INSTANCES_ARGMAX)
}  // namespace tenax
