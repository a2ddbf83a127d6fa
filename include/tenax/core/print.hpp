#pragma once
// Printing tensors: shape, dtype, device and the values (matrices as rows, batches in turn; a
// device tensor's values come to the host first). Like NumPy, a tensor of more than
// print_options().threshold elements is summarised: the first and last `edgeitems` rows, columns
// and batch matrices, with "..." for the rest. Values are printed with `precision` significant
// digits (the stream's precision is restored afterwards).
#include <cstdint>
#include <ios>
#include <ostream>
#include <vector>

#include "tenax/core/shared_state.hpp"
#include "tenax/core/tensor.hpp"

namespace tenax {

struct PrintOptions {
  int precision = 6;              // significant digits
  std::int64_t threshold = 1000;  // more elements than this: summarised
  std::int64_t edgeitems = 3;     // rows, columns and batch matrices shown at each end when summarised
};

// The process-wide options (set them before printing from several threads).
TENAX_SHARED_STATE inline PrintOptions& print_options() {
  static PrintOptions o;
  return o;
}
inline void set_print_options(const PrintOptions& o) { print_options() = o; }

namespace detail {
// The indices of an extent to show: all, or the first and last `edge` with -1 for the gap.
inline std::vector<std::int64_t> shown_indices(std::int64_t extent, bool summarise, std::int64_t edge) {
  std::vector<std::int64_t> r;
  if (!summarise || extent <= 2 * edge) {
    for (std::int64_t i = 0; i < extent; ++i) r.push_back(i);
    return r;
  }
  for (std::int64_t i = 0; i < edge; ++i) r.push_back(i);
  r.push_back(-1);
  for (std::int64_t i = extent - edge; i < extent; ++i) r.push_back(i);
  return r;
}
}  // namespace detail

template <Scalar T>
std::ostream& operator<<(std::ostream& os, const Tensor<T>& t) {
  if (!t.defined()) return os << "Tensor(undefined)";
  os << "Tensor(" << dtype_traits<T>::name << ", shape=" << t.shape() << ", " << t.device().str();
  if (t.tracks_grad()) os << ", requires_grad";
  os << ")";
  if (t.numel() == 0) return os;
  const PrintOptions opt = print_options();
  const bool summarise = t.numel() > opt.threshold;
  const std::int64_t edge = std::max<std::int64_t>(opt.edgeitems, 1);
  const auto v = t.to_vector();  // a device tensor's values are copied to the host
  const std::int64_t m = t.dim() >= 1 ? t.shape()[0] : 1, n = t.dim() >= 2 ? t.shape()[1] : 1;
  const std::int64_t mats = t.numel() / (m * n);
  const std::streamsize prec = os.precision(opt.precision);
  for (std::int64_t b : detail::shown_indices(mats, summarise, edge)) {
    if (b < 0) {
      os << "\n...";
      continue;
    }
    if (mats > 1) os << "\n[batch " << b << "]";
    for (std::int64_t i : detail::shown_indices(m, summarise, edge)) {
      os << "\n ";
      for (std::int64_t j : detail::shown_indices(n, summarise, edge)) {
        if (i < 0)
          os << " ...";
        else if (j < 0)
          os << " ...";
        else
          os << ' ' << v[static_cast<std::size_t>(b * m * n + i + j * m)];
      }
    }
  }
  os.precision(prec);
  return os;
}

}  // namespace tenax
