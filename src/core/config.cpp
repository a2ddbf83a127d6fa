// tenax::config(): what this build of tenax is.
#include "tenax/core/config.hpp"

#include <sstream>

#include "tenax/backend/cpu_provider.hpp"

#ifndef TENAX_VERSION
#define TENAX_VERSION "0.0.0"
#endif

namespace tenax {

Config config() {
  Config c;
  c.version = TENAX_VERSION;
  c.provider = cpu::provider_name();
#if defined(TENAX_HAS_CUDA)
  c.cuda = true;
#endif
  return c;
}

std::string Config::str() const {
  std::ostringstream o;
  o << "tenax " << version << "\n  provider: " << provider << "\n  cuda: " << (cuda ? "built" : "not built");
  return o.str();
}

}  // namespace tenax
