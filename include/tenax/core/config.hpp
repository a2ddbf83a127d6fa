#pragma once
// Build and runtime introspection: provider, version, backends.
#include <string>

namespace tenax {

struct Config {
  std::string version;
  std::string provider;  // CPU BLAS/LAPACK provider and its build configuration
  bool cuda = false;     // CUDA backend compiled in
  std::string str() const;
};

Config config();

}  // namespace tenax
