// save/load in NumPy's .npy format: round trips of every dtype and shape, the header NumPy expects,
// files written by NumPy in C order, big-endian and version 2.0, clear errors for bad files, and
// random corruptions of a valid file (each loads or raises tenax::Error, never crashes).
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <tenax/tenax.hpp>

#include "support/messages.hpp"

namespace tx = tenax;
using tx::testing::expect_error;

namespace {

std::string tmp(const std::string& name) { return ::testing::TempDir() + "tenax_npy_" + name + ".npy"; }

std::vector<char> bytes_of(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}
void write_bytes(const std::string& path, const std::vector<char>& b) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(b.data(), static_cast<std::streamsize>(b.size()));
}

// A version-1.0 file with the given header dict and raw data, padded as NumPy pads it.
std::vector<char> npy_file(std::string dict, const std::vector<char>& data, int major = 1) {
  const std::size_t pre = major == 1 ? 10 : 12;
  const std::size_t total = ((pre + dict.size() + 1 + 63) / 64) * 64;
  dict.append(total - pre - dict.size() - 1, ' ');
  dict += '\n';
  std::vector<char> b = {'\x93', 'N', 'U', 'M', 'P', 'Y', static_cast<char>(major), 0};
  const std::size_t n = dict.size();
  b.push_back(static_cast<char>(n & 0xff));
  b.push_back(static_cast<char>((n >> 8) & 0xff));
  if (major != 1) b.push_back(0), b.push_back(0);
  b.insert(b.end(), dict.begin(), dict.end());
  b.insert(b.end(), data.begin(), data.end());
  return b;
}
template <class T>
std::vector<char> raw(const std::vector<T>& v, bool big_endian = false) {
  std::vector<char> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  if (big_endian) {
    const std::size_t part =
        sizeof(T) == 16 || (sizeof(T) == 8 && std::is_same_v<T, std::complex<float>>) ? sizeof(T) / 2 : sizeof(T);
    for (std::size_t i = 0; i < b.size(); i += part)
      std::reverse(b.begin() + static_cast<std::ptrdiff_t>(i), b.begin() + static_cast<std::ptrdiff_t>(i + part));
  }
  return b;
}

template <class T>
tx::Tensor<T> sample(const tx::Shape& shape, std::uint64_t seed) {
  if constexpr (std::is_same_v<T, bool>)
    return tx::gt(tx::Tensor<double>::randn(shape, seed), tx::Tensor<double>::zeros({}));
  else if constexpr (std::is_integral_v<T>)
    return tx::cast<T>(tx::mul(tx::Tensor<double>::randn(shape, seed), 1000.0));
  else
    return tx::Tensor<T>::randn(shape, seed);
}

template <class T>
void round_trip(const tx::Shape& shape, std::uint64_t seed) {
  const tx::Tensor<T> x = sample<T>(shape, seed);
  const std::string p = tmp(std::string(tx::dtype_traits<T>::name) + "_" + std::to_string(shape.size()));
  tx::save(p, x);
  const tx::Tensor<T> y = tx::load<T>(p);
  ASSERT_EQ(y.shape(), x.shape()) << p;
  EXPECT_EQ(y.to_vector(), x.to_vector()) << p;
  std::remove(p.c_str());
}

template <class T>
void round_trips() {
  for (const tx::Shape& s : {tx::Shape{}, tx::Shape{3}, tx::Shape{2, 3}, tx::Shape{2, 0}, tx::Shape{2, 3, 4}})
    round_trip<T>(s, 5);
}

TEST(Npy, RoundTripsEveryDtypeAndShape) {
  round_trips<bool>();
  round_trips<std::int32_t>();
  round_trips<std::int64_t>();
  round_trips<float>();
  round_trips<double>();
  round_trips<std::complex<float>>();
  round_trips<std::complex<double>>();
  // A view is saved as its values, in tenax's (column-major) order.
  const auto a = tx::Tensor<double>::randn({3, 4}, 6);
  tx::save(tmp("view"), tx::transpose(a, 0, 1));
  EXPECT_EQ(tx::load<double>(tmp("view")).to_vector(), tx::contiguous(tx::transpose(a, 0, 1)).to_vector());
}

