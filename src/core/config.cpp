// tenax::config(): what this build of tenax is.
#include "tenax/core/config.hpp"

#include <sstream>

#include "tenax/backend/cpu_provider.hpp"
#if defined(TENAX_HAS_CUDA)
#include "tenax/backend/cuda.hpp"
#endif

#ifndef TENAX_VERSION
#define TENAX_VERSION "0.0.0"
#endif

namespace tenax {

Config config() {
  Config c;
  c.version = TENAX_VERSION;
  c.provider = cpu::provider_name();
  c.threads = thread_info();
#if defined(TENAX_HAS_CUDA)
  c.cuda = true;
  c.cuda_devices = tenax::cuda::device_count();
#endif
  return c;
}

std::string Config::str() const {
  std::ostringstream o;
  o << "tenax " << version << "\n  provider: " << provider << "\n  cuda: "
    << (cuda ? "built, " + std::to_string(cuda_devices) + " device(s) visible" : std::string("not built"))
    << "\n  threads: " << threads.threads << " (from " << threads.source << "), provider threads: ";
  if (threads.provider_threads < 0)
    o << "n/a";
  else
    o << threads.provider_threads;
  if (threads.provider_pinned) o << " (left to the provider's environment variables)";
  o << "\n  affinity: CPUs " << threads.affinity;
  return o.str();
}

}  // namespace tenax
