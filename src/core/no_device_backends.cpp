// A build without device backends: the registry holds the CPU alone, and no CUDA device is ever
// visible.
#include "registry.hpp"
#include "tenax/backend/cuda.hpp"

namespace tenax::detail {
void add_linked_backends(DeviceTable&) {}
}  // namespace tenax::detail

namespace tenax::cuda {
int device_count() { return 0; }
void synchronize(int) {}
}  // namespace tenax::cuda
