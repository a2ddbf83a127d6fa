#pragma once
// NumPy's .npz archives: named arrays in one ZIP file, each member a .npy file (io/npy.hpp), as
// numpy.savez / savez_compressed write them and numpy.load reads them.
//
//   tx::Npz z;
//   z.set("w", w);                       // any dtype; a device tensor is copied to the host
//   z.set("pivots", piv);
//   z.save("model.npz");                 // or z.save_compressed(...) (deflate, zlib)
//   tx::Npz r = tx::Npz::load("model.npz");
//   tx::Tensor<double> w2 = r.get<double>("w", tx::Device::cuda(0));
//
// Names are given without NumPy's ".npy" member suffix. Reading accepts stored and deflated
// members and ZIP64 archives; every member is extracted and checked (sizes, CRC-32, .npy header)
// when the archive is loaded, so a malformed or truncated file raises tenax::Error naming the path
// and the member there, never later and never a crash.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "tenax/io/npy.hpp"

namespace tenax {

class Npz {
 public:
  Npz() = default;
  // Reads the archive at path (throws tenax::Error naming path when it is not a valid .npz).
  static Npz load(const std::string& path);
  // Writes the arrays, in the order they were set, uncompressed (numpy.savez) or deflated
  // (numpy.savez_compressed).
  void save(const std::string& path) const { write(path, false); }
  void save_compressed(const std::string& path) const { write(path, true); }

  // Adds x under name, or replaces the array of that name.
  template <Scalar T>
  void set(const std::string& name, const Tensor<T>& x) {
    TENAX_CHECK(x.defined(), "Npz::set", "undefined tensor for '", name, "'");
    const Tensor<T> c = contiguous(x.to(Device::cpu()));
    set_bytes(name, dtype_traits<T>::value, c.shape(), c.data(), static_cast<std::size_t>(c.numel()) * sizeof(T));
  }
  // The array of that name on device; T must be its dtype (the error names both).
  template <Scalar T>
  Tensor<T> get(const std::string& name, Device device = Device::cpu()) const {
    const Entry& e = entry("Npz::get", name);
    return detail::npy_decode<T>(where(e), e.bytes->data() + e.offset, e.size, device);
  }

  bool contains(const std::string& name) const;
  // The arrays' names, in the archive's order.
  std::vector<std::string> names() const;
  DType dtype(const std::string& name) const;
  // The array's shape (as get returns it, whichever order the file stores).
  Shape shape(const std::string& name) const;
  std::size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::string name;
    std::shared_ptr<const std::vector<char>> bytes;  // the member's .npy file at offset, size bytes
    std::size_t offset = 0, size = 0;
  };
  void set_bytes(const std::string& name, DType dtype, const Shape& shape, const void* data, std::size_t bytes);
  const Entry& entry(const char* op, const std::string& name) const;
  std::string where(const Entry& e) const { return path_ + ":" + e.name; }
  void write(const std::string& path, bool compressed) const;

  std::string path_ = "<Npz>";  // the file it was loaded from, for messages
  std::vector<Entry> entries_;
};

}  // namespace tenax
