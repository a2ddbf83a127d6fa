#pragma once
// The geometry of a kernel that works along one axis, one line at a time (scans, arg-reductions):
// plain data, read by the CPU's loop over lines (kernels/lines.hpp) and by the CUDA kernel
// (cuda/src/scan.cu, one thread per line) through the same line_offsets.
#include <cstdint>

#include "tenax/core/shape.hpp"
#include "tenax/ops/functors.hpp"

namespace tenax::detail {

struct LineLoop {
  int rank = 0;            // the other dimensions, dimension 0 fastest
  std::int64_t lines = 0;  // their product
  std::int64_t len = 0;    // elements along the axis of the input
  std::int64_t shape[kMaxRank] = {};
  std::int64_t in_stride[kMaxRank] = {}, out_stride[kMaxRank] = {};  // elements
  std::int64_t in_step = 0, out_step = 0;                            // elements along the axis
  char* out = nullptr;
  const char* in = nullptr;
};

// Element offsets of line j's first element in the input and the output.
TENAX_HD inline void line_offsets(const LineLoop& l, std::int64_t j, std::int64_t& in, std::int64_t& out) {
  in = 0;
  out = 0;
  for (int d = 0; d < l.rank; ++d) {
    const std::int64_t c = j % l.shape[d];
    j /= l.shape[d];
    in += c * l.in_stride[d];
    out += c * l.out_stride[d];
  }
}

// Runs f on line j: f(x, x_step, y, y_step, len) with typed pointers to the line's first elements.
template <class Out, class In, class F>
TENAX_HD inline void run_line(const F& f, const LineLoop& l, std::int64_t j) {
  std::int64_t i = 0, o = 0;
  line_offsets(l, j, i, o);
  f(reinterpret_cast<const In*>(l.in) + i, l.in_step, reinterpret_cast<Out*>(l.out) + o, l.out_step, l.len);
}

}  // namespace tenax::detail
