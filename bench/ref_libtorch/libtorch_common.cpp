// Shared part of the libtorch reference drivers: the measured configuration.
#include <torch/torch.h>
#include <torch/version.h>

#include <string>

#include "ref_libtorch/libtorch_ref.hpp"

namespace tenax_bench {

std::string libtorch_setup() {
  at::set_num_threads(1);
  try {
    at::set_num_interop_threads(1);
  } catch (const std::exception&) {
    // Already set (inter-op threads can be set once per process); the intra-op setting suffices.
  }
  return std::string("libtorch ") + TORCH_VERSION + ", intra-op threads " + std::to_string(at::get_num_threads()) +
         ", inter-op threads " + std::to_string(at::get_num_interop_threads());
}

}  // namespace tenax_bench
