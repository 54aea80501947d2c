// The GDR_* registry: typed reads, clear errors for malformed values, and
// the README's table generated from it (every variable documented).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/params.h"

namespace {

TEST(Params, ReadsTypedValuesAndRejectsMalformedOnes) {
  setenv("GDR_TIMEOUT_MS", "2k", 1);
  EXPECT_EQ(gdr::param::getInt("GDR_TIMEOUT_MS"), 2048);
  setenv("GDR_TIMEOUT_MS", "12abc", 1);
  EXPECT_THROW(gdr::param::getInt("GDR_TIMEOUT_MS"), gdr::InvalidArgument);
  unsetenv("GDR_TIMEOUT_MS");
  EXPECT_EQ(gdr::param::getInt("GDR_TIMEOUT_MS"), 300000);
  setenv("GDR_SHM_CMA", "maybe", 1);
  EXPECT_THROW(gdr::param::getBool("GDR_SHM_CMA"), gdr::InvalidArgument);
  setenv("GDR_SHM_CMA", "off", 1);
  EXPECT_FALSE(gdr::param::getBool("GDR_SHM_CMA"));
  unsetenv("GDR_SHM_CMA");
  EXPECT_THROW(gdr::param::getInt("GDR_NO_SUCH_VARIABLE"), gdr::InternalError);
  EXPECT_THROW(gdr::param::getString("GDR_TIMEOUT_MS"), gdr::InternalError);  // wrong type
}

TEST(Params, EveryVariableIsInTheReadme) {
  std::ifstream f(GDR_TEST_DATA_DIR "/../../README.md");
  ASSERT_TRUE(f) << "README.md not found";
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string readme = ss.str();
  for (const auto& p : gdr::param::all()) {
    EXPECT_NE(readme.find(std::string("`") + p.name + "`"), std::string::npos)
        << p.name << " is missing from README.md: regenerate the table with build/bin/gdr-info --markdown";
    EXPECT_NE(std::string(p.description), "") << p.name;
  }
}

}  // namespace
