// Comparisons (ops/binary/compare.hpp) and the converting copies behind cast, contiguous and clone.
#include "map.cuh"

namespace tenax::detail::cuda {

#include "map_convert.inc"

}  // namespace tenax::detail::cuda
