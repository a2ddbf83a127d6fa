#pragma once
// NumPy's .npy format: save(path, x) and load<T>(path).
//
// tenax is column-major, which .npy calls fortran_order: save writes the header
// {'descr': ..., 'fortran_order': True, 'shape': (...)} and the elements in tenax's order, no
// transpose (a device tensor is copied to the host first). load reads versions 1.0, 2.0 and 3.0,
// both orders (a C-order array is transposed into tenax's layout), little- and big-endian data,
// and the dtypes bool, int32, int64, float32, float64, complex64, complex128; T must be the file's
// dtype (the error names both). A missing, malformed or truncated file raises tenax::Error naming
// the path and what is wrong; nothing in the file is trusted before it is checked.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "tenax/core/tensor.hpp"
#include "tenax/ops/shape/cast.hpp"
#include "tenax/ops/shape/transpose.hpp"

namespace tenax {
namespace detail {

// What a .npy header says.
struct NpyHeader {
  DType dtype = DType::F64;
  bool fortran_order = true;
  bool swap_bytes = false;  // big-endian data on this little-endian host
  Shape shape;
  std::size_t data_offset = 0;  // bytes before the data
};

// Parses the header of a .npy file's bytes (throws tenax::Error naming `path` on anything
// malformed; `path` names the file, or the archive member, in messages).
NpyHeader parse_npy_header(const std::string& path, const char* bytes, std::size_t size);
// The whole file (throws when it cannot be read).
std::vector<char> read_file(const std::string& op, const std::string& path);
// The header block of a version 1.0 file (magic, version, length, dict padded to 64 bytes) for
// dtype and shape, fortran_order True; the data follows it.
std::string npy_header(const std::string& path, DType dtype, const Shape& shape);
// Writes a version 1.0 file (fortran_order True): the header for dtype and shape, then `bytes` of data.
void write_npy(const std::string& path, DType dtype, const Shape& shape, const void* data, std::size_t bytes);
// Reverses the byte order of `count` values of `size` bytes each, in place.
void swap_element_bytes(char* p, std::size_t count, std::size_t size);

// The tensor a .npy file's bytes hold (`path` names it in messages), on `device`.
template <Scalar T>
Tensor<T> npy_decode(const std::string& path, const char* bytes, std::size_t size, Device device) {
  const NpyHeader h = parse_npy_header(path, bytes, size);
  TENAX_CHECK(h.dtype == dtype_traits<T>::value, "load", path, " holds ", dtype_name(h.dtype), " data, asked for ",
              dtype_traits<T>::name);
  // A C-order array of shape (a, b, c) is, read in order, the column-major array of shape (c, b, a).
  Shape file_shape = h.shape;
  if (!h.fortran_order) std::reverse(file_shape.begin(), file_shape.end());
  // (checked before allocating: the shape is the file's claim)
  const std::size_t have = size - h.data_offset, count = static_cast<std::size_t>(numel_of(h.shape));
  TENAX_CHECK(count <= have / sizeof(T), "load", path, " is truncated: shape ", h.shape, " of ", dtype_name(h.dtype),
              " needs ", count, " x ", sizeof(T), " bytes of data, the file has ", have);
  Tensor<T> t = Tensor<T>::empty(file_shape, Device::cpu());
  const std::size_t n = count * sizeof(T);
  if (n > 0) std::memcpy(t.mutable_data(), bytes + h.data_offset, n);
  if constexpr (std::is_same_v<T, bool>) {  // any nonzero byte is True (NumPy's reading); a bool holds 0 or 1
    auto* b = reinterpret_cast<unsigned char*>(t.mutable_data());
    for (std::size_t i = 0; i < n; ++i) b[i] = b[i] != 0;
  }
  if (h.swap_bytes) {  // (complex: each component)
    constexpr std::size_t parts = is_complex_v<T> ? 2 : 1;
    swap_element_bytes(reinterpret_cast<char*>(t.mutable_data()), static_cast<std::size_t>(t.numel()) * parts,
                       sizeof(T) / parts);
  }
  if (!h.fortran_order && t.dim() > 1) {
    Shape order;
    for (int d = t.dim() - 1; d >= 0; --d) order.push_back(d);
    t = contiguous(permute(t, order));
  }
  return t.to(device);
}

}  // namespace detail

template <Scalar T>
void save(const std::string& path, const Tensor<T>& x) {
  TENAX_CHECK(x.defined(), "save", "undefined tensor (", path, ")");
  const Tensor<T> c = contiguous(x.to(Device::cpu()));
  detail::write_npy(path, dtype_traits<T>::value, c.shape(), c.data(), static_cast<std::size_t>(c.numel()) * sizeof(T));
}

template <Scalar T>
Tensor<T> load(const std::string& path, Device device = Device::cpu()) {
  const std::vector<char> bytes = detail::read_file("load", path);
  return detail::npy_decode<T>(path, bytes.data(), bytes.size(), device);
}

}  // namespace tenax
