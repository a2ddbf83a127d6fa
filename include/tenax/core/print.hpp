#pragma once
// Printing tensors: shape, dtype, device and the values (matrices as rows, batches in turn; a
// device tensor's values come to the host first).
#include <ostream>

#include "tenax/core/tensor.hpp"

namespace tenax {

template <Scalar T>
std::ostream& operator<<(std::ostream& os, const Tensor<T>& t) {
  if (!t.defined()) return os << "Tensor(undefined)";
  os << "Tensor(" << dtype_traits<T>::name << ", shape=" << t.shape() << ", " << t.device().str();
  if (t.tracks_grad()) os << ", requires_grad";
  os << ")";
  if (t.numel() > 10000) return os;
  const auto v = t.to_vector();  // a device tensor's values are copied to the host
  const std::int64_t m = t.dim() >= 1 ? t.shape()[0] : 1, n = t.dim() >= 2 ? t.shape()[1] : 1;
  const std::int64_t mats = m * n ? t.numel() / (m * n) : 0;
  for (std::int64_t b = 0; b < mats; ++b) {
    if (mats > 1) os << "\n[batch " << b << "]";
    for (std::int64_t i = 0; i < m; ++i) {
      os << "\n ";
      for (std::int64_t j = 0; j < n; ++j) os << ' ' << v[b * m * n + i + j * m];
    }
  }
  return os;
}

}  // namespace tenax
