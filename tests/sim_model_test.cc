// The simulator's core against what can be worked out by hand: a 2-rank
// ring against its closed form, max-min sharing on a toy topology, credits
// that throttle a sender, and the symmetric walker against the event walker.
#include <gtest/gtest.h>

#include <cstdio>

#include "collectives/schedule.h"
#include "core/error.h"
#include "sim/cluster.h"
#include "sim/engine.h"
#include "sim/maxmin.h"
#include "sim/message_policy.h"
#include "sim/network.h"
#include "sim/predict.h"
#include "sim/symmetric.h"
#include "sim/turns.h"
#include "support/sim_toy.h"

namespace gdr::sim {
namespace {

std::vector<coll::Schedule> allRanks(coll::Algo algo, coll::CollArgs a) {
  std::vector<coll::Schedule> s;
  for (int r = 0; r < a.nranks; ++r) {
    a.rank = r;
    s.push_back(coll::build(algo, a));
  }
  return s;
}

double runOnce(const Cluster& c, coll::Algo algo, const coll::CollArgs& a,
               Sharing sh = Sharing::MaxMin) {
  const Network net(c);
  EngineInput in;
  in.cluster = &c;
  in.net = &net;
  in.kind = a.kind;
  in.sharing = sh;
  return runEngine(in, allRanks(algo, a)).timeUs;
}

// One step of a hand-made schedule.
coll::Step step(coll::StepKind k, int peer, coll::Region src, coll::Region dst) {
  coll::Step st{k};
  st.peer = peer;
  st.src = src;
  st.dst = dst;
  return st;
}

// The engine's input for one call of byte elements.
EngineInput byteInput(const Cluster& c, const Network& net, coll::CollKind kind) {
  EngineInput in;
  in.cluster = &c;
  in.net = &net;
  in.kind = kind;
  in.elemBytes = 1;
  return in;
}

// Two ranks, ring all-reduce of S bytes in single-copy messages: one
// reduce-scatter step (S/2 each way at once, the two copies sharing the
// host's memory link only when it is the bottleneck) and one all-gather
// step: 2 x (alpha + (S/2)/beta) + (S/2)/gamma.
TEST(SimModel, TwoRankRingIsTheClosedForm) {
  Cluster c = toyHost(2);
  // Two cores at 2 GB/s each: the two copies at once just fit the memory link.
  coll::CollArgs a;
  a.kind = coll::CollKind::AllReduce;
  a.nranks = 2;
  a.count = (8u << 20) / 4;  // 8 MiB of float32: single-copy
  const double half = 4.0 * (1 << 20);
  const double alpha = 1.0, beta = 2.0e3, gamma = 1.0e3;  // us, bytes/us
  const double expect = 2 * (alpha + half / beta) + half / gamma;
  EXPECT_NEAR(runOnce(c, coll::Algo::Ring, a), expect, expect * 1e-9);
}

// A broadcast's single copy is shared by both ranks (cma_share): two cores
// at 2 GB/s each on one 8 MiB message. All-gather's single copies are not.
TEST(SimModel, SharedCopyIsTwoCores) {
  Cluster c = toyHost(2);
  coll::CollArgs a;
  a.kind = coll::CollKind::Broadcast;
  a.nranks = 2;
  a.count = (8u << 20) / 4;
  const double bytes = 8.0 * (1 << 20), alpha = 1.0, beta = 2.0e3;  // us, bytes/us per core
  EXPECT_NEAR(runOnce(c, coll::Algo::Binomial, a), alpha + bytes / (2 * beta), 1e-6 * bytes / beta);
  c.cmaShare = false;
  EXPECT_NEAR(runOnce(c, coll::Algo::Binomial, a), alpha + bytes / beta, 1e-6 * bytes / beta);
  c.cmaShare = true;
  EXPECT_FALSE(sharedCopy(c, coll::CollKind::AllGather));
  EXPECT_TRUE(sharedCopy(c, coll::CollKind::Broadcast));
}

// A broadcast is in place: its footprint is one buffer per rank, so an
// 8 MiB broadcast on 2 ranks (16 MiB) runs at the cache rates in a 20 MiB
// cache, where an all-reduce of the same size (input and output: 32 MiB)
// spills to memory.
TEST(SimModel, BroadcastFootprintIsOneBuffer) {
  Cluster c = toyHost(2);
  c.cacheBytes = 20u << 20;
  c.shmCmaMemGBps = 0.2;  // memory ten times slower than cache
  c.copyMemGBps = 10.0;
  c.reduceMemGBps = 0.1;
  Query q;
  q.kind = coll::CollKind::Broadcast;
  q.bytes = 8u << 20;
  q.forced = true;
  q.algo = coll::Algo::Binomial;
  const double inCache = predict(c, q).timeUs;
  c.cacheBytes = 0;  // no cache model: the cache rates everywhere
  EXPECT_DOUBLE_EQ(predict(c, q).timeUs, inCache);
  c.cacheBytes = 12u << 20;  // now the 16 MiB spill
  EXPECT_GT(predict(c, q).timeUs, 2 * inCache);
  c.cacheBytes = 20u << 20;
  q.kind = coll::CollKind::AllReduce;
  q.algo = coll::Algo::Ring;
  const double spilled = predict(c, q).timeUs;
  c.cacheBytes = 0;
  EXPECT_GT(spilled, 2 * predict(c, q).timeUs);
}

// A broadcast is in place (gdrBroadcast has one buffer): the root copies
// nothing, so a slow local copy does not slow it.
TEST(SimModel, BroadcastRootCopiesNothing) {
  Cluster c = toyHost(2);
  Query q;
  q.kind = coll::CollKind::Broadcast;
  q.bytes = 8u << 20;
  const double fast = predict(c, q).timeUs;
  c.copyGBps = 0.01;
  EXPECT_DOUBLE_EQ(predict(c, q).timeUs, fast);
  q.kind = coll::CollKind::AllGather;  // its own block copied to the output: priced
  const double slowCopy = predict(c, q).timeUs;
  c.copyGBps = 100.0;
  EXPECT_GT(slowCopy, predict(c, q).timeUs);
}

// A yield costs yield_us up to 2 ranks per core and yield_growth times more
// per doubling beyond; the default growth keeps the earlier rule
// (yield_us x (ranks per core - 1)) at 2 and 4 ranks per core.
TEST(SimModel, YieldCostGrowsPerDoublingOfRanksPerCore) {
  Cluster c = toyHost(4);
  c.coresPerHost = 2;
  c.yieldUs = 0.5;
  EXPECT_DOUBLE_EQ(yieldCostUs(c), 0.5);
  c.ranksPerHost = 8;
  EXPECT_DOUBLE_EQ(yieldCostUs(c), 0.5 * 3);
  c.yieldGrowth = 1.5;
  EXPECT_DOUBLE_EQ(yieldCostUs(c), 0.75);
  c.ranksPerHost = 16;
  EXPECT_DOUBLE_EQ(yieldCostUs(c), 0.5 * 1.5 * 1.5);
  c.ranksPerHost = 3;  // 1.5 per core: no less than at 2
  EXPECT_DOUBLE_EQ(yieldCostUs(c), 0.5);
  c.yieldGrowth = 0;
  EXPECT_THROW(validate(c), InvalidArgument);
}

// Which schedules the host ranks run without the runner (their message
// steps cost short_send_us): one message, or a few with copies after them.
TEST(SimModel, RunnerFreeSchedulesCostShortSends) {
  coll::CollArgs a;
  a.kind = coll::CollKind::Broadcast;
  a.nranks = 4;
  a.count = 2;
  for (const coll::Schedule& s : allRanks(coll::Algo::Binomial, a)) EXPECT_TRUE(coll::runsWithoutRunner(s));
  a.kind = coll::CollKind::AllReduce;
  a.count = 1u << 20;
  a.chunkElems = 1u << 14;  // 16 chunks a block: many steps
  for (const coll::Schedule& s : allRanks(coll::Algo::Ring, a)) EXPECT_FALSE(coll::runsWithoutRunner(s));
  coll::Schedule odd;
  const coll::Region r0{coll::BufId::Output, 0, 1};
  odd.steps.push_back(step(coll::StepKind::Copy, -1, coll::Region{coll::BufId::Input, 0, 1}, r0));
  odd.steps.push_back(step(coll::StepKind::Send, 1, r0, {}));
  EXPECT_FALSE(coll::runsWithoutRunner(odd));  // a copy before a message: the runner's

  Cluster c = toyHost(2);
  c.sendUs = 1.0;
  a.kind = coll::CollKind::Broadcast;
  a.nranks = 2;
  a.count = 2;
  const double runner = runOnce(c, coll::Algo::Binomial, a);
  c.shortSendUs = 0.25;
  EXPECT_LT(runOnce(c, coll::Algo::Binomial, a), runner - 0.5);
}

// Every rank copies 1 MB at 1 GB/s after a 10 us launch, `iterations` calls;
// yield > 0: the ranks take turns on the cores, preempted after `quantum`.
double copiesTime(int ranks, int cores, int iterations = 1, double yield = 0,
                  double quantum = 4000) {
  Cluster c = toyHost(ranks);
  c.coresPerHost = cores;
  c.copyGBps = 1.0;
  c.yieldUs = yield;
  c.quantumUs = quantum;
  const Network net(c);
  EngineInput in;
  in.cluster = &c;
  in.net = &net;
  in.launchUs = 10.0;
  in.iterations = iterations;
  coll::Schedule s;
  coll::Step copy{coll::StepKind::Copy};
  copy.src = {coll::BufId::Input, 0, 1000000};
  copy.dst = {coll::BufId::Output, 0, 1000000};
  in.elemBytes = 1;
  s.steps.push_back(copy);
  return runEngine(in, std::vector<coll::Schedule>(static_cast<size_t>(ranks), s)).timeUs;
}

// Ranks that outnumber the cores time-share them: four ranks copying 1 MB
// at 1 GB/s each on two cores take twice as long as two would; with a core
// each, as long as one. The launch is core work too.
TEST(SimModel, RanksTimeShareTheCores) {
  auto copyTime = [](int ranks, int cores) { return copiesTime(ranks, cores); };
  EXPECT_NEAR(copyTime(2, 2), 1010.0, 1e-6);
  EXPECT_NEAR(copyTime(4, 4), 1010.0, 1e-6);
  EXPECT_NEAR(copyTime(4, 2), 2020.0, 1e-6);
  EXPECT_NEAR(copyTime(8, 2), 4040.0, 1e-6);
}

// A chain broadcast of 8 ranks on one core: however far the head runs
// ahead, every call's 7 single-copy hops go through that core, so the
// steady period is 7 copies (a call ends once its sends are taken).
TEST(SimModel, SharedCoresBoundADeepChain) {
  Cluster c = toyHost(8);
  c.coresPerHost = 1;
  coll::CollArgs a;
  a.kind = coll::CollKind::Broadcast;
  a.nranks = 8;
  a.count = (8u << 20) / 4;  // 8 MiB: single-copy, 2 GB/s
  const Network net(c);
  EngineInput in;
  in.cluster = &c;
  in.net = &net;
  in.kind = a.kind;
  in.iterations = kIterations;
  const double copies = 7 * (8.0 * (1 << 20)) / 2.0e3;
  const double t = runEngine(in, allRanks(coll::Algo::Chain, a)).timeUs;
  // (the first half of the calls is warm-up; a little run-ahead remains)
  EXPECT_GT(t, copies * 0.9);
  EXPECT_LT(t, copies * 1.15);
}

// Ranks taking turns: the same independent copies cost what the shared cores
// cost (2 ranks per core run one after the other, preempted or not), and a
// core whose ranks all yielded in a row picks the rotation up at its phase.
TEST(SimModel, RanksTakeTurnsOnTheCores) {
  auto copyTime = [](int ranks, int cores, double quantum) {
    return copiesTime(ranks, cores, 8, 1.0, quantum);
  };
  // (preempted every 100 or 300 us: the ranks of a core alternate)
  EXPECT_NEAR(copyTime(4, 2, 100), 2020.0, 40.0);
  EXPECT_NEAR(copyTime(4, 2, 300), 2020.0, 40.0);
  EXPECT_NEAR(copyTime(8, 2, 100), 4040.0, 80.0);
  // Never preempted (a quantum past all 8 calls): rank 0 runs its calls
  // back to back, the steady period is one rank's call.
  EXPECT_NEAR(copyTime(4, 2, 1e9), 1010.0, 1e-6);

  Cluster c = toyHost(3);
  c.coresPerHost = 1;
  c.yieldUs = 1.0;  // a turn handed on costs 1 us (no growth)
  c.yieldGrowth = 1.0;
  Turns t(c, 3);
  const std::vector<Turns::Next> first = t.start();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].rank, 0);
  EXPECT_EQ(t.pass(0, 1.0, true, true).rank, 1);
  EXPECT_EQ(t.pass(1, 2.0, true, true).rank, 2);
  EXPECT_EQ(t.pass(2, 3.0, true, true).rank, -1);  // a round of dry yields: idle from 3
  // Turns from 3: rank 0 at 3, 6; rank 1 at 4, 7; rank 2 at 5: at 4.5 it is 2's.
  const Turns::Next w = t.wake(1, 4.5);
  EXPECT_EQ(w.rank, 2);
  EXPECT_NEAR(w.t, 5.0, 1e-9);
  EXPECT_EQ(t.pass(2, 6.0, true, true).rank, 0);
  EXPECT_EQ(t.pass(0, 7.0, true, true).rank, 1);
}

