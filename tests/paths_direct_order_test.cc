// The GPUDirect path's order with the caller's stream (paths/direct/order.h):
// `auto` takes stream flags only where CUDA loads modules eagerly, a forced
// `flags` under lazy loading is flagged as risky, anything else is refused.
#include <gtest/gtest.h>

#include "core/error.h"
#include "paths/direct/order.h"

namespace {

using gdr::paths::direct::chooseOrder;
using gdr::paths::direct::ModuleLoading;

TEST(DirectOrder, AutoTakesFlagsOnlyUnderEagerLoading) {
  const auto eager = chooseOrder("auto", ModuleLoading::Eager);
  EXPECT_TRUE(eager.flags);
  EXPECT_FALSE(eager.risky);
  EXPECT_NE(eager.why.find("CUDA_MODULE_LOADING=EAGER"), std::string::npos) << eager.why;
  for (ModuleLoading m : {ModuleLoading::Lazy, ModuleLoading::Unknown}) {
    const auto c = chooseOrder("auto", m);
    EXPECT_FALSE(c.flags);
    EXPECT_FALSE(c.risky);
    EXPECT_NE(c.why.find("waits for its stream"), std::string::npos) << c.why;
  }
  EXPECT_NE(chooseOrder("auto", ModuleLoading::Lazy).why.find("lazily"), std::string::npos);
}

TEST(DirectOrder, ForcedOrdersAreKeptAndLazyFlagsWarned) {
  for (ModuleLoading m : {ModuleLoading::Lazy, ModuleLoading::Unknown, ModuleLoading::Eager}) {
    EXPECT_FALSE(chooseOrder("host", m).flags);
    EXPECT_FALSE(chooseOrder("host", m).risky);
    const auto f = chooseOrder("flags", m);
    EXPECT_TRUE(f.flags);
    EXPECT_EQ(f.risky, m != ModuleLoading::Eager);
    if (f.risky) {
      EXPECT_NE(f.why.find("deadlock"), std::string::npos) << f.why;
    }
  }
}

TEST(DirectOrder, RefusesOtherValues) {
  EXPECT_THROW(chooseOrder("stream", ModuleLoading::Eager), gdr::InvalidArgument);
  EXPECT_THROW(chooseOrder("", ModuleLoading::Eager), gdr::InvalidArgument);
  EXPECT_THROW(chooseOrder("Flags", ModuleLoading::Eager), gdr::InvalidArgument);
}

}  // namespace
