// ZIP reading and writing for .npz files (src/io/zip.hpp), over zlib's deflate and CRC-32.
#include "zip.hpp"

#include <zlib.h>

#include <algorithm>
#include <limits>

#include "tenax/core/error.hpp"

namespace tenax::detail::zip {
namespace {

constexpr std::uint32_t kLocal = 0x04034b50, kCentral = 0x02014b50, kEnd = 0x06054b50, kEnd64 = 0x06064b50,
                        kLocator64 = 0x07064b50;
constexpr std::uint64_t kMax32 = 0xffffffffu;
// A file's DOS date and time: 1980-01-01 00:00, so that an archive's bytes depend on its contents only.
constexpr std::uint16_t kDosTime = 0, kDosDate = (1 << 5) | 1;
// zlib takes lengths as uInt: longer buffers go in pieces.
constexpr std::size_t kChunk = std::size_t{1} << 30;

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  throw Error("[load_npz] " + path + ": not a valid .npz (zip) file: " + what);
}

std::uint64_t le(const char* p, int n) {
  std::uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}
void put_le(std::string& b, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b += static_cast<char>((v >> (8 * i)) & 0xff);
}

std::uint32_t crc_of(std::uint32_t crc, const char* p, std::size_t n) {
  for (std::size_t i = 0; i < n; i += kChunk)
    crc = static_cast<std::uint32_t>(
        ::crc32(crc, reinterpret_cast<const Bytef*>(p + i), static_cast<uInt>(std::min(kChunk, n - i))));
  return crc;
}

}  // namespace

std::vector<Member> read_directory(const std::string& path, const char* p, std::size_t size) {
  if (size < 22) bad(path, "shorter than an end-of-directory record");
  // The end-of-central-directory record: the last one whose comment ends the file or before it.
  std::size_t end = std::numeric_limits<std::size_t>::max();
  for (std::size_t i = size - 22 + 1; i-- > 0 && size - 22 - i <= 65535;)
    if (le(p + i, 4) == kEnd && i + 22 + le(p + i + 20, 2) <= size) {
      end = i;
      break;
    }
  if (end == std::numeric_limits<std::size_t>::max()) bad(path, "no end-of-central-directory record");
  if (le(p + end + 4, 2) != 0 || le(p + end + 6, 2) != 0) bad(path, "a multi-disk archive");
  std::uint64_t count = le(p + end + 10, 2), cd_size = le(p + end + 12, 4), cd_off = le(p + end + 16, 4);
  if (count == 0xffff || cd_size == kMax32 || cd_off == kMax32) {  // ZIP64: the locator precedes the record
    if (end < 20 || le(p + end - 20, 4) != kLocator64) bad(path, "ZIP64 sizes without a ZIP64 locator");
    const std::uint64_t z = le(p + end - 20 + 8, 8);
    if (z > size || size - z < 56 || le(p + z, 4) != kEnd64) bad(path, "the ZIP64 end record is missing");
    count = le(p + z + 32, 8);
    cd_size = le(p + z + 40, 8);
    cd_off = le(p + z + 48, 8);
  }
  if (cd_off > size || cd_size > size - cd_off) bad(path, "the central directory lies outside the file");
  if (count > cd_size / 46)
    bad(path, std::to_string(count) + " members cannot fit a directory of " + std::to_string(cd_size) + " bytes");
  std::vector<Member> members;
  std::uint64_t at = cd_off;
  const std::uint64_t cd_end = cd_off + cd_size;
  for (std::uint64_t k = 0; k < count; ++k) {
    if (cd_end - at < 46 || le(p + at, 4) != kCentral) bad(path, "directory entry " + std::to_string(k) + " is broken");
    const char* e = p + at;
    const std::uint64_t flags = le(e + 8, 2), nlen = le(e + 28, 2), xlen = le(e + 30, 2), clen = le(e + 32, 2);
    if (cd_end - at - 46 < nlen + xlen + clen) bad(path, "directory entry " + std::to_string(k) + " is cut off");
    Member m;
    m.name.assign(e + 46, nlen);
    m.method = static_cast<std::uint16_t>(le(e + 10, 2));
    m.crc = static_cast<std::uint32_t>(le(e + 16, 4));
    m.compressed_size = le(e + 20, 4);
    m.size = le(e + 24, 4);
    std::uint64_t local = le(e + 42, 4);
    if (flags & 1) bad(path, "member '" + m.name + "' is encrypted");
    // ZIP64 extra field: 8-byte values for the 32-bit fields that are all ones, in this order.
    for (std::uint64_t x = 0; x + 4 <= xlen;) {
      const char* f = e + 46 + nlen + x;
      const std::uint64_t id = le(f, 2), len = le(f + 2, 2);
      if (x + 4 + len > xlen) bad(path, "member '" + m.name + "' has a cut-off extra field");
      if (id == 1) {
        std::uint64_t used = 0;
        for (std::uint64_t* v : {&m.size, &m.compressed_size, &local}) {
          if (*v != kMax32) continue;
          if (used + 8 > len) bad(path, "member '" + m.name + "' has a short ZIP64 field");
          *v = le(f + 4 + used, 8);
          used += 8;
        }
      }
      x += 4 + len;
    }
    if (local > size || size - local < 30 || le(p + local, 4) != kLocal)
      bad(path, "member '" + m.name + "' has no local header where the directory says");
    m.data_offset = local + 30 + le(p + local + 26, 2) + le(p + local + 28, 2);
    if (m.data_offset > size || m.compressed_size > size - m.data_offset)
      bad(path, "member '" + m.name + "' is truncated (" + std::to_string(m.compressed_size) + " bytes claimed)");
    if (m.method == 0 && m.compressed_size != m.size) bad(path, "stored member '" + m.name + "' has two sizes");
    members.push_back(std::move(m));
    at += 46 + nlen + xlen + clen;
  }
  return members;
}