TEST(Npy, WritesTheHeaderNumPyReads) {
  tx::save(tmp("header"), tx::Tensor<double>::zeros({2, 3}));
  const std::vector<char> b = bytes_of(tmp("header"));
  ASSERT_GE(b.size(), 128u);
  EXPECT_EQ(std::string(b.data() + 1, 5), "NUMPY");
  EXPECT_EQ(b[6], 1);
  const std::size_t len = static_cast<unsigned char>(b[8]) | (static_cast<unsigned char>(b[9]) << 8);
  EXPECT_EQ((10 + len) % 64, 0u);
  const std::string h(b.data() + 10, len);
  EXPECT_EQ(h.rfind("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", 0), 0u) << h;
  EXPECT_EQ(h.back(), '\n');
  EXPECT_EQ(b.size(), 10 + len + 6 * sizeof(double));
  tx::save(tmp("header1"), tx::Tensor<std::complex<float>>::zeros({5}));
  const std::vector<char> c = bytes_of(tmp("header1"));
  EXPECT_NE(std::string(c.data(), c.size()).find("'descr': '<c8', 'fortran_order': True, 'shape': (5,), }"),
            std::string::npos);
  tx::save(tmp("header0"), tx::Tensor<bool>::zeros({}));
  const std::vector<char> d = bytes_of(tmp("header0"));
  EXPECT_NE(std::string(d.data(), d.size()).find("'descr': '|b1', 'fortran_order': True, 'shape': (), }"),
            std::string::npos);
}

TEST(Npy, ReadsCOrderBigEndianAndVersion2) {
  // NumPy's default: C order. Row-major 0..5 of shape (2, 3): element (i, j) = 3 i + j.
  write_bytes(tmp("corder"), npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }",
                                      raw(std::vector<double>{0, 1, 2, 3, 4, 5})));
  const auto c = tx::load<double>(tmp("corder"));
  ASSERT_EQ(c.shape(), (tx::Shape{2, 3}));
  EXPECT_EQ(c.to_vector(), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  // C order, rank 3: element (i, j, k) = 12 i + 4 j + k.
  std::vector<std::int32_t> r3(24);
  for (int i = 0; i < 24; ++i) r3[static_cast<std::size_t>(i)] = i;
  write_bytes(tmp("corder3"), npy_file("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3, 4), }", raw(r3)));
  const auto t3 = tx::load<std::int32_t>(tmp("corder3"));
  EXPECT_EQ(t3.at({1, 2, 3}), 12 + 8 + 3);
  EXPECT_EQ(t3.at({0, 1, 2}), 4 + 2);
  // Big-endian data, real and complex.
  write_bytes(tmp("big"), npy_file("{'descr': '>f8', 'fortran_order': True, 'shape': (3,), }",
                                   raw(std::vector<double>{1.5, -2, 3e10}, true)));
  EXPECT_EQ(tx::load<double>(tmp("big")).to_vector(), (std::vector<double>{1.5, -2, 3e10}));
  write_bytes(tmp("bigc"), npy_file("{'descr': '>c16', 'fortran_order': True, 'shape': (2,), }",
                                    raw(std::vector<std::complex<double>>{{1, 2}, {-3, 0.5}}, true)));
  EXPECT_EQ(tx::load<std::complex<double>>(tmp("bigc")).to_vector(),
            (std::vector<std::complex<double>>{{1, 2}, {-3, 0.5}}));
  // Bool bytes other than 0 and 1 are True, as NumPy reads them (a bool must hold 0 or 1: fuzz_io
  // found a copy of such bytes, fuzz/corpus/io/regress-bool-bytes-not-0-or-1).
  write_bytes(tmp("bool"), npy_file("{'descr': '|b1', 'fortran_order': False, 'shape': (2, 2), }", {0, 2, '\xff', 1}));
  EXPECT_EQ(tx::load<bool>(tmp("bool")).to_vector(), (std::vector<bool>{false, true, true, true}));
  // Version 2.0 (a 4-byte header length) and double quotes.
  write_bytes(tmp("v2"), npy_file("{\"descr\": \"<i8\", \"fortran_order\": True, \"shape\": (2,), }",
                                  raw(std::vector<std::int64_t>{7, -9}), 2));
  EXPECT_EQ(tx::load<std::int64_t>(tmp("v2")).to_vector(), (std::vector<std::int64_t>{7, -9}));
}

