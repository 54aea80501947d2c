// The staged path's segmentation without CUDA or a transport: every rank's
// plan is run in lockstep on host memory standing in for device memory; a
// segment's host part is a reference collective over all ranks' slot
// buffers. The results must equal the whole collective, for sizes that are
// and are not multiples of the segment, in place and not. Sealed plans run
// with a stand-in for the GPU's AES-GCM (a keystream and tag from the
// origin rank and the row's nonce), so a row opened under another nonce or
// origin than it was sealed with comes out wrong and the test sees it.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/datatype.h"
#include "core/error.h"
#include "paths/staged/plan.h"

// memcpy that accepts empty ranges (an empty vector's data() may be null).
static void copyBytes(void* dst, const void* src, size_t n) {
  if (n) std::memcpy(dst, src, n);
}

namespace gdr::paths::staged {
namespace {

using gdr::CollKind;

// The stand-in cipher: a byte stream and a 16-byte tag from (origin, nonce).
uint64_t sealHash(int origin, const SealId& id) {
  uint8_t iv[12];
  sealNonce(id, iv);
  uint64_t h = 1469598103934665603ull ^ static_cast<uint64_t>(origin);
  for (uint8_t b : iv) h = (h ^ b) * 1099511628211ull;
  return h;
}

int gForged = 0;  // rows whose tag did not match when opened

void doCopy(const Copy2D& c, char* slotIn, char* slotOut, bool toHost) {
  char* host = (c.hostIn ? slotIn : slotOut) + c.hostOff;
  if (c.seal.on) {
    ASSERT_GE(c.hostPitch, c.width + kSealTagBytes);
  }
  for (size_t r = 0; r < c.rows; ++r) {
    char* h = host + r * c.hostPitch;
    char* d = c.dev + r * c.devPitch;
    if (!c.seal.on) {
      if (toHost) copyBytes(h, d, c.width);
      else copyBytes(d, h, c.width);
      continue;
    }
    const uint64_t key = sealHash(c.seal.originOf(static_cast<size_t>(r)), c.seal.id(r));
    uint8_t tag[16];
    for (int i = 0; i < 16; ++i) tag[i] = static_cast<uint8_t>(key >> (8 * (i % 8))) ^ static_cast<uint8_t>(i);
    if (toHost) {  // seal: the GPU's work, then the copy out
      for (size_t i = 0; i < c.width; ++i) h[i] = static_cast<char>(d[i] ^ static_cast<char>(key >> (8 * (i % 8))));
      std::memcpy(h + c.width, tag, 16);
    } else if (std::memcmp(h + c.width, tag, 16) != 0) {  // open: check, then decrypt or write zeros
      ++gForged;
      std::memset(d, 0, c.width);
    } else {
      for (size_t i = 0; i < c.width; ++i) d[i] = static_cast<char>(h[i] ^ static_cast<char>(key >> (8 * (i % 8))));
    }
  }
}

// Reference host collectives (int32 sum) over every rank's call of one segment.
void refCollective(std::vector<CollCall>& calls) {
  const int n = static_cast<int>(calls.size());
  const size_t m = calls[0].count;
  const size_t eb = gdr::typeSize(calls[0].type);  // sealed plans move bytes
  auto inB = [&](int r) { return static_cast<const char*>(calls[r].sendbuf); };
  auto outB = [&](int r) { return static_cast<char*>(calls[r].recvbuf); };
  auto in = [&](int r) { return static_cast<const int32_t*>(calls[r].sendbuf); };
  auto out = [&](int r) { return static_cast<int32_t*>(calls[r].recvbuf); };
  switch (calls[0].kind) {
    case CollKind::AllReduce:
      for (size_t i = 0; i < m; ++i) {
        int32_t s = 0;
        for (int r = 0; r < n; ++r) s += in(r)[i];
        for (int r = 0; r < n; ++r) out(r)[i] = s;
      }
      break;
    case CollKind::Broadcast: {
      const int root = calls[0].root;
      for (int r = 0; r < n; ++r)
        if (r != root) copyBytes(outB(r), inB(root), m * eb);
      break;
    }
    case CollKind::AllGather:
      for (int r = 0; r < n; ++r)
        for (int q = 0; q < n; ++q) copyBytes(outB(r) + q * m * eb, inB(q), m * eb);
      break;
    case CollKind::ReduceScatter:
      for (int r = 0; r < n; ++r)
        for (size_t i = 0; i < m; ++i) {
          int32_t s = 0;
          for (int q = 0; q < n; ++q) s += in(q)[r * m + i];
          out(r)[i] = s;
        }
      break;
    case CollKind::AllToAll:
      for (int r = 0; r < n; ++r)
        for (int q = 0; q < n; ++q) copyBytes(outB(r) + q * m * eb, inB(q) + r * m * eb, m * eb);
      break;
    default:
      FAIL() << "not simulated";
  }
}

struct Case {
  CollKind kind;
  size_t count;
  bool inPlace;
  bool seal = false;
};

void runCase(const Case& cs, int n, size_t segBytes) {
  SCOPED_TRACE(testing::Message() << gdr::collName(cs.kind) << " count " << cs.count << " n " << n
                                  << " seg " << segBytes << (cs.inPlace ? " in place" : "")
                                  << (cs.seal ? " sealed" : ""));
  gForged = 0;
  std::mt19937 rng(std::random_device{}());
  const bool blocks = cs.kind != CollKind::AllReduce && cs.kind != CollKind::Broadcast;
  const size_t inElems = cs.kind == CollKind::AllGather ? cs.count : blocks ? n * cs.count : cs.count;
  const size_t outElems = cs.kind == CollKind::ReduceScatter ? cs.count : blocks ? n * cs.count : cs.count;
  std::vector<std::vector<int32_t>> send(n), recv(n), orig(n);
  std::vector<CollCall> calls(n);
  std::vector<CollCall> seen(n);
  std::vector<std::unique_ptr<Plan>> plans(n);
  for (int r = 0; r < n; ++r) {
    send[r].resize(inElems);
    for (auto& v : send[r]) v = static_cast<int32_t>(rng() % 1000) - 500;
    recv[r].assign(std::max(outElems, cs.inPlace ? inElems : 0), -77777);  // poison
    CollCall c{cs.kind, send[r].data(), recv[r].data(), cs.count, gdrInt32, gdrSum, 0};
    if (cs.inPlace) {
      c.inPlace = true;
      if (cs.count == 0) {
        // nothing to copy (and memcpy of empty vectors' null data is UB)
      } else if (cs.kind == CollKind::AllGather) {
        copyBytes(recv[r].data() + r * cs.count, send[r].data(), cs.count * 4);
      } else {
        copyBytes(recv[r].data(), send[r].data(), inElems * 4);
      }
      c.sendbuf = recv[r].data();
    }
    if (cs.kind == CollKind::Broadcast) {
      recv[r] = send[r];
      c.sendbuf = recv[r].data();
    }
    orig[r] = send[r];
    plans[r] = planCollective(c, r, n, segBytes, [&seen, r](const CollCall& h) { seen[r] = h; },
                              SealSpec{cs.seal, 41});
  }
  const bool sealed = cs.seal && sealable(cs.kind) && cs.count > 0;
  EXPECT_EQ(plans[0]->sealed(), sealed);
  const size_t nseg = plans[0]->segments();
  const size_t slot = plans[0]->slotBytes();
  const size_t tags = sealed ? kSealTagBytes * (blocks ? n : 1) : 0;
  EXPECT_LE(slot, std::max<size_t>(segBytes, 4 * (blocks ? n : 1)) + tags);
  std::vector<std::vector<char>> in(n, std::vector<char>(slot + 1)), out(n, std::vector<char>(slot + 1));
  for (size_t k = 0; k < nseg; ++k) {
    std::vector<Segment> segs(n);
    for (int r = 0; r < n; ++r) {
      segs[r] = plans[r]->segment(k);
      for (const Copy2D& c : segs[r].toHost) {
        ASSERT_LE(c.hostOff + (c.rows - 1) * c.hostPitch + c.width, slot);
        doCopy(c, in[r].data(), out[r].data(), true);
      }
      segs[r].host(in[r].data(), out[r].data());
      EXPECT_FALSE(seen[r].inPlace);
      EXPECT_EQ(seen[r].preSealed, sealed);
    }
    refCollective(seen);
    for (int r = 0; r < n; ++r)
      for (const Copy2D& c : segs[r].toDevice) doCopy(c, in[r].data(), out[r].data(), false);
  }
  // The whole collective, computed at once.
  std::vector<CollCall> whole(n);
  std::vector<std::vector<int32_t>> want(n, std::vector<int32_t>(outElems));
  for (int r = 0; r < n; ++r) {
    whole[r] = CollCall{cs.kind, orig[r].data(), want[r].data(), cs.count, gdrInt32, gdrSum, 0};
    if (cs.kind == CollKind::Broadcast) copyBytes(want[r].data(), orig[r].data(), outElems * 4);
  }
  refCollective(whole);
  EXPECT_EQ(gForged, 0);
  for (int r = 0; r < n; ++r)
    for (size_t i = 0; i < outElems; ++i)
      ASSERT_EQ(recv[r][i], want[r][i]) << "rank " << r << " element " << i;
}

TEST(StagedPlan, SegmentedCollectivesEqualTheWholeOne) {
  for (CollKind k : {CollKind::AllReduce, CollKind::Broadcast, CollKind::AllGather, CollKind::ReduceScatter,
                     CollKind::AllToAll})
    for (int n : {1, 2, 3})
      for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{64}, size_t{1001}})
        for (bool ip : {false, true}) {
          if (ip && k == CollKind::Broadcast) continue;
          for (size_t seg : {size_t{4}, size_t{24}, size_t{256}, size_t{1} << 20}) runCase({k, count, ip}, n, seg);
        }
}