std::vector<char> extract(const std::string& path, const char* bytes, const Member& m) {
  const char* src = bytes + m.data_offset;
  std::vector<char> out;
  if (m.method == 0) {
    out.assign(src, src + m.size);
  } else if (m.method == 8) {
    // (deflate expands at most about 1032:1: a larger claim is corrupt, and is not allocated)
    if (m.size / 1032 > m.compressed_size + 1)
      bad(path, "member '" + m.name + "' claims " + std::to_string(m.size) + " bytes from " +
                    std::to_string(m.compressed_size) + " compressed");
    out.resize(m.size);
    z_stream z{};
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK) bad(path, "zlib could not start inflating '" + m.name + "'");
    std::uint64_t in_at = 0, out_at = 0;
    int rc = Z_OK;
    while (rc == Z_OK) {
      const std::uint64_t in_left = m.compressed_size - in_at, out_left = m.size - out_at;
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(src + in_at));
      z.avail_in = static_cast<uInt>(std::min<std::uint64_t>(kChunk, in_left));
      z.next_out = reinterpret_cast<Bytef*>(out.data() + out_at);
      z.avail_out = static_cast<uInt>(std::min<std::uint64_t>(kChunk, out_left));
      const uInt give_in = z.avail_in, give_out = z.avail_out;
      rc = inflate(&z, Z_NO_FLUSH);
      in_at += give_in - z.avail_in;
      out_at += give_out - z.avail_out;
      if (rc == Z_OK && give_in == z.avail_in && give_out == z.avail_out) rc = Z_BUF_ERROR;  // no progress
    }
    inflateEnd(&z);
    if (rc != Z_STREAM_END || out_at != m.size)
      bad(path, "member '" + m.name + "' does not inflate to its " + std::to_string(m.size) + " bytes");
  } else {
    bad(path, "member '" + m.name + "' uses compression method " + std::to_string(m.method) +
                  " (stored and deflate are read)");
  }
  if (crc_of(0, out.data(), out.size()) != m.crc) bad(path, "member '" + m.name + "' fails its CRC-32 check");
  return out;
}

void check_stored(const std::string& path, const char* bytes, const Member& m) {
  if (m.method != 0) bad(path, "member '" + m.name + "' is not stored");
  if (crc_of(0, bytes + m.data_offset, m.size) != m.crc) bad(path, "member '" + m.name + "' fails its CRC-32 check");
}

Writer::Writer(const std::string& path, bool deflate)
    : path_(path), deflate_(deflate), out_(path, std::ios::binary | std::ios::trunc) {
  TENAX_CHECK(out_.good(), "save_npz", "cannot open ", path, " for writing");
}

void Writer::put(const void* p, std::size_t n) {
  if (n > 0) out_.write(static_cast<const char*>(p), static_cast<std::streamsize>(n));
  at_ += n;
}