// Small messages on oversubscribed cores: every wait that finds nothing costs
// a yield, so the time grows with yield_us; with a core per rank it is unused.
TEST(SimModel, YieldsCostOnlyWhereRanksOutnumberCores) {
  auto time = [](int cores, double yield) {
    Cluster c = toyHost(8);
    c.coresPerHost = cores;
    c.link[static_cast<int>(LinkClass::Shm)].latencyUs = 0.3;
    c.sendUs = 0.25;
    c.yieldUs = yield;
    Query q;
    q.kind = coll::CollKind::AllReduce;
    q.bytes = 64;
    return predict(c, q).timeUs;
  };
  std::printf("8 ranks on 2 cores, 64 B all-reduce: %.2f us (yield 0.5 us), %.2f us (yield 2 us)\n",
              time(2, 0.5), time(2, 2.0));
  EXPECT_GT(time(2, 2.0), time(2, 0.5) * 1.1);
  EXPECT_NEAR(time(8, 2.0), time(8, 0.5), 1e-9);
}

// A shm message of at most inline_bytes rides in its slot's header line:
// a 2-rank exchange of 16 B waits inline_us less than one of 32 B, where a
// rank has its own core; ranks taking turns do not poll, so they gain nothing.
TEST(SimModel, InlineMessagesSaveLatencyOnlyOnOwnCores) {
  auto time = [](int ranks, int cores, size_t bytes, double inlineUs) {
    Cluster c = toyHost(ranks);
    c.coresPerHost = cores;
    c.link[static_cast<int>(LinkClass::Shm)].latencyUs = 0.5;
    c.sendUs = 0.25;
    c.yieldUs = cores > 0 ? 0.5 : 0.0;
    c.inlineUs = inlineUs;
    Query q;
    q.kind = coll::CollKind::AllReduce;
    q.bytes = bytes;
    return predict(c, q).timeUs;
  };
  EXPECT_NEAR(time(2, 0, 16, 0.0) - time(2, 0, 16, 0.2), 0.2, 0.02);
  EXPECT_NEAR(time(2, 0, 32, 0.0), time(2, 0, 32, 0.2), 1e-9);
  EXPECT_NEAR(time(8, 2, 16, 0.0), time(8, 2, 16, 0.2), 1e-9);
}

