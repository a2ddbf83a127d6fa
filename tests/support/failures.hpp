#pragma once
// The GoogleTest failure messages a statement reports, intercepted (for tests of the checks
// themselves: a deliberately wrong rule must make the gradient harness fail).
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <string>

namespace tenax::testing {

template <class Fn>
std::string failures_of(Fn fn) {
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter r(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    fn();
  }
  std::string all;
  for (int i = 0; i < results.size(); ++i) all += std::string(results.GetTestPartResult(i).message()) + "\n---\n";
  return all;
}

}  // namespace tenax::testing
