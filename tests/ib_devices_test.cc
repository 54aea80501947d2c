// One verbs connection over two devices (the software NIC's softnic0 and
// softnic1, GDR_SOFTNIC_DEVICES=2): QPs alternate over the devices, every
// write names the peer's key of the device its QP lands on (eager chunks,
// credits, clear-to-sends, zero-copy writes), and a device whose port goes
// down mid-transfer hands its chunks to the other one.
#if GDR_HAVE_IB
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "transport/ib/ib_device.h"
#include "transport/ib/ib_endpoint.h"
#include "transport/ib/softnic.h"
#include "support/ib_two_devices.h"

namespace gdr::transport::ib {
namespace {

using testing::Msg;

// Ranks 0 (a) and 1 (b) of this process, both over softnic0 and softnic1.
struct TwoDevices {
  std::vector<std::shared_ptr<IbDevice>> devs;
  std::unique_ptr<IbEndpoint> a, b;
  IbConnInfo ia{}, ib{};

  explicit TwoDevices(IbEndpointConfig c) {
    devs = testing::openTwoSoftnics();
    IbEndpointConfig ca = c, cb = c;
    ca.myRank = cb.peerRank = 0;
    ca.peerRank = cb.myRank = 1;
    a = std::make_unique<IbEndpoint>(devs, ca);
    b = std::make_unique<IbEndpoint>(devs, cb);
    ia = a->localInfo();
    ib = b->localInfo();
    a->connect(ib, nullptr);
    b->connect(ia, nullptr);
  }
  template <typename F>
  bool run(F done) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done()) {
      if (std::chrono::steady_clock::now() > end) return false;
      a->progress();
      b->progress();
    }
    return true;
  }
  // Posts every message (receives first), then moves both ends n times.
  void start(std::vector<std::unique_ptr<Msg>>& ms, int n) {
    for (auto& m : ms) b->postRecv(&m->r);
    for (auto& m : ms) a->postSend(&m->s);
    for (int i = 0; i < n; ++i) {
      a->progress();
      b->progress();
    }
  }
  bool finish(std::vector<std::unique_ptr<Msg>>& ms) {
    return run([&] {
      for (auto& m : ms)
        if (!m->s.complete || !m->r.complete) return false;
      return true;
    });
  }
  bool exchange(std::vector<std::unique_ptr<Msg>>& ms) {
    start(ms, 0);
    return finish(ms);
  }
};

IbEndpointConfig cfg(size_t zcopyBytes) {
  IbEndpointConfig c;
  c.nQps = 4;
  c.qpDepth = 256;
  c.nSlots = 8;
  c.chunkFixed = 64 * 1024;
  c.zcopyBytes = zcopyBytes;
  c.zcopyChunk = 64 * 1024;
  return c;
}

TEST(IbDevices, OpensEveryListedDeviceAndAlternatesTheQps) {
  TwoDevices t(cfg(0));
  ASSERT_EQ(t.devs.size(), 2u);
  EXPECT_EQ(t.devs[0]->name(), "softnic0");
  EXPECT_EQ(t.devs[1]->name(), "softnic1");
  for (int q = 0; q < 4; ++q) {
    EXPECT_EQ(t.a->deviceOf(q).name(), q % 2 ? "softnic1" : "softnic0") << q;
    EXPECT_EQ(t.ia.qpDev[q], q % 2) << q;
  }
  // Each device registered the slots with its own key.
  EXPECT_NE(t.ia.qpSlotsRkey[0], t.ia.qpSlotsRkey[1]);
  EXPECT_EQ(t.ia.qpSlotsRkey[0], t.ia.qpSlotsRkey[2]);
}

TEST(IbDevices, EagerAndZeroCopyMessagesGoOverBothDevices) {
  TwoDevices t(cfg(256 * 1024));
  std::vector<std::unique_ptr<Msg>> ms;
  for (int i = 0; i < 6; ++i)
    ms.push_back(std::make_unique<Msg>(i % 2 ? 1 << 20 : 100000 + i, i + 1));
  ASSERT_TRUE(t.exchange(ms));
  for (auto& m : ms) EXPECT_EQ(m->dst, m->src);
  const IbStats s = t.a->stats();
  EXPECT_EQ(s.zcopySent, 3u);
  for (int q = 0; q < 4; ++q) EXPECT_GT(s.chunksPerQp[q], 0u) << "QP " << q;
  EXPECT_EQ(t.b->stats().cpuCopyBytes, 100000u + 100002 + 100004);  // the eager ones only
}

