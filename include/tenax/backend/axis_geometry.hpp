#pragma once
// The geometry of the indexing kernels along one axis (gather, put, scatter_add; ops/index/) and of
// the sort kernels: plain data that the host fills and every device's kernels read (the CUDA
// kernels take it by value), with the offset arithmetic both sides share.
#include <cstdint>

#include "tenax/core/shape.hpp"

#if defined(__CUDACC__)
#define TENAX_AXIS_HD __host__ __device__
#else
#define TENAX_AXIS_HD
#endif

namespace tenax::detail {

// Positions p run over `shape` (the index tensor's, rank dims, column-major order: dimension 0
// fastest). At p the index v = idx[p] (negative v counts from the end: -len..len-1 are valid) names
// the element of the indexed tensor at p with its coordinate along `axis` replaced by v:
//   gather:      out[p] = x[p; axis = v]          (out: `val` strides, x: `x` strides)
//   put:         out[p; axis = v] = src[p]         (out: `x` strides, a copy of x; src: `val` strides)
//   scatter_add: out[p; axis = v] += src[p]
// `xshape` is the indexed tensor's shape (shape[d] <= xshape[d] outside axis). Strides in elements.
struct AxisGeometry {
  int rank = 0;
  int axis = 0;
  std::int64_t len = 0;    // xshape[axis]
  std::int64_t numel = 0;  // of shape
  std::int64_t shape[kMaxRank] = {};
  std::int64_t xshape[kMaxRank] = {};
  std::int64_t idx[kMaxRank] = {};
  std::int64_t val[kMaxRank] = {};
  std::int64_t x[kMaxRank] = {};
};

// The offsets of position q (column-major over g.shape) in the index tensor, the values and the
// indexed tensor (the latter without the axis term), and the coordinate along axis.
struct AxisOffsets {
  std::int64_t idx = 0, val = 0, x = 0, k = 0;
};
TENAX_AXIS_HD inline AxisOffsets axis_offsets(const AxisGeometry& g, std::int64_t q) {
  AxisOffsets o;
  for (int d = 0; d < g.rank; ++d) {
    const std::int64_t c = q % g.shape[d];
    q /= g.shape[d];
    o.idx += c * g.idx[d];
    o.val += c * g.val[d];
    if (d == g.axis)
      o.k = c;
    else
      o.x += c * g.x[d];
  }
  return o;
}
// v wrapped into 0..len-1, or -1 when out of range.
TENAX_AXIS_HD inline std::int64_t wrap_index(std::int64_t v, std::int64_t len) {
  if (v < 0) v += len;
  return v >= 0 && v < len ? v : -1;
}

// The lines of a sort: `lines` lines of n elements along `axis` of a tensor of shape `shape`
// (x: its element strides); the outputs are contiguous (column-major) in the same shape.
struct LineGeometry {
  int rank = 0;
  int axis = 0;
  std::int64_t n = 0, lines = 0;
  std::int64_t shape[kMaxRank] = {};
  std::int64_t x[kMaxRank] = {};
  std::int64_t out[kMaxRank] = {};  // contiguous strides of the outputs
};
// Offsets of line l's first element in x and in the outputs.
TENAX_AXIS_HD inline void line_offsets(const LineGeometry& g, std::int64_t l, std::int64_t& xo, std::int64_t& oo) {
  xo = 0;
  oo = 0;
  for (int d = 0; d < g.rank; ++d) {
    if (d == g.axis) continue;
    const std::int64_t c = l % g.shape[d];
    l /= g.shape[d];
    xo += c * g.x[d];
    oo += c * g.out[d];
  }
}

}  // namespace tenax::detail
