// Which shared-memory messages go single-copy (transport/shm/shm_endpoint.h):
// each collective's threshold (core/call.h's traits), and
// GDR_SHM_CMA_THRESHOLD over all of them.
#include <gtest/gtest.h>

#include "core/call.h"
#include "transport/shm/shm_endpoint.h"

namespace {

using gdr::CollKind;
using gdr::traitsOf;
using gdr::transport::shm::singleCopyFrom;

size_t thresholdOf(CollKind k, int64_t forced) {
  return singleCopyFrom(traitsOf(k).singleCopyFrom, forced);
}

TEST(ShmPolicy, ThresholdByCollective) {
  for (CollKind k :
       {CollKind::AllGather, CollKind::AllToAll, CollKind::AllToAllv, CollKind::ReduceScatter})
    EXPECT_EQ(thresholdOf(k, -1), 64u << 10) << gdr::collName(k);
  EXPECT_EQ(thresholdOf(CollKind::Reduce, -1), 1u << 20);
  for (CollKind k : {CollKind::AllReduce, CollKind::Broadcast, CollKind::Barrier})
    EXPECT_EQ(thresholdOf(k, -1), 256u << 10) << gdr::collName(k);
  // A send/recv (and an operation that names no threshold) asks for the default.
  EXPECT_EQ(singleCopyFrom(gdr::transport::SendOp{}.singleCopyFrom, -1), 64u << 10);
  EXPECT_EQ(singleCopyFrom(gdr::transport::RecvOp{}.singleCopyFrom, -1), 64u << 10);
}

// Where every rank of the host has a core, a broadcast goes single-copy from
// 32 KiB (its root's wait is then a core for the shared copy); nothing else
// moves, and where ranks share cores the table above stands.
TEST(ShmPolicy, BroadcastGoesSingleCopySoonerOnOwnCores) {
  EXPECT_EQ(gdr::singleCopyFromOf(CollKind::Broadcast, true), 32u << 10);
  EXPECT_EQ(gdr::singleCopyFromOf(CollKind::Broadcast, false), 256u << 10);
  for (CollKind k : {CollKind::AllReduce, CollKind::Reduce, CollKind::AllGather, CollKind::ReduceScatter,
                     CollKind::AllToAll, CollKind::AllToAllv, CollKind::Barrier})
    EXPECT_EQ(gdr::singleCopyFromOf(k, true), gdr::singleCopyFromOf(k, false)) << gdr::collName(k);
}

// Who shares a single-copy message's copy with its receiver: where the sender
// would only wait (broadcast, send/recv), not where every rank also receives.
TEST(ShmPolicy, SharedCopyWhereTheSenderWaits) {
  EXPECT_TRUE(traitsOf(CollKind::Broadcast).sharedCopy);
  EXPECT_TRUE(gdr::transport::RecvOp{}.shareCopy) << "send/recv";
  for (CollKind k : {CollKind::AllReduce, CollKind::Reduce, CollKind::AllGather, CollKind::ReduceScatter,
                     CollKind::AllToAll, CollKind::AllToAllv, CollKind::Barrier})
    EXPECT_FALSE(traitsOf(k).sharedCopy) << gdr::collName(k);
}

TEST(ShmPolicy, ASetThresholdAppliesToEveryMessage) {
  for (int64_t forced : {0, 1, 4096, 1 << 30}) {
    EXPECT_EQ(singleCopyFrom(gdr::kSingleCopyFrom, forced), static_cast<size_t>(forced));
    EXPECT_EQ(thresholdOf(CollKind::Reduce, forced), static_cast<size_t>(forced));
    EXPECT_EQ(thresholdOf(CollKind::AllGather, forced), static_cast<size_t>(forced));
  }
}

}  // namespace
