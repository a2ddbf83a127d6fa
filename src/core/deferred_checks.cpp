// The pending failure checks of each device (core/deferred_checks.hpp).
#include "tenax/core/deferred_checks.hpp"

#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "tenax/backend/device_copy.hpp"
#include "tenax/core/tensor.hpp"

namespace tenax::detail {
namespace {

struct Pending {
  ImplPtr info;
  CodeCheck check;
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

}  // namespace

void defer_check(ImplPtr info, CodeCheck check) {
  const Device d = info->device;
  std::size_t n = 0;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto& list = r.by_device[key(d)];
    list.push_back({std::move(info), std::move(check)});
    n = list.size();
  }
  if (n > kMaxDeferredChecks) run_deferred_checks(d);
}

void run_deferred_checks(Device d) {
  std::vector<Pending> list;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.by_device.find(key(d));
    if (it == r.by_device.end() || it->second.empty()) return;
    list.swap(it->second);
  }
  // (The copies below come back here with an empty list: the checks were taken out above.)
  // Every check's codes are gathered into one buffer on the device (copies queued in stream order,
  // nothing waits), which then comes to the host in one copy: the barrier of K queued runs waits
  // once, not K times.
  std::int64_t total = 0;
  for (const Pending& p : list) total += p.info->numel();
  std::vector<std::int32_t> codes(static_cast<std::size_t>(total));
  constexpr std::size_t kCode = sizeof(std::int32_t);
  if (list.size() == 1) {
    copy_bytes(codes.data(), Device::cpu(), list[0].info->data(), d, static_cast<std::size_t>(total) * kCode);
  } else if (total > 0) {
    const Tensor<std::int32_t> gathered = Tensor<std::int32_t>::empty({total}, d);
    std::int64_t at = 0;
    for (const Pending& p : list) {
      const std::int64_t n = p.info->numel();
      copy_bytes(gathered.mutable_data() + at, d, p.info->data(), d, static_cast<std::size_t>(n) * kCode);
      at += n;
    }
    copy_bytes(codes.data(), Device::cpu(), gathered.data(), d, static_cast<std::size_t>(total) * kCode);
  }
  std::int64_t at = 0;
  for (const Pending& p : list) {
    const std::int64_t n = p.info->numel();
    p.check(codes.data() + at, n);  // raises for the first failure; the rest of the list is dropped
    at += n;
  }
}

std::size_t deferred_checks(Device d) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.by_device.find(key(d));
  return it == r.by_device.end() ? 0 : it->second.size();
}

}  // namespace tenax::detail
