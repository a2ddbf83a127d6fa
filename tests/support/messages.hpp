#pragma once
// Helpers for tests that check error messages.
#include <string>

#include "tenax/core/error.hpp"

namespace tenax::testing {

inline bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The message of the tenax::Error that f throws ("" when it throws nothing).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace tenax::testing
