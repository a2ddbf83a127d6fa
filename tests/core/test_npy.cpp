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
void round_trip(const tx::Shape& shape, std::uint64_t seed) {
  tx::Tensor<T> x;
  if constexpr (std::is_same_v<T, bool>)
    x = tx::gt(tx::Tensor<double>::randn(shape, seed), tx::Tensor<double>::zeros({}));
  else if constexpr (std::is_integral_v<T>)
    x = tx::cast<T>(tx::mul(tx::Tensor<double>::randn(shape, seed), 1000.0));
  else
    x = tx::Tensor<T>::randn(shape, seed);
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

}  // namespace