// A step that writes a region waits for the rank's in-flight sends that read
// it, as the executor does: rank 0 sends 1 MB single-copy from Scratch, then
// copies 1 MB into it (1000 us) and sends 64 B; rank 1 reduces 1 MB locally
// (1000 us) before it reads. Into the block just sent, the copy waits for
// the read (500 us): 1000 + 500 + 1000 us; into another block it overlaps.
TEST(SimModel, WritesWaitForSendsReadingThem) {
  auto time = [](size_t copyTo) {
    Cluster c = toyHost(2);
    c.copyGBps = 1.0;
    const Network net(c);
    const EngineInput in = byteInput(c, net, coll::CollKind::AllGather);
    const size_t mb = 1000000;
    std::vector<coll::Schedule> s(2);
    using coll::BufId;
    using coll::StepKind;
    s[0].scratchElems = s[1].scratchElems = 2 * mb;
    s[0].steps = {step(StepKind::Send, 1, {BufId::Scratch, 0, mb}, {}),
                  step(StepKind::Copy, -1, {BufId::Input, 0, mb}, {BufId::Scratch, copyTo, mb}),
                  step(StepKind::Send, 1, {BufId::Input, 0, 64}, {})};
    s[1].steps = {step(StepKind::Reduce, -1, {BufId::Input, 0, mb}, {BufId::Scratch, 0, mb}),
                  step(StepKind::Recv, 0, {}, {BufId::Output, 0, mb}),
                  step(StepKind::Recv, 0, {}, {BufId::Output, mb, 64})};
    return runEngine(in, s).timeUs;
  };
  std::printf("copy into the block in flight: %.1f us, into another: %.1f us\n", time(0),
              time(1000000));
  EXPECT_NEAR(time(0), 2500.0, 20.0);
  EXPECT_NEAR(time(1000000), 1500.0, 20.0);
}

