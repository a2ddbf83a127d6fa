// The pending failure checks of each device (core/deferred_checks.hpp).
#include "tenax/core/deferred_checks.hpp"

#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "tenax/backend/device_copy.hpp"
#include "tenax/core/tensor.hpp"

namespace tenax::detail {
namespace {

// A check of n elements of `bytes` bytes each (int32 codes or float64 values).
struct Pending {
  ImplPtr data;
  std::size_t bytes;
  std::function<void(const void* host, std::int64_t n)> check;
};

struct Registry {
  std::mutex mutex;
  std::map<std::pair<int, int>, std::vector<Pending>> by_device;
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: checks may be left at exit
  return *r;
}

std::pair<int, int> key(Device d) { return {static_cast<int>(d.kind), d.is_cpu() ? 0 : d.index}; }

void push(Pending p) {
  const Device d = p.data->device;
  std::size_t n = 0;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto& list = r.by_device[key(d)];
    list.push_back(std::move(p));
    n = list.size();
  }
  if (n > kMaxDeferredChecks) run_deferred_checks(d);
}

}  // namespace

void defer_check(ImplPtr info, CodeCheck check) {
  TENAX_CHECK(info->dtype == DType::I32 && info->is_contiguous(), "defer_check", "needs contiguous int32 codes");
  push({std::move(info), sizeof(std::int32_t),
        [c = std::move(check)](const void* host, std::int64_t n) { c(static_cast<const std::int32_t*>(host), n); }});
}

void defer_value_check(ImplPtr values, ValueCheck check) {
  TENAX_CHECK(values->dtype == DType::F64 && values->is_contiguous(), "defer_value_check",
              "needs contiguous float64 values");
  push({std::move(values), sizeof(double),
        [c = std::move(check)](const void* host, std::int64_t n) { c(static_cast<const double*>(host), n); }});
}

void run_deferred_checks(Device d) {
  // The copies below read the device and so come back here: on this thread that nested call
  // returns at once (checks another thread leaves meanwhile wait for the next read, in order).
  thread_local bool running = false;
  if (running) return;
  std::vector<Pending> list;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.by_device.find(key(d));
    if (it == r.by_device.end() || it->second.empty()) return;
    list.swap(it->second);
  }
  struct Running {
    bool& flag;
    explicit Running(bool& f) : flag(f) { flag = true; }
    ~Running() { flag = false; }
  } guard(running);
  // Every check's data is gathered into one buffer on the device (copies queued in stream order,
  // nothing waits; each check's part starts at a multiple of 8 bytes), which then comes to the
  // host in one copy: the barrier of K queued runs waits once, not K times.
  auto words = [](const Pending& p) {  // 8-byte words of p's part
    return (static_cast<std::size_t>(p.data->numel()) * p.bytes + 7) / 8;
  };
  std::size_t total = 0;
  for (const Pending& p : list) total += words(p);
  std::vector<std::uint64_t> host(total);
  try {
    if (list.size() == 1) {
      copy_bytes(host.data(), Device::cpu(), list[0].data->data(), d,
                 static_cast<std::size_t>(list[0].data->numel()) * list[0].bytes);
    } else if (total > 0) {
      const Tensor<std::int64_t> gathered = Tensor<std::int64_t>::empty({static_cast<std::int64_t>(total)}, d);
      std::size_t at = 0;
      for (const Pending& p : list) {
        copy_bytes(gathered.mutable_data() + at, d, p.data->data(), d,
                   static_cast<std::size_t>(p.data->numel()) * p.bytes);
        at += words(p);
      }
      copy_bytes(host.data(), Device::cpu(), gathered.data(), d, total * 8);
    }
  } catch (...) {
    // The codes could not be read (e.g. no memory for the gathered copy): the checks go back,
    // ahead of any left since, and the error propagates.
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto& pending = r.by_device[key(d)];
    pending.insert(pending.begin(), std::make_move_iterator(list.begin()), std::make_move_iterator(list.end()));
    throw;
  }
  std::size_t at = 0;
  for (const Pending& p : list) {
    p.check(host.data() + at, p.data->numel());  // raises for the first failure; the rest is dropped
    at += words(p);
  }
}

std::size_t deferred_checks(Device d) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.by_device.find(key(d));
  return it == r.by_device.end() ? 0 : it->second.size();
}

}  // namespace tenax::detail
