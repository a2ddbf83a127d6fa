// The library's explicit instances of the reductions (sums, extrema, moments, softmax) and matmul
// (tenax/core/instances.hpp): compiled here once, with the library's flags, and linked by every program that includes
// their headers.
#include "tenax/tenax.hpp"

#undef TENAX_INSTANCE
#define TENAX_INSTANCE template

namespace tenax {
TENAX_FOR_REAL(TENAX_INSTANCES_EXTREMUM)
TENAX_FOR_FLOATING(TENAX_INSTANCES_PROD)
TENAX_FOR_FLOATING(TENAX_INSTANCES_SUM)
TENAX_FOR_FLOATING(TENAX_INSTANCES_MOMENTS)
TENAX_FOR_REAL(TENAX_INSTANCES_SOFTMAX)
TENAX_FOR_FLOATING(TENAX_INSTANCES_MATMUL)
}  // namespace tenax
