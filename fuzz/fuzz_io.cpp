// libFuzzer target: the readers of .npy files and .npz archives on arbitrary bytes. The first byte
// picks the reader and the asked dtype; the rest is the file. Every call must return or throw
// tenax::Error; anything else (a crash, a sanitizer report, another exception, an allocation past
// -rss_limit_mb, a hang caught by -timeout) is a finding.
//
// Build: cmake -DTENAX_BUILD_FUZZ=ON with clang (fuzz/CMakeLists.txt); run:
//   build-fuzz/fuzz/fuzz_io fuzz/corpus/io -max_total_time=60
#include <unistd.h>

#include <complex>
#include <cstdint>
#include <cstdio>
#include <string>

#include <tenax/tenax.hpp>

namespace {

namespace tx = tenax;

template <class T>
void decode(const char* p, std::size_t n) {
  (void)tx::detail::npy_decode<T>("fuzz.npy", p, n, tx::Device::cpu());
}

void npz(const char* p, std::size_t n) {
  // Npz::load reads a file: one per process, rewritten for each input.
  static const std::string path = "/tmp/tenax_fuzz_io_" + std::to_string(::getpid()) + ".npz";
  if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
    if (n > 0) std::fwrite(p, 1, n, f);
    std::fclose(f);
  }
  const tx::Npz z = tx::Npz::load(path);
  for (const std::string& name : z.names()) {
    (void)z.shape(name);
    if (z.dtype(name) == tx::DType::F64) (void)z.get<double>(name);
    if (z.dtype(name) == tx::DType::C64) (void)z.get<std::complex<float>>(name);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const char* p = reinterpret_cast<const char*>(data) + 1;
  const std::size_t n = size - 1;
  try {
    switch (data[0] % 8) {
      case 0:
        decode<bool>(p, n);
        break;
      case 1:
        decode<std::int32_t>(p, n);
        break;
      case 2:
        decode<std::int64_t>(p, n);
        break;
      case 3:
        decode<float>(p, n);
        break;
      case 4:
        decode<double>(p, n);
        break;
      case 5:
        decode<std::complex<double>>(p, n);
        break;
      default:
        npz(p, n);
        break;
    }
  } catch (const tenax::Error&) {
    // A clear error is the expected outcome of a malformed file.
  }
  return 0;
}