// softnic1's QPs hold their writes, so its congestion window (fixed, two
// chunks) stays full: the chunks whose turn falls on softnic1 go on
// softnic0's QPs meanwhile, up to the credit window (8 slots), instead of
// waiting behind the full window (5 chunks at most then), and every message
// arrives intact once softnic1 moves again.
TEST(IbDevices, AFullWindowOnOneDeviceSendsTheChunksBehindItOnTheOther) {
  IbEndpointConfig c = cfg(0);
  c.cc.mode = CcMode::Fixed;
  c.cc.fixedWindow = 128 * 1024;
  TwoDevices t(c);
  softnic::holdQp(t.ia.qpn[1], true);
  softnic::holdQp(t.ia.qpn[3], true);
  std::vector<std::unique_ptr<Msg>> ms;
  for (int i = 0; i < 4; ++i) ms.push_back(std::make_unique<Msg>(300000, i + 1));
  t.start(ms, 200);
  const IbStats held = t.a->stats();
  softnic::holdQp(t.ia.qpn[1], false);
  softnic::holdQp(t.ia.qpn[3], false);
  EXPECT_EQ(held.chunksPerQp[1] + held.chunksPerQp[3], 2u);  // softnic1's window
  EXPECT_GE(held.chunksSent, 8u);
  EXPECT_GT(held.chunksPlacedByRoom, 0u);
  ASSERT_TRUE(t.finish(ms));
  for (auto& m : ms) EXPECT_EQ(m->dst, m->src);
}

// a's QP 1 (softnic1) holds its writes, so they are in flight when the
// device's port goes down; its oldest write completes with `first`.
void deviceDownMidTransfer(ibv_wc_status first) {
  TwoDevices t(cfg(0));
  softnic::holdQp(t.ia.qpn[1], true);
  std::vector<std::unique_ptr<Msg>> ms;
  for (int i = 0; i < 8; ++i) ms.push_back(std::make_unique<Msg>(300000, i + 1));
  t.start(ms, 50);
  softnic::portDown(1, 1, first);
  softnic::holdQp(t.ia.qpn[1], false);
  bool done = false;
  try {
    done = t.finish(ms);
  } catch (...) {
    softnic::portUp(1, 1);
    throw;
  }
  softnic::portUp(1, 1);  // for later tests of this process
  ASSERT_TRUE(done);
  for (auto& m : ms) EXPECT_EQ(m->dst, m->src);
  const IbStats s = t.a->stats();
  EXPECT_EQ(s.qpsDown, 2);  // QPs 1 and 3: softnic1's
  EXPECT_GT(s.chunksResent, 0u);
}

TEST(IbDevices, ADeviceDownMidTransferHandsItsChunksToTheOther) {
  deviceDownMidTransfer(IBV_WC_RETRY_EXC_ERR);
}

// What rxe reports when its link goes down: with the port down, that is a
// path failure too.
TEST(IbDevices, ALocalQpErrorWithThePortDownFailsOverToo) {
  deviceDownMidTransfer(IBV_WC_LOC_QP_OP_ERR);
}

// The responder refusing a write (remote invalid request: rxe's answer to a
// retransmission it finds malformed) leaves both ends of that QP in error:
// the writer's chunks go over the other QPs, the receiver's end is taken
// out when its receives flush, and every message arrives intact.
TEST(IbDevices, ARemoteInvalidRequestFailsOverLikeALostPath) {
  TwoDevices t(cfg(0));
  std::vector<std::unique_ptr<Msg>> ms;
  for (int i = 0; i < 6; ++i) ms.push_back(std::make_unique<Msg>(300000, i + 1));
  softnic::failWrite(3, IBV_WC_REM_INV_REQ_ERR);  // a's third chunk
  bool done = false;
  EXPECT_NO_THROW(done = t.exchange(ms));
  softnic::failWrite(0);
  ASSERT_TRUE(done);
  for (auto& m : ms) EXPECT_EQ(m->dst, m->src);
  EXPECT_EQ(t.a->stats().qpsDown, 1);
  EXPECT_EQ(t.b->stats().qpsDown, 1);
  EXPECT_GT(t.a->stats().chunksResent, 0u);
}

// With no other QP to move to, the refusal fails the connection: the writer
// naming it, the receiver its flushed receives.
TEST(IbDevices, ARemoteInvalidRequestOnTheLastQpFailsTheConnection) {
  IbEndpointConfig c = cfg(0);
  c.nQps = 1;
  TwoDevices t(c);
  Msg m(300000, 1);
  t.b->postRecv(&m.r);
  t.a->postSend(&m.s);
  softnic::failWrite(2, IBV_WC_REM_INV_REQ_ERR);
  std::string ea, eb;
  for (int i = 0; i < 100000 && (ea.empty() || eb.empty()); ++i) {
    if (ea.empty()) try {
        t.a->progress();
      } catch (const Error& e) {
        ea = e.what();
      }
    if (eb.empty()) try {
        t.b->progress();
      } catch (const Error& e) {
        eb = e.what();
      }
  }
  softnic::failWrite(0);
  EXPECT_NE(ea.find("remote invalid request"), std::string::npos) << ea;
  EXPECT_NE(eb.find("Flushed"), std::string::npos) << eb;
}

}  // namespace
}  // namespace gdr::transport::ib
#endif
