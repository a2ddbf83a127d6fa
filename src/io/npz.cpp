// The non-template part of tenax/io/npz.hpp: loading, member lookup and writing, over src/io/zip.
#include "tenax/io/npz.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "zip.hpp"

namespace tenax {
namespace {

constexpr char kSuffix[] = ".npy";
constexpr std::size_t kSuffixLen = 4;

bool ends_npy(const std::string& s) {
  return s.size() >= kSuffixLen && s.compare(s.size() - kSuffixLen, kSuffixLen, kSuffix) == 0;
}

}  // namespace

Npz Npz::load(const std::string& path) {
  auto file = std::make_shared<const std::vector<char>>(detail::read_file("load_npz", path));
  Npz z;
  z.path_ = path;
  for (const detail::zip::Member& m : detail::zip::read_directory(path, file->data(), file->size())) {
    Entry e;
    e.name = ends_npy(m.name) ? m.name.substr(0, m.name.size() - kSuffixLen) : m.name;
    TENAX_CHECK(!z.contains(e.name), "load_npz", path, ": the archive holds '", e.name, "' twice");
    if (m.method == 0) {  // stored: read in place (the CRC is checked on a pass over the bytes)
      detail::zip::check_stored(path, file->data(), m);
      e.bytes = file;
      e.offset = static_cast<std::size_t>(m.data_offset);
    } else {
      e.bytes = std::make_shared<const std::vector<char>>(detail::zip::extract(path, file->data(), m));
    }
    e.size = static_cast<std::size_t>(m.size);
    detail::parse_npy_header(z.where(e), e.bytes->data() + e.offset, e.size);  // (throws when malformed)
    z.entries_.push_back(std::move(e));
  }
  return z;
}

void Npz::set_bytes(const std::string& name, DType dtype, const Shape& shape, const void* data, std::size_t bytes) {
  TENAX_CHECK(!name.empty(), "Npz::set", "empty array name");
  const std::string h = detail::npy_header(name, dtype, shape);
  auto b = std::make_shared<std::vector<char>>(h.begin(), h.end());
  b->insert(b->end(), static_cast<const char*>(data), static_cast<const char*>(data) + bytes);
  Entry e{name, b, 0, b->size()};
  const auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& x) { return x.name == name; });
  if (it != entries_.end())
    *it = std::move(e);
  else
    entries_.push_back(std::move(e));
}

const Npz::Entry& Npz::entry(const char* op, const std::string& name) const {
  for (const Entry& e : entries_)
    if (e.name == name) return e;
  std::string have;
  for (const Entry& e : entries_) have += (have.empty() ? "'" : ", '") + e.name + "'";
  detail::fail(op, "no array '", name, "' in ", path_, " (it holds ", have.empty() ? "none" : have, ")");
}

bool Npz::contains(const std::string& name) const {
  return std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.name == name; });
}

std::vector<std::string> Npz::names() const {
  std::vector<std::string> r;
  for (const Entry& e : entries_) r.push_back(e.name);
  return r;
}

DType Npz::dtype(const std::string& name) const {
  const Entry& e = entry("Npz::dtype", name);
  return detail::parse_npy_header(where(e), e.bytes->data() + e.offset, e.size).dtype;
}

Shape Npz::shape(const std::string& name) const {
  const Entry& e = entry("Npz::shape", name);
  return detail::parse_npy_header(where(e), e.bytes->data() + e.offset, e.size).shape;
}

void Npz::write(const std::string& path, bool compressed) const {
  detail::zip::Writer w(path, compressed);
  for (const Entry& e : entries_) w.add(e.name + kSuffix, {{e.bytes->data() + e.offset, e.size}});
  w.close();
}

}  // namespace tenax
