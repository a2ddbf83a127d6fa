// The library's explicit instances of solve, inv, lu_solve, solve_triangular, triangular_matmul and cholesky_solve
// (tenax/core/instances.hpp): compiled here once, with the library's flags, and linked by every program that includes
// their headers.
#include "tenax/tenax.hpp"

#undef TENAX_INSTANCE
#define TENAX_INSTANCE template

namespace tenax {
namespace linalg {
TENAX_FOR_FLOATING(TENAX_INSTANCES_LU_SOLVE)
TENAX_FOR_FLOATING(TENAX_INSTANCES_SOLVE)
TENAX_FOR_FLOATING(TENAX_INSTANCES_SOLVE_TRIANGULAR)
TENAX_FOR_FLOATING(TENAX_INSTANCES_TRIANGULAR_MATMUL)
TENAX_FOR_FLOATING(TENAX_INSTANCES_CHOLESKY_SOLVE)
}  // namespace linalg
}  // namespace tenax
