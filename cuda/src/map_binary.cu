// Elementwise kernels of the binary and scalar ops (ops/binary/), one instantiation per functor and dtype.
#include "map.cuh"

namespace tenax::detail::cuda {

#include "map_binary.inc"

}  // namespace tenax::detail::cuda