// Sealed plans (data movement only; reductions stay unsealed): every row
// opens under the nonce and origin it was sealed with, and the results are
// the whole collective's.
TEST(StagedPlan, SealedPlansOpenEveryRowWhereItLands) {
  for (CollKind k : {CollKind::AllReduce, CollKind::Broadcast, CollKind::AllGather, CollKind::ReduceScatter,
                     CollKind::AllToAll})
    for (int n : {1, 2, 3, 5})
      for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1001}})
        for (bool ip : {false, true}) {
          if (ip && k == CollKind::Broadcast) continue;
          for (size_t seg : {size_t{4}, size_t{256}, size_t{1} << 20}) runCase({k, count, ip, true}, n, seg);
        }
}

// A row delivered to the wrong place (here: rank 1's all-gather row swapped
// with rank 2's on the way) fails its check instead of landing as data.
TEST(StagedPlan, ASealedRowInTheWrongPlaceFailsItsCheck) {
  const int n = 3;
  const size_t count = 8;
  std::vector<std::vector<int32_t>> send(n), recv(n);
  std::vector<CollCall> seen(n);
  std::vector<std::unique_ptr<Plan>> plans(n);
  for (int r = 0; r < n; ++r) {
    send[r].assign(count, r + 1);
    recv[r].assign(n * count, 0);
    CollCall c{CollKind::AllGather, send[r].data(), recv[r].data(), count, gdrInt32};
    plans[r] = planCollective(c, r, n, 1 << 20, [&seen, r](const CollCall& h) { seen[r] = h; }, SealSpec{true, 7});
  }
  const size_t slot = plans[0]->slotBytes(), row = count * 4 + kSealTagBytes;
  std::vector<std::vector<char>> in(n, std::vector<char>(slot)), out(n, std::vector<char>(slot));
  std::vector<Segment> segs(n);
  gForged = 0;
  for (int r = 0; r < n; ++r) {
    segs[r] = plans[r]->segment(0);
    for (const Copy2D& c : segs[r].toHost) doCopy(c, in[r].data(), out[r].data(), true);
    segs[r].host(in[r].data(), out[r].data());
  }
  refCollective(seen);
  std::vector<char> tmp(out[0].begin() + row, out[0].begin() + 2 * row);  // rank 0 gets rows 1 and 2 swapped
  std::copy(out[0].begin() + 2 * row, out[0].begin() + 3 * row, out[0].begin() + row);
  std::copy(tmp.begin(), tmp.end(), out[0].begin() + 2 * row);
  for (int r = 0; r < n; ++r)
    for (const Copy2D& c : segs[r].toDevice) doCopy(c, in[r].data(), out[r].data(), false);
  EXPECT_EQ(gForged, 2);
  for (size_t i = 0; i < count; ++i) {
    EXPECT_EQ(recv[0][i], 1);
    EXPECT_EQ(recv[0][count + i], 0) << "a misplaced row must not land as data";
    EXPECT_EQ(recv[1][count + i], 2);
  }
}

