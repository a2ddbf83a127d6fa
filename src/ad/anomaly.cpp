// Anomaly mode: non-finite detection, call stacks and the error message.
#include "tenax/ad/anomaly.hpp"

#include <cxxabi.h>
#include <execinfo.h>

#include <cmath>
#include <complex>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <sstream>
#include <string_view>

#include "tenax/core/error.hpp"

namespace tenax::detail {

namespace {

template <class T>
bool finite(const T& v) {
  if constexpr (std::is_floating_point_v<T>)
    return std::isfinite(v);
  else
    return std::isfinite(v.real()) && std::isfinite(v.imag());
}

template <class T>
std::int64_t count(const TensorImpl& t) {
  const T* base = static_cast<const T*>(t.data());
  const std::int64_t total = t.numel();
  std::int64_t bad = 0;
  if (t.is_contiguous()) {
    for (std::int64_t k = 0; k < total; ++k) bad += finite(base[k]) ? 0 : 1;
    return bad;
  }
  std::int64_t idx[kMaxRank] = {};
  for (std::int64_t k = 0; k < total; ++k) {
    std::int64_t off = 0;
    for (int d = 0; d < t.rank(); ++d) off += idx[d] * t.strides[d];
    bad += finite(base[off]) ? 0 : 1;
    for (int d = 0; d < t.rank(); ++d) {
      if (++idx[d] < t.shape[d]) break;
      idx[d] = 0;
    }
  }
  return bad;
}

std::string describe(const TensorImpl* t) {
  if (!t) return "none";
  std::ostringstream o;
  o << dtype_name(t->dtype) << t->shape;
  return o.str();
}

std::string demangle(const char* line) {
  // "binary(mangled+0x12) [0x...]": demangle the part between '(' and '+'.
  std::string s(line);
  const auto open = s.find('('), plus = s.find('+', open == std::string::npos ? 0 : open);
  if (open == std::string::npos || plus == std::string::npos || plus <= open + 1) return s;
  const std::string mangled = s.substr(open + 1, plus - open - 1);
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), std::free);
  if (status != 0 || !d) return s;
  std::string name = d.get();
  if (name.size() > 160) name = name.substr(0, 157) + "...";
  return s.substr(0, open) + ": " + name + s.substr(s.find(')', plus) + 1);
}

}  // namespace

CallStack CallStack::capture() {
  CallStack c;
  c.size = backtrace(c.frames, static_cast<int>(std::size(c.frames)));
  return c;
}

std::string CallStack::str() const {
  std::ostringstream o;
  char** syms = backtrace_symbols(frames, size);
  int shown = 0;
  for (int i = 0; i < size && shown < 16; ++i) {
    const std::string line = syms ? demangle(syms[i]) : std::string("?");
    // tenax's own dispatch frames say nothing about the caller.
    if (line.find("tenax::detail::") != std::string::npos || line.find("CallStack::capture") != std::string::npos)
      continue;
    o << "\n    #" << shown++ << ' ' << line;
  }
  std::free(syms);
  if (shown == 0) o << "\n    (no frames)";
  if (o.str().find("(+0x") != std::string::npos)
    o << "\n    (frames without names: link with -rdynamic, or resolve with addr2line -f -C -e <binary> <+offset>)";
  return o.str();
}

std::int64_t count_nonfinite(const TensorImpl* t) {
  if (!t || !t->device.is_cpu() || t->numel() == 0) return 0;
  switch (t->dtype) {
    case DType::F32:
      return count<float>(*t);
    case DType::F64:
      return count<double>(*t);
    case DType::C64:
      return count<std::complex<float>>(*t);
    case DType::C128:
      return count<std::complex<double>>(*t);
    default:
      return 0;
  }
}

void check_anomaly(const char* where, const char* op, const ImplPtr* outs, std::size_t n_outs, const ImplPtr* ins,
                   std::size_t n_ins, const CallStack* origin) {
  for (std::size_t k = 0; k < n_outs; ++k) {
    const std::int64_t bad = count_nonfinite(outs[k].get());
    if (bad == 0) continue;
    for (std::size_t i = 0; i < n_ins; ++i)
      if (count_nonfinite(ins[i].get()) > 0) return;  // propagated, not produced here
    std::ostringstream o;
    o << "[anomaly] " << where << " '" << op << "' produced " << bad << " non-finite value(s) (NaN or Inf) in output "
      << k << " (" << describe(outs[k].get()) << ") from finite inputs (";
    for (std::size_t i = 0; i < n_ins; ++i) o << (i ? ", " : "") << describe(ins[i].get());
    o << "); " << (origin ? "the forward op was called from:" : "called from:")
      << (origin ? origin->str() : CallStack::capture().str());
    if (!origin && std::string_view(where) == "backward of")
      o << "\n    (the forward call site was not captured: AnomalyGuard(true, /*stacks=*/false))";
    throw Error(o.str());
  }
}

}  // namespace tenax::detail
