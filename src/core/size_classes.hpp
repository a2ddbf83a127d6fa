#pragma once
// Power-of-two size classes shared by the pooled allocators (CPU and CUDA): class c holds blocks of
// 2^(c + MinShift) bytes.
#include <bit>
#include <cstddef>

namespace tenax::detail {

template <int MinShift, int MaxShift>
struct SizeClasses {
  static constexpr int kCount = MaxShift - MinShift + 1;
  // The smallest class whose blocks hold `bytes`.
  static int of(std::size_t bytes) {
    return bytes <= (std::size_t{1} << MinShift) ? 0 : static_cast<int>(std::bit_width(bytes - 1)) - MinShift;
  }
  static constexpr std::size_t bytes(int c) { return std::size_t{1} << (c + MinShift); }
};

}  // namespace tenax::detail
