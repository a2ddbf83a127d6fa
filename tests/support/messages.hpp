#pragma once
// Helpers for tests that check error messages.
#include <gtest/gtest.h>

#include <initializer_list>
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

// Runs f, expecting a tenax::Error whose message begins with `prefix` and contains every string
// in `parts`.
template <class F>
void expect_error(F&& f, const std::string& prefix, std::initializer_list<std::string> parts = {}) {
  try {
    f();
    ADD_FAILURE() << "expected tenax::Error beginning with " << prefix;
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind(prefix, 0), 0u) << "message: " << m;
    for (const auto& p : parts) EXPECT_NE(m.find(p), std::string::npos) << "'" << p << "' missing from: " << m;
  }
}

// s with every occurrence of from replaced by to: a device's error message read as the CPU's
// (on_device(msg, "cuda:0", "cpu")), for comparing the two.
inline std::string on_device(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
  return s;
}

}  // namespace tenax::testing
