#pragma once
// The CPU strided loop every elementwise and reduction kernel runs on: drops size-1 dimensions,
// merges dimensions that are contiguous for every operand, then calls an inner loop over the
// first remaining dimension.
#include <array>
#include <cstdint>

#include "tenax/core/shape.hpp"

namespace tenax::cpu {

// strides are in bytes. inner(ptrs, inner_strides, n) processes n elements.
template <std::size_t N, class Inner>
void strided_loop(const Shape& shape, const std::array<Strides, N>& strides, std::array<char*, N> p, Inner&& inner) {
  Shape sh;
  std::array<Strides, N> st;
  for (int d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) return;
    if (shape[d] == 1) continue;
    int nd = sh.size();
    bool merge = nd > 0;
    for (std::size_t k = 0; k < N && merge; ++k) merge = st[k][nd - 1] * sh[nd - 1] == strides[k][d];
    if (merge) {
      sh[nd - 1] *= shape[d];
    } else {
      sh.push_back(shape[d]);
      for (std::size_t k = 0; k < N; ++k) st[k].push_back(strides[k][d]);
    }
  }
  std::array<std::int64_t, N> s0{};
  if (sh.size() == 0) {
    inner(p, s0, std::int64_t{1});
    return;
  }
  for (std::size_t k = 0; k < N; ++k) s0[k] = st[k][0];
  const int nd = sh.size();
  std::int64_t idx[kMaxRank] = {};
  for (;;) {
    inner(p, s0, sh[0]);
    int d = 1;
    for (; d < nd; ++d) {
      for (std::size_t k = 0; k < N; ++k) p[k] += st[k][d];
      if (++idx[d] < sh[d]) break;
      for (std::size_t k = 0; k < N; ++k) p[k] -= st[k][d] * sh[d];
      idx[d] = 0;
    }
    if (d == nd) return;
  }
}

}  // namespace tenax::cpu
