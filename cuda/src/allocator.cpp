// The CUDA pooled allocator: power-of-two size classes over cudaMallocAsync, one pool per device.
// Every tenax operation on a device runs on that device's stream, so a block freed into the pool
// may be handed out again at once: its last use is queued before any new one (stream order).
// Where the device or the runtime has no stream-ordered memory pools (cudaDevAttrMemoryPoolsSupported
// is 0; some virtualised machines), or TENAX_CUDA_NO_POOLS=1 is set, the misses go to cudaMalloc and
// release_cached waits for the stream before cudaFree; the size classes and reuse are the same.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "../../src/core/size_classes.hpp"
#include "runtime.hpp"
#include "tenax/backend/cuda.hpp"
#include "tenax/core/error.hpp"

namespace tenax::detail::cuda {
namespace {

using Classes = SizeClasses<8, 40>;  // 256 bytes (cuBLAS/cuSOLVER like aligned operands) to 1 TiB
constexpr int kClasses = Classes::kCount;

int size_class(std::size_t bytes) { return Classes::of(bytes); }
constexpr std::size_t class_bytes(int c) { return Classes::bytes(c); }

// Whether device index allocates from cudaMallocAsync's pools (see the top of this file).
bool stream_ordered(int index) {
  const char* off = std::getenv("TENAX_CUDA_NO_POOLS");
  if (off && off[0] == '1') return false;
  int supported = 0;
  return cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, index) == cudaSuccess && supported != 0;
}

class CudaPool final : public Allocator {
 public:
  explicit CudaPool(int index) : index_(index), async_(stream_ordered(index)) {}

  void* allocate(std::size_t bytes) override {
    if (bytes == 0) bytes = 1;
    TENAX_CHECK(bytes <= class_bytes(kClasses - 1), "allocator", "request of ", bytes, " bytes on cuda:", index_,
                " exceeds the pool's largest class");
    const int c = size_class(bytes);
    const std::size_t cb = class_bytes(c);
    {
      std::lock_guard<std::mutex> g(mu_);
      if (!free_[c].empty()) {
        void* p = free_[c].back();
        free_[c].pop_back();
        ++s_.pool_hits;
        note_live(static_cast<std::int64_t>(cb));
        return p;
      }
      ++s_.pool_misses;
    }
    cudaStream_t st = stream_of(index_);
    DeviceGuard g(index_);
    void* p = nullptr;
    auto system_alloc = [&] { return async_ ? cudaMallocAsync(&p, cb, st) : cudaMalloc(&p, cb); };
    cudaError_t e = system_alloc();
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      release_cached();
      e = system_alloc();
    }
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      fail("allocator", "out of memory on cuda:", index_, " allocating ", cb, " bytes (", stats().bytes_live,
           " bytes live)");
    }
    check(e, std::string(async_ ? "cudaMallocAsync" : "cudaMalloc") + " on cuda:" + std::to_string(index_));
    std::lock_guard<std::mutex> lk(mu_);
    ++s_.system_allocs;
    sys_bytes_ += static_cast<std::int64_t>(cb);
    note_live(static_cast<std::int64_t>(cb));
    return p;
  }

  void deallocate(void* p, std::size_t bytes) override {
    if (!p) return;
    if (bytes == 0) bytes = 1;
    const int c = size_class(bytes);
    std::lock_guard<std::mutex> g(mu_);
    s_.bytes_live -= static_cast<std::int64_t>(class_bytes(c));
    free_[c].push_back(p);
  }

  AllocatorStats stats() const override {
    std::lock_guard<std::mutex> g(mu_);
    AllocatorStats s = s_;
    s.bytes_cached = sys_bytes_ - s.bytes_live;
    return s;
  }

  void reset_stats() override {
    std::lock_guard<std::mutex> g(mu_);
    s_.bytes_peak = s_.bytes_live;
    s_.pool_hits = s_.pool_misses = s_.system_allocs = s_.system_frees = 0;
  }

  void release_cached() override {
    cudaStream_t st = stream_of(index_);
    DeviceGuard dg(index_);
    std::lock_guard<std::mutex> g(mu_);
    // cudaFree does not wait for the stream: the blocks' queued uses must finish first.
    if (!async_) check(cudaStreamSynchronize(st), "release_cached_memory(cuda:" + std::to_string(index_) + ")");
    for (int c = 0; c < kClasses; ++c) {
      while (!free_[c].empty()) {  // each block leaves the list before it is freed (no double free)
        void* p = free_[c].back();
        free_[c].pop_back();
        sys_bytes_ -= static_cast<std::int64_t>(class_bytes(c));
        ++s_.system_frees;
        if (async_)
          check(cudaFreeAsync(p, st), "cudaFreeAsync on cuda:" + std::to_string(index_));
        else
          check(cudaFree(p), "cudaFree on cuda:" + std::to_string(index_));
      }
    }
    if (!async_) return;
    // Hand the memory back to the driver, not just to the stream-ordered pool.
    check(cudaStreamSynchronize(st), "release_cached_memory(cuda:" + std::to_string(index_) + ")");
    cudaMemPool_t pool;
    if (cudaDeviceGetDefaultMemPool(&pool, index_) == cudaSuccess) (void)cudaMemPoolTrimTo(pool, 0);
  }

 private:
  void note_live(std::int64_t add) {  // under mu_
    s_.bytes_live += add;
    s_.bytes_peak = std::max(s_.bytes_peak, s_.bytes_live);
  }

  int index_;
  bool async_;  // cudaMallocAsync / cudaFreeAsync, else cudaMalloc / cudaFree
  mutable std::mutex mu_;
  std::array<std::vector<void*>, kClasses> free_;
  AllocatorStats s_;
  std::int64_t sys_bytes_ = 0;
};

}  // namespace

Allocator& allocator(int index) {
  stream_of(index);  // throws a clear error for a device that does not exist
  static std::array<std::once_flag, 64> once;
  static std::array<CudaPool*, 64> pools{};  // never destroyed: blocks may return during exit
  const auto i = static_cast<std::size_t>(index);
  std::call_once(once[i], [&] { pools[i] = new CudaPool(index); });
  return *pools[i];
}

}  // namespace tenax::detail::cuda
