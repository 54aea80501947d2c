// Checks the multi-process tests share: every rank exited cleanly, and an
// error text names what it should.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "support/multiproc.h"

namespace gdrtest {

inline bool contains(const char* text, const char* part) { return std::strstr(text, part) != nullptr; }

inline void expectAllOk(const std::vector<RankExit>& exits) {
  std::string why;
  EXPECT_TRUE(allOk(exits, &why)) << why;
}

}  // namespace gdrtest