TEST(StagedPlan, SegmentCountFollowsTheSegmentSize) {
  CollCall c{CollKind::AllReduce, reinterpret_cast<void*>(0x1000), reinterpret_cast<void*>(0x100000), 1000, gdrFloat32};
  auto run = [](const CollCall&) {};
  EXPECT_EQ(planCollective(c, 0, 2, 1024, run)->segments(), 4u);  // 256 floats per segment
  EXPECT_EQ(planCollective(c, 0, 2, 4000, run)->segments(), 1u);
  c.kind = CollKind::AllGather;
  EXPECT_EQ(planCollective(c, 0, 2, 1024, run)->segments(), 8u);  // 128 per rank's block
  EXPECT_THROW(planCollective(c, 0, 2, 0, run), Error);
}

// Two ranks exchanging messages of different sizes in one batch: every round
// is one host group; the messages between the pair match in order and
// reassemble into the whole buffers.
void sendRecvRounds(bool seal) {
  gForged = 0;
  const size_t chunk = 10;
  std::vector<size_t> sizes = {0, 1, 25, 10, 33};
  std::vector<std::vector<char>> src(2), dst(2);
  std::vector<std::vector<std::vector<HostMsg>>> rounds(2);
  std::vector<std::unique_ptr<Plan>> plans;
  std::vector<std::vector<char>> bufs(2);
  size_t total = 0;
  for (size_t s : sizes) total += s;
  for (int r = 0; r < 2; ++r) {
    src[r].resize(total);
    for (size_t i = 0; i < total; ++i) src[r][i] = static_cast<char>(r * 100 + i);
    dst[r].assign(total, 0);
    std::vector<P2PItem> items;
    size_t off = 0;
    for (size_t s : sizes) {
      const uint32_t seq = static_cast<uint32_t>(items.size() / 2);  // the n-th message each way
      items.push_back({true, src[r].data() + off, s, 1 - r, seq});
      items.push_back({false, dst[r].data() + off, s, 1 - r, seq});
      off += s;
    }
    plans.push_back(planP2P(
        items, chunk, [&rounds, r](const std::vector<HostMsg>& m) { rounds[r].push_back(m); }, r, seal));
  }
  EXPECT_EQ(plans[0]->sealed(), seal);
  ASSERT_EQ(plans[0]->segments(), 4u);  // 33 bytes in chunks of 10
  const size_t slot = plans[0]->slotBytes();
  std::vector<std::vector<char>> in(2, std::vector<char>(slot)), out(2, std::vector<char>(slot));
  for (size_t k = 0; k < plans[0]->segments(); ++k) {
    std::vector<Segment> seg(2);
    for (int r = 0; r < 2; ++r) {
      seg[r] = plans[r]->segment(k);
      for (const Copy2D& c : seg[r].toHost) doCopy(c, in[r].data(), out[r].data(), true);
      seg[r].host(in[r].data(), out[r].data());
    }
    // Deliver: the i-th send of each rank to the i-th receive of the other.
    for (int r = 0; r < 2; ++r) {
      std::vector<const HostMsg*> sends, recvs;
      for (const auto& m : rounds[r][k])
        if (m.isSend) sends.push_back(&m);
      for (const auto& m : rounds[1 - r][k])
        if (!m.isSend) recvs.push_back(&m);
      ASSERT_EQ(sends.size(), recvs.size());
      for (size_t i = 0; i < sends.size(); ++i) {
        ASSERT_EQ(sends[i]->bytes, recvs[i]->bytes);
        EXPECT_EQ(sends[i]->preSealed, seal);
        EXPECT_EQ(recvs[i]->preSealed, seal);
        copyBytes(recvs[i]->host, sends[i]->host, sends[i]->bytes);
      }
    }
    for (int r = 0; r < 2; ++r)
      for (const Copy2D& c : seg[r].toDevice) doCopy(c, in[r].data(), out[r].data(), false);
  }
  EXPECT_EQ(dst[0], src[1]);
  EXPECT_EQ(dst[1], src[0]);
  EXPECT_EQ(gForged, 0);
}

TEST(StagedPlan, SendRecvRoundsReassemble) { sendRecvRounds(false); }
TEST(StagedPlan, SealedSendRecvRoundsOpenWhereTheyLand) { sendRecvRounds(true); }

}  // namespace
}  // namespace gdr::paths::staged