TEST(Npy, BadFilesRaise) {
  const std::string p = tmp("bad");
  expect_error([&] { tx::load<double>(::testing::TempDir() + "no_such_file.npy"); }, "[load] cannot open");
  write_bytes(p, {'h', 'e', 'l', 'l', 'o', '!', '!', '!', '!', '!', '!'});
  expect_error([&] { tx::load<double>(p); }, "[load]", {"magic"});
  tx::save(p, tx::Tensor<double>::ones({4}));
  std::vector<char> b = bytes_of(p);
  b.resize(b.size() - 8);
  write_bytes(p, b);
  expect_error([&] { tx::load<double>(p); }, "[load]", {"truncated", "shape [4]"});
  expect_error([&] { tx::load<float>(p); }, "[load]", {"holds f64 data, asked for f32"});
  b.resize(40);
  write_bytes(p, b);
  expect_error([&] { tx::load<double>(p); }, "[load]", {"header claims"});
  const auto data = raw(std::vector<double>{1, 2});
  write_bytes(p, npy_file("{'descr': '<u2', 'fortran_order': True, 'shape': (2,), }", data));
  expect_error([&] { tx::load<double>(p); }, "[load]", {"unsupported dtype '<u2'"});
  write_bytes(p, npy_file("{'descr': '|O', 'fortran_order': True, 'shape': (2,), }", data));
  expect_error([&] { tx::load<double>(p); }, "[load]", {"unsupported"});
  write_bytes(p, npy_file("{'descr': '<f8', 'fortran_order': Maybe, 'shape': (2,), }", data));
  expect_error([&] { tx::load<double>(p); }, "[load]", {"fortran_order"});
  write_bytes(p, npy_file("{'descr': '<f8', 'fortran_order': True, 'shape': (2, -1), }", data));
  expect_error([&] { tx::load<double>(p); }, "[load]", {"shape entry '-1'"});
  // A huge claimed shape is refused before anything is allocated.
  write_bytes(p, npy_file("{'descr': '<f8', 'fortran_order': True, 'shape': (100000000000,), }", data));
  expect_error([&] { tx::load<double>(p); }, "[load]", {"truncated"});
  write_bytes(p, npy_file("{'descr': '<f8', 'fortran_order': True, 'shape': (99999999999999999999,), }", data));
  expect_error([&] { tx::load<double>(p); }, "[load]", {"overflows"});
  std::vector<char> v9 = npy_file("{'descr': '<f8', 'fortran_order': True, 'shape': (2,), }", data);
  v9[6] = 9;
  write_bytes(p, v9);
  expect_error([&] { tx::load<double>(p); }, "[load]", {"version 9.0"});
  expect_error([&] { tx::save(p, tx::Tensor<double>()); }, "[save] undefined tensor");
  expect_error([&] { tx::save(::testing::TempDir() + "no/such/dir/x.npy", tx::Tensor<double>::ones({1})); },
               "[save] cannot open");
}

TEST(Npy, CorruptedFilesLoadOrRaise) {
  // Random byte changes, truncations and extensions of valid files of every layout: each load
  // returns a tensor or raises tenax::Error (under the sanitizers: no invalid access either).
  const std::string p = tmp("fuzz");
  std::vector<std::vector<char>> seeds;
  tx::save(p, tx::Tensor<double>::randn({3, 2}, 7));
  seeds.push_back(bytes_of(p));
  seeds.push_back(npy_file("{'descr': '>c8', 'fortran_order': False, 'shape': (2, 2), }",
                           raw(std::vector<std::complex<float>>(4, {1, 2}), true)));
  std::mt19937_64 rng(11);
  int loaded = 0, raised = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<char> b = seeds[static_cast<std::size_t>(trial) % seeds.size()];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const std::uint64_t kind = rng() % 8;
      if (kind == 0 && !b.empty()) {
        b.resize(rng() % b.size());
      } else if (kind == 1) {
        b.push_back(static_cast<char>(rng()));
      } else if (!b.empty()) {
        // Mostly within the header, where the parser is.
        const std::size_t at = rng() % std::min<std::size_t>(b.size(), kind < 6 ? 80 : b.size());
        b[at] =
            static_cast<char>(kind < 4 ? "0123456789(),:' -LTrueFalse<>|fic"[rng() % 34] : static_cast<char>(rng()));
      }
    }
    write_bytes(p, b);
    try {
      if (trial % 2 == 0)
        (void)tx::load<double>(p);
      else
        (void)tx::load<std::complex<float>>(p);
      ++loaded;
    } catch (const tx::Error&) {
      ++raised;
    }
  }
  EXPECT_EQ(loaded + raised, 3000);
  EXPECT_GT(raised, 0);
  std::remove(p.c_str());
}

