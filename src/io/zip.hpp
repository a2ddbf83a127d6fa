#pragma once
// The ZIP container of .npz files (internal to the library): reading an archive's members from its
// bytes, and writing members stored or deflated (zlib), with ZIP64 records where sizes or offsets
// need them. Only what NumPy's savez / savez_compressed write and read: one disk, no encryption,
// methods 0 (stored) and 8 (deflate).
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace tenax::detail::zip {

// One member of an archive read from memory: where its (possibly compressed) bytes lie.
struct Member {
  std::string name;
  std::uint16_t method = 0;  // 0 stored, 8 deflate
  std::uint32_t crc = 0;
  std::uint64_t compressed_size = 0, size = 0;
  std::uint64_t data_offset = 0;  // in the archive's bytes
};

// The members of the archive `bytes` (its central directory, each checked against the bytes it
// points to); throws tenax::Error naming `path` when the archive is malformed or truncated.
std::vector<Member> read_directory(const std::string& path, const char* bytes, std::size_t size);
// A member's uncompressed bytes, checked against its size and CRC-32.
std::vector<char> extract(const std::string& path, const char* bytes, const Member& m);
// Checks a stored member's CRC-32 where it lies (no copy).
void check_stored(const std::string& path, const char* bytes, const Member& m);

// Writes members one after another, then the central directory (close()).
class Writer {
 public:
  Writer(const std::string& path, bool deflate);
  // A member whose bytes are the concatenation of the parts (e.g. a .npy header and its data).
  void add(const std::string& name, const std::vector<std::pair<const void*, std::size_t>>& parts);
  void close();

 private:
  struct Entry {
    std::string name;
    std::uint16_t method;
    std::uint32_t crc;
    std::uint64_t compressed_size, size, offset;
  };
  void put(const void* p, std::size_t n);
  std::string path_;
  bool deflate_;
  std::ofstream out_;
  std::uint64_t at_ = 0;  // bytes written
  std::vector<Entry> entries_;
};

}  // namespace tenax::detail::zip