// Two hosts over the socket transport: 1 us latency, 1 GB/s, copies at 1 GB/s.
Cluster toySocket() {
  Cluster c;
  EXPECT_TRUE(preset("socket", &c));
  c.link[static_cast<int>(LinkClass::Socket)] = {1.0, 1.0};
  c.copyGBps = 1.0;
  return c;
}

// A socket send is done once the kernel's buffers hold it (8 MiB a
// direction), with no slots and no rendezvous below that.
TEST(SimModel, SocketSendsAreEagerUpToTheBuffers) {
  Cluster c = toySocket();
  EXPECT_TRUE(eager(c, coll::CollKind::Broadcast, 8u << 20, false));
  EXPECT_FALSE(eager(c, coll::CollKind::Broadcast, (8u << 20) + 1, false));
  c.netTransport = "nic";  // verbs: eager up to the slots, then rendezvous
  EXPECT_FALSE(eager(c, coll::CollKind::Broadcast, 1u << 20, false));
}

// One connection per pair delivers in order: rank 1's two 1 MB messages
// arrive one after the other (the first at 1001 us), not sharing the link
// (both at 2001 us). Rank 0 copies 1.5 MB after the first: done at 2501 us
// in order, 3501 us shared.
TEST(SimModel, SocketPairIsOneOrderedStream) {
  Cluster c = toySocket();
  const Network net(c);
  const EngineInput in = byteInput(c, net, coll::CollKind::AllGather);
  const size_t mb = 1000000;
  using coll::BufId;
  using coll::StepKind;
  std::vector<coll::Schedule> s(2);
  s[0].scratchElems = 2 * mb;
  s[0].steps = {
      step(StepKind::Recv, 1, {}, {BufId::Output, 0, mb}),
      step(StepKind::Copy, -1, {BufId::Input, 0, 3 * mb / 2}, {BufId::Scratch, 0, 3 * mb / 2}),
      step(StepKind::Recv, 1, {}, {BufId::Output, mb, mb})};
  s[1].steps = {step(StepKind::Send, 0, {BufId::Input, 0, mb}, {}),
                step(StepKind::Send, 0, {BufId::Input, mb, mb}, {})};
  EXPECT_NEAR(runEngine(in, s).timeUs, 2501.0, 5.0);
}

