#pragma once
// The typed kernels of the indexing and sorting ops (ops/index/): scatter_add (it adds, so it is
// not a bit copy like the gathers and puts of DeviceKernels) and sort. Kernel slots per element
// type, one entry per device kind, as FillKernel (core/device_fill.hpp): the CPU's entries are
// constants (src/cpu/index.cpp); a device backend fills its own when the registry starts
// (cuda/src/backend.cpp).
#include <cstdint>
#include <type_traits>

#include "tenax/backend/axis_geometry.hpp"
#include "tenax/core/device.hpp"
#include "tenax/core/shared_state.hpp"

namespace tenax::detail {

// out[p; axis = idx[p]] += src[p] (backend/axis_geometry.hpp) into out, which holds x. Each target
// adds its sources in increasing position along axis, so the sum's order is fixed on every device.
// Out-of-range indices are skipped and the first is reported in bad as by DeviceKernels::put_axis.
template <class T>
using ScatterAddFn = void (*)(int dev, const AxisGeometry& g, const std::int64_t* idx, const T* src, T* out,
                              std::int64_t* bad);
// Stable sort of each line of x (ascending, or descending; NaN after every number ascending and
// before every number descending): values and the positions along axis they came from.
template <class T>
using SortFn = void (*)(int dev, const LineGeometry& g, const T* x, T* values, std::int64_t* indices, bool descending);

template <class T>
void cpu_scatter_add(int dev, const AxisGeometry& g, const std::int64_t* idx, const T* src, T* out, std::int64_t* bad);
template <class T>
void cpu_sort(int dev, const LineGeometry& g, const T* x, T* values, std::int64_t* indices, bool descending);

template <class T>
struct TENAX_SHARED_STATE ScatterAddKernel {
  static inline ScatterAddFn<T> on[kDeviceKinds] = {&cpu_scatter_add<T>};
};
template <class T>
struct TENAX_SHARED_STATE SortKernel {
  static inline SortFn<T> on[kDeviceKinds] = {&cpu_sort<T>};
};

// a before b in an ascending (descending) sort, NaN the largest value.
template <class T>
TENAX_AXIS_HD inline bool sorts_before(const T& a, const T& b, bool descending) {
  if constexpr (std::is_floating_point_v<T>) {  // NaN (a != a) is the largest
    const bool na = a != a, nb = b != b;
    if (na || nb) return descending ? na && !nb : nb && !na;
  }
  return descending ? b < a : a < b;
}

}  // namespace tenax::detail
