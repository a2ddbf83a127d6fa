// The CPU's typed indexing kernels (kernels/index.hpp): scatter_add and the stable sort of lines.
#include "tenax/kernels/index.hpp"

#include <algorithm>
#include <complex>
#include <numeric>
#include <vector>

#include "axis_walk.hpp"

namespace tenax::detail {

template <class T>
void cpu_scatter_add(int, const AxisGeometry& g, const std::int64_t* idx, const T* src, T* out, std::int64_t* bad) {
  walk_axis_indices(
      g, idx, bad, [&](const AxisOffsets& a, std::int64_t at) { out[at] += src[a.val]; }, [](const AxisOffsets&) {});
}

template <class T>
void cpu_sort(int, const LineGeometry& g, const T* x, T* values, std::int64_t* indices, bool descending) {
  std::vector<std::int64_t> order(static_cast<std::size_t>(g.n));
  const std::int64_t xs = g.x[g.axis], os = g.out[g.axis];
  for (std::int64_t l = 0; l < g.lines; ++l) {
    std::int64_t xo = 0, oo = 0;
    line_offsets(g, l, xo, oo);
    const T* line = x + xo;
    std::iota(order.begin(), order.end(), std::int64_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
      return sorts_before(line[a * xs], line[b * xs], descending);
    });
    for (std::int64_t i = 0; i < g.n; ++i) {
      values[oo + i * os] = line[order[static_cast<std::size_t>(i)] * xs];
      indices[oo + i * os] = order[static_cast<std::size_t>(i)];
    }
  }
}

#define TENAX_SCATTER_ADD(T) \
  template void cpu_scatter_add<T>(int, const AxisGeometry&, const std::int64_t*, const T*, T*, std::int64_t*);
#define TENAX_SORT(T) template void cpu_sort<T>(int, const LineGeometry&, const T*, T*, std::int64_t*, bool);
TENAX_SCATTER_ADD(std::int32_t)
TENAX_SCATTER_ADD(std::int64_t)
TENAX_SCATTER_ADD(float)
TENAX_SCATTER_ADD(double)
TENAX_SCATTER_ADD(std::complex<float>)
TENAX_SCATTER_ADD(std::complex<double>)
TENAX_SORT(bool)
TENAX_SORT(std::int32_t)
TENAX_SORT(std::int64_t)
TENAX_SORT(float)
TENAX_SORT(double)

}  // namespace tenax::detail
