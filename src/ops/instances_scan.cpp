// The library's explicit instances of the scans and arg-reductions (cumsum, cumprod, argmax,
// argmin) and of the random generators (tenax/core/instances.hpp).
#include "tenax/tenax.hpp"

#undef TENAX_INSTANCE
#define TENAX_INSTANCE template

namespace tenax {
TENAX_FOR_FLOATING(TENAX_INSTANCES_CUMULATIVE)
TENAX_FOR_ARG_ORDERED(TENAX_INSTANCES_ARGMAX)
TENAX_FOR_FLOATING(TENAX_INSTANCES_RANDOM)
TENAX_FOR_REAL(TENAX_INSTANCES_RANDOM_REAL)
TENAX_FOR_RANDOM_INT(TENAX_INSTANCES_RANDOM_INT)
TENAX_FOR_BOOL(TENAX_INSTANCES_BERNOULLI_MASK)
}  // namespace tenax
