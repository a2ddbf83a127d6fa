// Provider call counters (shared by every provider implementation).
#include "tenax/backend/cpu_provider.hpp"

namespace tenax::cpu {

ProviderCounters& provider_counters() {
  static ProviderCounters c;
  return c;
}

}  // namespace tenax::cpu
