// The table of every public op (every_op.hpp) that the CUDA coverage test runs on the GPU, checked
// on any machine: it names each op the library instantiates (the TENAX_INSTANCES_* lists of the op
// headers, and cast, which is left to the caller's instantiation) and nothing else, and each of its
// calls runs on the CPU. So a new op cannot be left out of the GPU coverage run, and a GPU run's
// failure is the device's, not the table's.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "cuda/every_op.hpp"

namespace {

// The function names in the TENAX_INSTANCE declarations of every header under dir.
std::set<std::string> instanced_ops(const std::filesystem::path& dir) {
  const std::regex decl(R"(TENAX_INSTANCE [^;]*?[ :&>]([a-z_0-9]+)\()");
  std::set<std::string> names;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.path().extension() != ".hpp") continue;
    std::ifstream in(e.path());
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    for (std::sregex_iterator it(s.begin(), s.end(), decl), end; it != end; ++it) names.insert((*it)[1].str());
  }
  return names;
}

std::string joined(const std::set<std::string>& s) {
  std::string r;
  for (const auto& n : s) r += n + " ";
  return r;
}

}  // namespace

TEST(EveryOpTable, NamesEveryInstancedOpAndCast) {
  const std::filesystem::path ops = std::filesystem::path(TENAX_SOURCE_DIR) / "include" / "tenax" / "ops";
  ASSERT_TRUE(std::filesystem::is_directory(ops)) << ops;
  std::set<std::string> want = instanced_ops(ops);
  ASSERT_GT(want.size(), 70u) << "the instance lists were not found: " << joined(want);
  want.insert("cast");
  std::set<std::string> have;
  for (const auto& c : tenax::testing::every_op_calls()) EXPECT_TRUE(have.insert(c.name).second) << "twice: " << c.name;
  std::set<std::string> missing, stale;
  for (const auto& n : want)
    if (!have.count(n)) missing.insert(n);
  for (const auto& n : have)
    if (!want.count(n)) stale.insert(n);
  EXPECT_TRUE(missing.empty()) << "ops with no call in tests/cuda/every_op.hpp: " << joined(missing);
  EXPECT_TRUE(stale.empty()) << "calls of ops the library does not instance: " << joined(stale);
}

TEST(EveryOpTable, EachCallRunsOnTheCpu) {
  for (const auto& c : tenax::testing::every_op_calls()) {
    SCOPED_TRACE(c.name);
    tenax::testing::OpOutputs o;
    ASSERT_NO_THROW(o = c.run(tenax::Device::cpu()));
    ASSERT_FALSE(o.values.empty());
    for (std::size_t k = 0; k < o.values.size(); ++k) {
      EXPECT_TRUE(o.devices[k].is_cpu()) << "output " << k;
      const auto n = static_cast<std::size_t>(tenax::numel_of(o.shapes[k]));
      EXPECT_TRUE(o.values[k].size() == n || o.values[k].size() == 2 * n) << "output " << k;
    }
    // Deterministic: a second call gives the same numbers (what the GPU run compares against).
    EXPECT_EQ(c.run(tenax::Device::cpu()).values, o.values);
  }
}
