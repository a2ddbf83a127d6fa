#pragma once
// Build and runtime introspection: provider, version, backends, threads.
#include <string>

#include "tenax/core/threads.hpp"

namespace tenax {

struct Config {
  std::string version;
  std::string provider;  // CPU BLAS/LAPACK provider and its build configuration
  bool cuda = false;     // CUDA backend compiled in
  int cuda_devices = 0;  // CUDA devices visible to this process (0 without the backend)
  ThreadInfo threads;    // tenax's thread budget, the provider's threads, the affinity set
  std::string str() const;
};

Config config();

}  // namespace tenax