void Writer::add(const std::string& name, const std::vector<std::pair<const void*, std::size_t>>& parts) {
  TENAX_CHECK(name.size() < 65536, "save_npz", "member name of ", name.size(), " bytes is too long (", path_, ")");
  Entry e{name, static_cast<std::uint16_t>(deflate_ ? 8 : 0), 0, 0, 0, at_};
  for (const auto& [p, n] : parts) {
    e.crc = crc_of(e.crc, static_cast<const char*>(p), n);
    e.size += n;
  }
  std::vector<char> packed;
  if (deflate_) {
    z_stream z{};
    TENAX_CHECK(deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK,
                "save_npz", "zlib could not start deflating (", path_, ")");
    packed.resize(deflateBound(&z, static_cast<uLong>(std::min<std::uint64_t>(e.size, kChunk))) + 64);
    std::size_t used = 0;
    const auto run = [&](const char* p, std::size_t n, int flush) {
      std::size_t at = 0;
      do {
        if (packed.size() - used < 64) packed.resize(packed.size() * 2);
        z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(p + at));
        z.avail_in = static_cast<uInt>(std::min(kChunk, n - at));
        z.next_out = reinterpret_cast<Bytef*>(packed.data() + used);
        z.avail_out = static_cast<uInt>(std::min(kChunk, packed.size() - used));
        const uInt give_in = z.avail_in, give_out = z.avail_out;
        const int rc = deflate(&z, flush);
        at += give_in - z.avail_in;
        used += give_out - z.avail_out;
        if (rc == Z_STREAM_END) return;
        if (rc != Z_OK && rc != Z_BUF_ERROR) {
          deflateEnd(&z);
          TENAX_CHECK(false, "save_npz", "zlib failed deflating '", name, "' (", path_, ")");
        }
      } while (at < n || (flush == Z_FINISH) || z.avail_out == 0);
    };
    for (const auto& [p, n] : parts) run(static_cast<const char*>(p), n, Z_NO_FLUSH);
    run(nullptr, 0, Z_FINISH);
    deflateEnd(&z);
    packed.resize(used);
    e.compressed_size = used;
  } else {
    e.compressed_size = e.size;
  }
  const bool z64 = e.size >= kMax32 || e.compressed_size >= kMax32;
  std::string h;
  put_le(h, kLocal, 4);
  put_le(h, z64 ? 45 : 20, 2);
  put_le(h, 1 << 11, 2);  // names are UTF-8
  put_le(h, e.method, 2);
  put_le(h, kDosTime, 2);
  put_le(h, kDosDate, 2);
  put_le(h, e.crc, 4);
  put_le(h, z64 ? kMax32 : e.compressed_size, 4);
  put_le(h, z64 ? kMax32 : e.size, 4);
  put_le(h, name.size(), 2);
  put_le(h, z64 ? 20 : 0, 2);
  h += name;
  if (z64) {
    put_le(h, 1, 2);
    put_le(h, 16, 2);
    put_le(h, e.size, 8);
    put_le(h, e.compressed_size, 8);
  }
  put(h.data(), h.size());
  if (deflate_) {
    put(packed.data(), packed.size());
  } else {
    for (const auto& [p, n] : parts) put(p, n);
  }
  TENAX_CHECK(out_.good(), "save_npz", "error writing ", path_);
  entries_.push_back(std::move(e));
}

void Writer::close() {
  const std::uint64_t cd_off = at_;
  for (const Entry& e : entries_) {
    std::string x;  // ZIP64 extra: the 8-byte values of the fields that do not fit 32 bits
    for (const std::uint64_t v : {e.size, e.compressed_size, e.offset})
      if (v >= kMax32) put_le(x, v, 8);
    std::string h;
    put_le(h, kCentral, 4);
    put_le(h, 45, 2);  // made by: version 4.5 (ZIP64), MS-DOS attributes
    put_le(h, x.empty() ? 20 : 45, 2);
    put_le(h, 1 << 11, 2);
    put_le(h, e.method, 2);
    put_le(h, kDosTime, 2);
    put_le(h, kDosDate, 2);
    put_le(h, e.crc, 4);
    put_le(h, std::min(e.compressed_size, kMax32), 4);
    put_le(h, std::min(e.size, kMax32), 4);
    put_le(h, e.name.size(), 2);
    put_le(h, x.empty() ? 0 : 4 + x.size(), 2);
    put_le(h, 0, 2);  // comment
    put_le(h, 0, 2);  // disk
    put_le(h, 0, 2);  // internal attributes
    put_le(h, 0, 4);  // external attributes
    put_le(h, std::min(e.offset, kMax32), 4);
    h += e.name;
    if (!x.empty()) {
      put_le(h, 1, 2);
      put_le(h, x.size(), 2);
      h += x;
    }
    put(h.data(), h.size());
  }
  const std::uint64_t cd_size = at_ - cd_off, n = entries_.size();
  std::string t;
  if (n >= 0xffff || cd_size >= kMax32 || cd_off >= kMax32) {
    const std::uint64_t z = at_;
    put_le(t, kEnd64, 4);
    put_le(t, 44, 8);
    put_le(t, 45, 2);
    put_le(t, 45, 2);
    put_le(t, 0, 4);
    put_le(t, 0, 4);
    put_le(t, n, 8);
    put_le(t, n, 8);
    put_le(t, cd_size, 8);
    put_le(t, cd_off, 8);
    put_le(t, kLocator64, 4);
    put_le(t, 0, 4);
    put_le(t, z, 8);
    put_le(t, 1, 4);
  }
  put_le(t, kEnd, 4);
  put_le(t, 0, 2);
  put_le(t, 0, 2);
  put_le(t, std::min<std::uint64_t>(n, 0xffff), 2);
  put_le(t, std::min<std::uint64_t>(n, 0xffff), 2);
  put_le(t, std::min(cd_size, kMax32), 4);
  put_le(t, std::min(cd_off, kMax32), 4);
  put_le(t, 0, 2);
  put(t.data(), t.size());
  out_.flush();
  TENAX_CHECK(out_.good(), "save_npz", "error writing ", path_);
  out_.close();
}

}  // namespace tenax::detail::zip
