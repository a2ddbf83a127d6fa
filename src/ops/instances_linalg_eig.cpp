// The library's explicit instances of eig and eigvals (tenax/core/instances.hpp): compiled here
// once, with the library's flags, and linked by every program that includes their headers.
#include "tenax/tenax.hpp"

#undef TENAX_INSTANCE
#define TENAX_INSTANCE template

namespace tenax {
namespace linalg {
TENAX_FOR_FLOATING(TENAX_INSTANCES_EIG)
}  // namespace linalg
}  // namespace tenax
