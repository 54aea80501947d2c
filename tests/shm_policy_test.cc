// Which shared-memory messages go single-copy (transport/shm/shm_endpoint.h).
#include <gtest/gtest.h>

#include "collectives/schedule.h"
#include "transport/shm/shm_endpoint.h"

namespace {

using gdr::coll::CollKind;
using gdr::transport::OpSig;
using gdr::transport::shm::cmaThresholdFor;

OpSig sigOf(CollKind k) {
  OpSig s;
  s.kind = static_cast<uint8_t>(k);
  return s;
}

TEST(ShmPolicy, ThresholdByCollective) {
  for (CollKind k :
       {CollKind::AllGather, CollKind::AllToAll, CollKind::AllToAllv, CollKind::ReduceScatter})
    EXPECT_EQ(cmaThresholdFor(sigOf(k), -1), 64u << 10) << gdr::coll::collName(k);
  EXPECT_EQ(cmaThresholdFor(sigOf(CollKind::Reduce), -1), 1u << 20);
  for (CollKind k : {CollKind::AllReduce, CollKind::Broadcast, CollKind::Barrier})
    EXPECT_EQ(cmaThresholdFor(sigOf(k), -1), 256u << 10) << gdr::coll::collName(k);
  OpSig p2p;
  p2p.kind = gdr::transport::kP2PKind;
  EXPECT_EQ(cmaThresholdFor(p2p, -1), 256u << 10);
}

TEST(ShmPolicy, ASetThresholdAppliesToEveryMessage) {
  OpSig p2p;
  p2p.kind = gdr::transport::kP2PKind;
  for (int64_t forced : {0, 1, 4096, 1 << 30}) {
    EXPECT_EQ(cmaThresholdFor(p2p, forced), static_cast<size_t>(forced));
    EXPECT_EQ(cmaThresholdFor(sigOf(CollKind::Reduce), forced), static_cast<size_t>(forced));
    EXPECT_EQ(cmaThresholdFor(sigOf(CollKind::AllGather), forced), static_cast<size_t>(forced));
  }
}

}  // namespace
