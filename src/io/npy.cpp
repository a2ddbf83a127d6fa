// The non-template part of tenax/io/npy.hpp: reading and checking headers, writing files.
#include "tenax/io/npy.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace tenax::detail {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLen = 6;

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  throw Error("[load] " + path + ": not a valid .npy file: " + what);
}

// The value text after `key:` in a header dict ('key' or "key"), or npos.
std::size_t value_after(const std::string& h, const std::string& key) {
  for (const char q : {'\'', '"'}) {
    const std::size_t k = h.find(std::string(1, q) + key + q);
    if (k == std::string::npos) continue;
    std::size_t i = h.find(':', k + key.size() + 2);
    if (i == std::string::npos) return std::string::npos;
    ++i;
    while (i < h.size() && std::isspace(static_cast<unsigned char>(h[i]))) ++i;
    return i;
  }
  return std::string::npos;
}

struct Descr {
  const char* code;
  DType dtype;
};
constexpr Descr kDescrs[] = {{"b1", DType::Bool}, {"i4", DType::I32}, {"i8", DType::I64},  {"f4", DType::F32},
                             {"f8", DType::F64},  {"c8", DType::C64}, {"c16", DType::C128}};

const char* descr_code(DType d) {
  for (const Descr& e : kDescrs)
    if (e.dtype == d) return e.code;
  return nullptr;
}

}  // namespace

std::vector<char> read_file(const std::string& op, const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  TENAX_CHECK(f.good(), op, "cannot open ", path);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  TENAX_CHECK(!f.bad(), op, "error reading ", path);
  return bytes;
}

NpyHeader parse_npy_header(const std::string& path, const char* bytes, std::size_t size) {
  if (size < 10 || !std::equal(kMagic, kMagic + kMagicLen, bytes))
    bad(path, "the file does not start with the .npy magic string");
  const auto u8 = [&](std::size_t i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])); };
  const std::uint32_t major = u8(6);
  std::size_t start = 0, len = 0;
  if (major == 1) {
    start = 10;
    len = u8(8) | (u8(9) << 8);
  } else if (major == 2 || major == 3) {
    if (size < 12) bad(path, "the header length is cut off");
    start = 12;
    len = u8(8) | (u8(9) << 8) | (u8(10) << 16) | (u8(11) << 24);
  } else {
    bad(path, "format version " + std::to_string(major) + "." + std::to_string(u8(7)) + " is not supported (1, 2, 3)");
  }
  if (len > size - start)
    bad(path, "the header claims " + std::to_string(len) + " bytes, the file has " + std::to_string(size - start));
  const std::string h(bytes + start, len);
  NpyHeader r;
  r.data_offset = start + len;

  // descr: '<f8' and the like.
  std::size_t i = value_after(h, "descr");
  if (i == std::string::npos || i >= h.size() || (h[i] != '\'' && h[i] != '"')) bad(path, "no 'descr' string");
  const std::size_t end = h.find(h[i], i + 1);
  if (end == std::string::npos) bad(path, "unterminated 'descr'");
  const std::string descr = h.substr(i + 1, end - i - 1);
  if (descr.size() < 2 || std::string("<>|=").find(descr[0]) == std::string::npos)
    bad(path, "unsupported descr '" + descr + "' (structured or without byte order)");
  const std::string code = descr.substr(1);
  bool known = false;
  for (const Descr& e : kDescrs)
    if (code == e.code) r.dtype = e.dtype, known = true;
  if (!known)
    bad(path, "unsupported dtype '" + descr + "' (bool, int32, int64, float32, float64, complex64, complex128)");
  r.swap_bytes = descr[0] == '>' && code != "b1";

  // fortran_order: True or False.
  i = value_after(h, "fortran_order");
  if (i == std::string::npos) bad(path, "no 'fortran_order'");
  if (h.compare(i, 4, "True") == 0)
    r.fortran_order = true;
  else if (h.compare(i, 5, "False") == 0)
    r.fortran_order = false;
  else
    bad(path, "'fortran_order' is neither True nor False");

  // shape: (a, b, ...), () for a scalar.
  i = value_after(h, "shape");
  if (i == std::string::npos || i >= h.size() || h[i] != '(') bad(path, "no 'shape' tuple");
  const std::size_t close = h.find(')', i);
  if (close == std::string::npos) bad(path, "unterminated 'shape'");
  std::string dims = h.substr(i + 1, close - i - 1);
  std::replace(dims.begin(), dims.end(), ',', ' ');
  std::istringstream in(dims);
  std::string tok;
  while (in >> tok) {
    if (tok.empty() || !std::all_of(tok.begin(), tok.end(),
                                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == 'L'; }))
      bad(path, "shape entry '" + tok + "' is not a non-negative integer");
    if (r.shape.size() >= kMaxRank) bad(path, "more than " + std::to_string(kMaxRank) + " dimensions");
    std::int64_t v = 0;
    for (char c : tok) {
      if (c == 'L') break;
      if (v > (INT64_MAX - 9) / 10) bad(path, "shape entry '" + tok + "' overflows");
      v = v * 10 + (c - '0');
    }
    r.shape.push_back(v);
  }
  checked_numel(r.shape, "load", " (" + path + ")");  // the element count must fit
  return r;
}

std::string npy_header(const std::string& path, DType dtype, const Shape& shape) {
  const char* code = descr_code(dtype);
  TENAX_CHECK(code != nullptr, "save", "no .npy dtype for ", dtype_name(dtype), " (", path, ")");
  std::string h =
      std::string("{'descr': '") + (dtype == DType::Bool ? "|" : "<") + code + "', 'fortran_order': True, 'shape': (";
  for (int d = 0; d < shape.size(); ++d)
    h += std::to_string(shape[d]) + (shape.size() == 1 || d + 1 < shape.size() ? ", " : "");
  if (shape.size() == 1) h.pop_back();  // "(3,)"
  h += "), }";
  // Spaces and a newline so that the data starts at a multiple of 64 bytes.
  const std::size_t total = ((10 + h.size() + 1 + 63) / 64) * 64;
  h.append(total - 10 - h.size() - 1, ' ');
  h += '\n';
  TENAX_CHECK(h.size() < 65536, "save", "header of ", h.size(), " bytes is too long for format 1.0 (", path, ")");
  const char pre[10] = {kMagic[0],
                        kMagic[1],
                        kMagic[2],
                        kMagic[3],
                        kMagic[4],
                        kMagic[5],
                        1,
                        0,
                        static_cast<char>(h.size() & 0xff),
                        static_cast<char>(h.size() >> 8)};
  return std::string(pre, 10) + h;
}

void write_npy(const std::string& path, DType dtype, const Shape& shape, const void* data, std::size_t bytes) {
  const std::string h = npy_header(path, dtype, shape);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  TENAX_CHECK(f.good(), "save", "cannot open ", path, " for writing");
  f.write(h.data(), static_cast<std::streamsize>(h.size()));
  if (bytes > 0) f.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  f.flush();
  TENAX_CHECK(f.good(), "save", "error writing ", path);
}

void swap_element_bytes(char* p, std::size_t count, std::size_t size) {
  for (std::size_t i = 0; i < count; ++i) std::reverse(p + i * size, p + (i + 1) * size);
}

}  // namespace tenax::detail