// ---- .npz archives -------------------------------------------------------------------------

std::string tmpz(const std::string& name) { return ::testing::TempDir() + "tenax_npz_" + name + ".npz"; }
std::string data_file(const std::string& name) { return std::string(TENAX_SOURCE_DIR) + "/tests/data/" + name; }

TEST(Npz, RoundTripsEveryDtypeStoredAndDeflated) {
  tx::Npz z;
  z.set("b", sample<bool>({2, 3}, 1));
  z.set("i4", sample<std::int32_t>({4}, 2));
  z.set("i8", sample<std::int64_t>({}, 3));
  z.set("f4", sample<float>({2, 0}, 4));
  z.set("f8", tx::transpose(sample<double>({3, 4}, 5), 0, 1));  // a view: saved as its values
  z.set("c8", sample<std::complex<float>>({2, 2, 2}, 6));
  z.set("c16", sample<std::complex<double>>({5, 1}, 7));
  EXPECT_EQ(z.names(), (std::vector<std::string>{"b", "i4", "i8", "f4", "f8", "c8", "c16"}));
  for (const bool compressed : {false, true}) {
    const std::string p = tmpz(compressed ? "deflated" : "stored");
    compressed ? z.save_compressed(p) : z.save(p);
    const tx::Npz r = tx::Npz::load(p);
    EXPECT_EQ(r.names(), z.names());
    EXPECT_EQ(r.get<bool>("b").to_vector(), z.get<bool>("b").to_vector());
    EXPECT_EQ(r.get<std::int32_t>("i4").to_vector(), sample<std::int32_t>({4}, 2).to_vector());
    EXPECT_EQ(r.get<std::int64_t>("i8").shape(), tx::Shape{});
    EXPECT_EQ(r.get<float>("f4").shape(), (tx::Shape{2, 0}));
    EXPECT_EQ(r.get<double>("f8").to_vector(),
              tx::contiguous(tx::transpose(sample<double>({3, 4}, 5), 0, 1)).to_vector());
    EXPECT_EQ(r.get<std::complex<float>>("c8").to_vector(), sample<std::complex<float>>({2, 2, 2}, 6).to_vector());
    EXPECT_EQ(r.get<std::complex<double>>("c16").to_vector(), sample<std::complex<double>>({5, 1}, 7).to_vector());
    EXPECT_EQ(r.dtype("c8"), tx::DType::C64);
    EXPECT_EQ(r.shape("f8"), (tx::Shape{4, 3}));
    std::remove(p.c_str());
  }
  // Deflate pays on redundant data; the same archive written twice has the same bytes.
  tx::Npz zeros;
  zeros.set("z", tx::Tensor<double>::zeros({100, 100}));
  zeros.save(tmpz("zeros"));
  zeros.save_compressed(tmpz("zeros_c"));
  EXPECT_LT(bytes_of(tmpz("zeros_c")).size() * 20, bytes_of(tmpz("zeros")).size());
  zeros.save_compressed(tmpz("zeros_c2"));
  EXPECT_EQ(bytes_of(tmpz("zeros_c")), bytes_of(tmpz("zeros_c2")));
  // set replaces an array of the same name, keeping its place.
  z.set("i4", tx::Tensor<std::int32_t>::ones({1}));
  EXPECT_EQ(z.names().at(1), "i4");
  EXPECT_EQ(z.get<std::int32_t>("i4").to_vector(), (std::vector<std::int32_t>{1}));
  EXPECT_TRUE(z.contains("c16"));
  EXPECT_FALSE(z.contains("c16.npy"));
}

