#pragma once
// The generic reduction driver: folds the chosen dimensions of x into an output with those
// dimensions of size 1. Elements are combined in memory order of the input, so the result is
// deterministic.
#include <array>
#include <bitset>
#include <cstdint>
#include <string_view>

#include "tenax/core/tensor.hpp"
#include "tenax/kernels/map.hpp"
#include "tenax/kernels/strided_loop.hpp"

namespace tenax::detail {

using AxisMask = std::bitset<kMaxRank>;

// Shape of x with the masked dimensions set to 1 (keepdim) or removed.
inline Shape reduced_shape(const Shape& s, AxisMask mask, bool keepdim) {
  Shape r;
  for (int d = 0; d < s.size(); ++d) {
    if (!mask[d])
      r.push_back(s[d]);
    else if (keepdim)
      r.push_back(1);
  }
  return r;
}

// out[j] = combine(out[j], x[i]) over the masked dimensions, starting from init; returns the
// keepdim-shaped result.
template <class Out, class In, class Combine>
Tensor<Out> reduce(std::string_view op, const Tensor<In>& x, AxisMask mask, Out init, Combine combine) {
  TENAX_CHECK(x.device().is_cpu(), op, "no kernel for device ", x.device().str());
  const Shape kshape = reduced_shape(x.shape(), mask, true);
  Tensor<Out> out = Tensor<Out>::full(kshape, init);
  Strides os = byte_strides(*out.impl());
  for (int d = 0; d < x.dim(); ++d)
    if (mask[d]) os[d] = 0;
  std::array<Strides, 2> st{os, byte_strides(*x.impl())};
  std::array<char*, 2> p{static_cast<char*>(out.impl()->data()), static_cast<char*>(x.impl()->data())};
  cpu::strided_loop<2>(x.shape(), st, p,
                       [&](std::array<char*, 2> q, const std::array<std::int64_t, 2>& s, std::int64_t n) {
                         if (s[0] == 0) {
                           Out acc = *reinterpret_cast<Out*>(q[0]);
                           for (std::int64_t i = 0; i < n; ++i)
                             acc = combine(acc, *reinterpret_cast<const In*>(q[1] + i * s[1]));
                           *reinterpret_cast<Out*>(q[0]) = acc;
                         } else {
                           for (std::int64_t i = 0; i < n; ++i) {
                             Out& o = *reinterpret_cast<Out*>(q[0] + i * s[0]);
                             o = combine(o, *reinterpret_cast<const In*>(q[1] + i * s[1]));
                           }
                         }
                       });
  return out;
}

}  // namespace tenax::detail