// gdr-bench's window: warm-up calls, a barrier, timed calls, each rank's
// time averaged. A broadcast root whose one timed call the socket buffers
// absorb reads as half a call (its own 1 us, the receiver's 1001 us); the
// steady period of back-to-back calls is the link's 1001 us.
TEST(SimModel, BenchWindowAveragesTheRanks) {
  Cluster c = toySocket();
  c.copyGBps = 1000.0;  // the root's copy into its output: 1 us
  coll::CollArgs a;
  a.kind = coll::CollKind::Broadcast;
  a.nranks = 2;
  a.count = 250000;  // 1 MB of float32
  const Network net(c);
  EngineInput in;
  in.cluster = &c;
  in.net = &net;
  in.kind = a.kind;
  in.iterations = 16;
  EXPECT_NEAR(runEngine(in, allRanks(coll::Algo::Binomial, a)).timeUs, 1001.0, 5.0);
  in.warmCalls = 2;
  in.timedCalls = 1;
  EXPECT_NEAR(runEngine(in, allRanks(coll::Algo::Binomial, a)).timeUs, 501.0, 5.0);
}

// Past far_bytes the memory rates drop again by far_factor.
TEST(SimModel, FarMemoryTier) {
  Cluster c = toyHost(2);
  c.cacheBytes = 1 << 20;
  c.copyGBps = 10.0;
  c.copyMemGBps = 4.0;
  EXPECT_NEAR(effectiveRates(c, 4 << 20).copyGBps, 1.0 / (0.25 / 10 + 0.75 / 4), 1e-9);
  c.farBytes = 2 << 20;
  c.farFactor = 0.5;
  EXPECT_NEAR(effectiveRates(c, 4 << 20).copyGBps, 1.0 / (0.25 / 10 + 0.25 / 4 + 0.5 / 2), 1e-9);
}