TEST(Npz, ReadsNumPysArchives) {
  // Written by numpy 1.24: np.savez(f, a=..., b=..., c=..., d=..., e=...) and savez_compressed;
  // a is C order, b Fortran order (tests/data/README.md has the script).
  for (const char* f : {"numpy_savez.npz", "numpy_savez_compressed.npz"}) {
    const tx::Npz z = tx::Npz::load(data_file(f));
    EXPECT_EQ(z.names(), (std::vector<std::string>{"a", "b", "c", "d", "e"})) << f;
    const auto a = z.get<double>("a");  // np.arange(6).reshape(2, 3): a[i, j] = 3 i + j
    ASSERT_EQ(a.shape(), (tx::Shape{2, 3}));
    EXPECT_EQ(a.at({1, 2}), 5.0);
    EXPECT_EQ(a.at({1, 0}), 3.0);
    const auto b = z.get<std::complex<float>>("b");  // arange(12).reshape(3, 4) * (1 + 2j)
    ASSERT_EQ(b.shape(), (tx::Shape{3, 4}));
    EXPECT_EQ(b.at({2, 1}), std::complex<float>(9, 18));
    EXPECT_EQ(z.get<std::int64_t>("c").to_vector(), (std::vector<std::int64_t>{3, -1, 7}));
    EXPECT_EQ(z.get<float>("d").item(), 2.5f);
    EXPECT_EQ(z.get<bool>("e").to_vector(), (std::vector<bool>{true, false, false, true}));
  }
}

TEST(Npz, BadArchivesRaise) {
  expect_error([&] { tx::Npz::load(::testing::TempDir() + "no_such.npz"); }, "[load_npz] cannot open");
  const std::string p = tmpz("bad");
  write_bytes(p, std::vector<char>(100, 'x'));
  expect_error([&] { tx::Npz::load(p); }, "[load_npz]", {"no end-of-central-directory record"});
  std::vector<char> good = bytes_of(data_file("numpy_savez.npz"));
  std::vector<char> b(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(good.size() / 2));
  write_bytes(p, b);
  expect_error([&] { tx::Npz::load(p); }, "[load_npz]", {p});
  b = good;
  b[200] ^= 0x40;  // inside member a's data: the CRC catches it
  write_bytes(p, b);
  expect_error([&] { tx::Npz::load(p); }, "[load_npz]", {"CRC-32"});
  const tx::Npz z = tx::Npz::load(data_file("numpy_savez.npz"));
  expect_error([&] { (void)z.get<float>("a"); }, "[load]", {"numpy_savez.npz:a", "holds f64 data, asked for f32"});
  expect_error([&] { (void)z.get<double>("x"); }, "[Npz::get]", {"no array 'x'", "'a', 'b', 'c', 'd', 'e'"});
  tx::Npz w;
  expect_error([&] { w.set("x", tx::Tensor<double>()); }, "[Npz::set] undefined tensor");
  expect_error([&] { w.save(::testing::TempDir() + "no/such/dir/x.npz"); }, "[save_npz] cannot open");
}

TEST(Npz, CorruptedArchivesLoadOrRaise) {
  // Random byte changes and truncations of stored and deflated archives: each load (and get of
  // every member) returns or raises tenax::Error.
  const std::vector<std::vector<char>> seeds = {bytes_of(data_file("numpy_savez.npz")),
                                                bytes_of(data_file("numpy_savez_compressed.npz"))};
  const std::string p = tmpz("fuzz");
  std::mt19937_64 rng(13);
  int loaded = 0, raised = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<char> b = seeds[static_cast<std::size_t>(trial) % seeds.size()];
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !b.empty(); ++e) {
      if (rng() % 6 == 0)
        b.resize(rng() % b.size());
      else
        b[rng() % b.size()] = static_cast<char>(rng());
    }
    write_bytes(p, b);
    try {
      const tx::Npz z = tx::Npz::load(p);
      for (const std::string& n : z.names()) (void)z.shape(n);
      ++loaded;
    } catch (const tx::Error&) {
      ++raised;
    }
  }
  EXPECT_EQ(loaded + raised, 2000);
  EXPECT_GT(raised, 1000);  // (most edits hit a CRC-checked member or a checked record)
  std::remove(p.c_str());
}

}  // namespace
