// The library's explicit instances of svd, svdvals and the norms (tenax/core/instances.hpp):
// compiled here once, with the library's flags, and linked by every program that includes
// their headers.
#include "tenax/tenax.hpp"

#undef TENAX_INSTANCE
#define TENAX_INSTANCE template

namespace tenax {
namespace linalg {
TENAX_FOR_FLOATING(TENAX_INSTANCES_SVD)
TENAX_FOR_FLOATING(TENAX_INSTANCES_NORMS)
}  // namespace linalg
}  // namespace tenax
