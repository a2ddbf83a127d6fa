// Elementwise kernels of the unary ops (ops/unary/), one instantiation per functor and dtype.
#include "map.cuh"

namespace tenax::detail::cuda {

#include "map_unary.inc"

}  // namespace tenax::detail::cuda
