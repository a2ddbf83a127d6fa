#pragma once
// A runtime device value: the CPU, or a CUDA ordinal.
#include <cstdint>
#include <string>

namespace tenax {

struct Device {
  enum class Kind : std::uint8_t { CPU, CUDA };
  Kind kind = Kind::CPU;
  std::int16_t index = 0;

  static constexpr Device cpu() { return {}; }
  static constexpr Device cuda(int i = 0) { return {Kind::CUDA, static_cast<std::int16_t>(i)}; }
  constexpr bool is_cpu() const { return kind == Kind::CPU; }
  constexpr bool is_cuda() const { return kind == Kind::CUDA; }
  friend constexpr bool operator==(Device a, Device b) {
    return a.kind == b.kind && (a.kind == Kind::CPU || a.index == b.index);
  }
  std::string str() const { return is_cpu() ? "cpu" : "cuda:" + std::to_string(index); }
};

// The number of device kinds: the size of the per-kind tables of the device registry and of the
// kernel slots (kernels/map.hpp, kernels/reduce.hpp).
inline constexpr int kDeviceKinds = 2;
constexpr int kind_index(Device d) { return static_cast<int>(d.kind); }

}  // namespace tenax
