#pragma once
// The CPU's walk of an indexing kernel (gather, put, scatter_add): every position q of the index
// tensor in column-major order, which visits a target's positions in increasing coordinate along
// the axis (the order the device kernels add or put in too). A valid index calls
// valid(offsets, target) with the element offset of x[...; axis = index]; the first invalid one is
// reported in bad (1 + its position, its value) and the others skipped, as invalid(offsets).
#include <cstdint>

#include "tenax/backend/axis_geometry.hpp"

namespace tenax::detail {

template <class Valid, class Invalid>
void walk_axis_indices(const AxisGeometry& g, const std::int64_t* idx, std::int64_t* bad, Valid&& valid,
                       Invalid&& invalid) {
  bad[0] = bad[1] = 0;
  for (std::int64_t q = 0; q < g.numel; ++q) {
    const AxisOffsets a = axis_offsets(g, q);
    const std::int64_t v = wrap_index(idx[a.idx], g.len);
    if (v < 0) {
      if (bad[0] == 0) bad[0] = q + 1, bad[1] = idx[a.idx];
      invalid(a);
    } else {
      valid(a, a.x + v * g.x[g.axis]);
    }
  }
}

}  // namespace tenax::detail
