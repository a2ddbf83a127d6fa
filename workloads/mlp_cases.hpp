#pragma once
// The mlp workload (shared BENCHMARKS.md), which the mlp and threads benchmarks time and the tests
// check: SGD on loss = mean((relu(x W + b) - t)^2), lr 0.01, float64, from W0 and b0. Plain C++17
// types only: the libtorch driver includes it too.
//   x[i][j] = ((7i + 3j) mod 17 - 8) / 8            (batch x din)
//   t[i][j] = ((5i + 11j) mod 13 - 6) / 8           (batch x dout)
//   W0[i][j] = ((3i + 5j) mod 11 - 5) / 8 / din     (din x dout)
//   b0[j] = ((7j) mod 5 - 2) / 8                    (dout)
// The reported loss is the one computed in the last step (before its update), as in the
// reference (PyTorch and libtorch, float64, 1 thread).
#include <cstdint>
#include <string>
#include <vector>

namespace tenax_workloads::mlp {

struct Case {
  const char* name;  // "8x16->8"
  std::int64_t batch, din, dout;
  int steps;
  double reference_loss;
};

inline const Case kCases[] = {
    {"8x16->8", 8, 16, 8, 1000, 0.15588569886166584},
    {"64x256->64", 64, 256, 64, 100, 0.22944422082908303},
};
inline constexpr double kLr = 0.01;

// Row-major values of the inputs.
inline std::vector<double> x_values(const Case& c) {
  std::vector<double> v;
  for (std::int64_t i = 0; i < c.batch; ++i)
    for (std::int64_t j = 0; j < c.din; ++j) v.push_back(static_cast<double>((7 * i + 3 * j) % 17 - 8) / 8);
  return v;
}
inline std::vector<double> t_values(const Case& c) {
  std::vector<double> v;
  for (std::int64_t i = 0; i < c.batch; ++i)
    for (std::int64_t j = 0; j < c.dout; ++j) v.push_back(static_cast<double>((5 * i + 11 * j) % 13 - 6) / 8);
  return v;
}
inline std::vector<double> w0_values(const Case& c) {
  std::vector<double> v;
  for (std::int64_t i = 0; i < c.din; ++i)
    for (std::int64_t j = 0; j < c.dout; ++j)
      v.push_back(static_cast<double>((3 * i + 5 * j) % 11 - 5) / 8 / static_cast<double>(c.din));
  return v;
}
inline std::vector<double> b0_values(const Case& c) {
  std::vector<double> v;
  for (std::int64_t j = 0; j < c.dout; ++j) v.push_back(static_cast<double>((7 * j) % 5 - 2) / 8);
  return v;
}

// "" when loss is within 1e-12 relative of the reference, else the reason.
inline std::string check_loss(const Case& c, double loss) {
  const double rel = (loss - c.reference_loss) / c.reference_loss;
  if (rel < 1e-12 && rel > -1e-12) return "";
  return std::string("final loss ") + std::to_string(loss) + " differs from the reference " +
         std::to_string(c.reference_loss) + " (relative " + std::to_string(rel) + ")";
}

}  // namespace tenax_workloads::mlp