// An eager shm message is a pipeline across two cores: beyond cache it runs
// at the slower of its own rate and a copy's, never faster than in cache;
// where ranks take turns on the cores its copy into the slots is a plain copy.
TEST(SimModel, EagerLinkIsAPipelineOrACopy) {
  Cluster c = toyHost(2);
  const auto shm = [](const Cluster& e) { return e.link[static_cast<int>(LinkClass::Shm)].gbps; };
  c.link[static_cast<int>(LinkClass::Shm)].gbps = 6.0;
  c.cacheBytes = 1 << 20;
  c.copyGBps = 40.0;
  c.copyMemGBps = 4.0;
  EXPECT_NEAR(shm(effectiveRates(c, 512 << 10)), 6.0, 1e-9);
  EXPECT_NEAR(shm(effectiveRates(c, 2 << 20)), 6.0, 1e-9);  // copy 7.3 GB/s: the pipeline's 6 bound
  EXPECT_NEAR(shm(effectiveRates(c, 64 << 20)), effectiveRates(c, 64 << 20).copyGBps, 1e-9);
  EXPECT_LT(shm(effectiveRates(c, 64 << 20)), 6.0);
  c.ranksPerHost = 8;
  c.coresPerHost = 2;
  c.yieldUs = 0.3;
  EXPECT_NEAR(shm(effectiveRates(c, 512 << 10)), 40.0, 1e-9);
  EXPECT_NEAR(shm(effectiveRates(c, 64 << 20)), effectiveRates(c, 64 << 20).copyGBps, 1e-9);
  c.shmMemGBps = 3.0;  // a file's blend wins
  EXPECT_NEAR(shm(effectiveRates(c, 512 << 10)), 6.0, 1e-9);
}

// A root that broadcasts back to back runs ahead only as far as the slots
// let it: with one slot per pair, every call waits for the receiver.
TEST(SimModel, SlotsThrottleASender) {
  Cluster c = toyHost(2);
  coll::CollArgs a;
  a.kind = coll::CollKind::Broadcast;
  a.nranks = 2;
  a.count = 1024;  // 4 KiB, eager
  const Network net(c);
  EngineInput in;
  in.cluster = &c;
  in.net = &net;
  in.kind = a.kind;
  in.iterations = 8;
  c.sendUs = 0.1;
  c.slots = 8;
  const double wide = runEngine(in, allRanks(coll::Algo::Binomial, a)).timeUs;
  c.slots = 1;
  const double narrow = runEngine(in, allRanks(coll::Algo::Binomial, a)).timeUs;
  EXPECT_GT(narrow, wide * 1.5);
}

// Where both apply, the symmetric walker and the event walker agree on a
// ring and on recursive halving-doubling.
TEST(SimModel, SymmetricWalkerMatchesEvents) {
  Cluster c;
  ASSERT_TRUE(preset("fattree2", &c));
  c.hosts = 4;
  c.link[static_cast<int>(LinkClass::NvLink)] = {0.5, 300.0};
  c.link[static_cast<int>(LinkClass::Nic)] = {3.0, 48.0};
  c.kernelReduceGBps = 2000.0;
  for (coll::Algo algo : {coll::Algo::Ring, coll::Algo::RecHalvingDoubling}) {
    coll::CollArgs a;
    a.kind = coll::CollKind::AllReduce;
    a.nranks = c.nranks();
    a.count = (64u << 20) / 4;
    const Network net(c);
    EngineInput in;
    in.cluster = &c;
    in.net = &net;
    in.kind = a.kind;
    in.sharing = Sharing::Frozen;
    EngineResult sym;
    ASSERT_TRUE(runSymmetric(in, algo, a, &sym)) << coll::algoName(algo);
    const double events = runEngine(in, allRanks(algo, a)).timeUs;
    EXPECT_NEAR(sym.timeUs, events, events * 0.05) << coll::algoName(algo);
  }
}

// The double binary tree is not symmetric: the walker says so.
TEST(SimModel, TreeIsNotSymmetric) {
  Cluster c = toyHost(8);
  coll::CollArgs a;
  a.kind = coll::CollKind::AllReduce;
  a.nranks = 8;
  a.count = 4096;
  const Network net(c);
  EngineInput in;
  in.cluster = &c;
  in.net = &net;
  EngineResult r;
  EXPECT_FALSE(runSymmetric(in, coll::Algo::DoubleBinaryTree, a, &r));
}

TEST(SimCluster, FileKeysRoundTrip) {
  Cluster c;
  ASSERT_TRUE(preset("fattree3", &c));
  apply(c, "hosts=16; oversubscription=4; link.nic.gbps=25; cma_threshold=128k");
  EXPECT_EQ(c.hosts, 16);
  EXPECT_EQ(c.nranks(), 128);
  EXPECT_DOUBLE_EQ(c.oversubscription, 4.0);
  EXPECT_DOUBLE_EQ(c.link[static_cast<int>(LinkClass::Nic)].gbps, 25.0);
  EXPECT_EQ(c.cmaThreshold, 128u << 10);
  EXPECT_NE(dump(c).find("link.nic.gbps = 25"), std::string::npos);
  EXPECT_THROW(apply(c, "no_such_key=1"), InvalidArgument);
  EXPECT_THROW(validate(Cluster{}), InvalidArgument);  // nothing calibrated
}

// Oversubscription on a fat tree: the same all-to-all is slower when the
// leaves' uplinks carry a quarter of their hosts' capacity.
TEST(SimModel, OversubscribedTreeIsSlower) {
  Cluster c;
  ASSERT_TRUE(preset("fattree2", &c));
  c.hosts = 16;
  c.leafPorts = 4;  // 4 leaves per rail: most pairs cross the spine
  c.link[static_cast<int>(LinkClass::NvLink)] = {0.5, 300.0};
  c.link[static_cast<int>(LinkClass::Nic)] = {3.0, 48.0};
  c.kernelReduceGBps = 2000.0;
  Query q;
  q.kind = coll::CollKind::AllToAll;
  q.bytes = size_t{128} << 20;
  const double full = predict(c, q).timeUs;
  c.oversubscription = 4.0;
  EXPECT_GT(predict(c, q).timeUs, full * 1.5);
}

}  // namespace
}  // namespace gdr::sim
