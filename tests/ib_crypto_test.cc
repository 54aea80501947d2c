// GDR_ENCRYPT=1 on verbs without verbs: the keys a connection derives for its
// QPs, one chunk sealed and opened (header as additional data, sequence as
// nonce), and the sealing ring / open-ahead pipeline on the crypto pool,
// driven by hand the way IbEndpoint drives it.
#if GDR_HAVE_IB
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "security/channel_keys.h"
#include "transport/ib/chunk_cipher.h"
#include "transport/ib/chunk_crypto.h"

namespace gdr::transport::ib {
namespace {

std::mt19937_64& rng() {
  static std::mt19937_64 r(std::random_device{}());
  return r;
}

std::vector<uint8_t> randomBytes(size_t n) {
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng()());
  return v;
}

// The two ends of one connection: A's send key is B's receive key.
struct KeyPair {
  security::SessionKeys a, b;
  KeyPair() {
    security::randomBytes(a.send, sizeof(a.send));
    security::randomBytes(a.recv, sizeof(a.recv));
    std::memcpy(b.send, a.recv, sizeof(b.send));
    std::memcpy(b.recv, a.send, sizeof(b.recv));
  }
};

ChunkHdr header(size_t len, uint64_t offset, uint64_t msgBytes) {
  ChunkHdr h{};
  h.magic = kChunkMagic;
  h.version = kChunkVersion;
  h.len = static_cast<uint32_t>(len);
  h.sig.kind = 3;
  h.sig.dtype = 7;
  h.sig.count = rng()() % 100000;
  h.sig.seq = rng()();
  h.msgBytes = msgBytes;
  h.offset = offset;
  return h;
}

bool allZero(const uint8_t* p, size_t n) {
  return std::all_of(p, p + n, [](uint8_t b) { return b == 0; });
}

TEST(IbChannelKeys, DirectionsMatchAcrossTheConnectionAndDifferFromIt) {
  KeyPair k;
  security::SessionKeys a = security::deriveChannelKeys(k.a, security::kIbKeyLabel);
  security::SessionKeys b = security::deriveChannelKeys(k.b, security::kIbKeyLabel);
  EXPECT_EQ(0, std::memcmp(a.send, b.recv, sizeof(a.send)));
  EXPECT_EQ(0, std::memcmp(a.recv, b.send, sizeof(a.recv)));
  EXPECT_NE(0, std::memcmp(a.send, a.recv, sizeof(a.send)));
  EXPECT_NE(0, std::memcmp(a.send, k.a.send, sizeof(a.send)));
  security::SessionKeys other = security::deriveChannelKeys(k.a, "gdrcoll other v1");
  EXPECT_NE(0, std::memcmp(a.send, other.send, sizeof(a.send)));

  security::ChannelKeyTable t;
  EXPECT_EQ(t.get(0), nullptr);
  t.derive(3, k.a, security::kIbKeyLabel);
  t.derive(1, k.b, security::kIbKeyLabel);
  ASSERT_NE(t.get(3), nullptr);
  ASSERT_NE(t.get(1), nullptr);
  EXPECT_EQ(t.get(2), nullptr);
  EXPECT_EQ(t.get(-1), nullptr);
  EXPECT_EQ(0, std::memcmp(t.get(3)->send, a.send, sizeof(a.send)));
  EXPECT_EQ(0, std::memcmp(t.get(1)->send, b.send, sizeof(b.send)));
}

TEST(IbChunkCrypto, SealedChunkOpensOnlyUnderItsHeaderSequenceAndKey) {
  KeyPair k;
  for (size_t len : {size_t{0}, size_t{1}, size_t{4099}, size_t{65536}}) {
    const uint64_t seq = rng()();
    std::vector<uint8_t> plain = randomBytes(len), wire(len + 1);
    ChunkHdr h = header(len, 4096, len + 8192);
    sealChunk(k.a.send, seq, h, plain.data(), wire.data(), false);
    EXPECT_EQ(h.flags, kChunkSealed);
    if (len > 16) {
      EXPECT_NE(0, std::memcmp(plain.data(), wire.data(), len)) << "payload left in clear";
    }

    std::vector<uint8_t> got = wire;
    ASSERT_TRUE(openChunk(k.b.recv, seq, h, got.data())) << len;
    if (len) {  // an empty vector's data() may be null
      EXPECT_EQ(0, std::memcmp(got.data(), plain.data(), len));
    }

    // Another sequence number (a replayed or moved chunk), the other
    // direction's key, any header field changed: refused, payload zeroed.
    auto refused = [&](const ChunkHdr& hh, uint64_t s, const uint8_t* key) {
      std::vector<uint8_t> g = wire;
      bool ok = openChunk(key, s, hh, g.data());
      return !ok && allZero(g.data(), len);
    };
    EXPECT_TRUE(refused(h, seq + 1, k.b.recv));
    EXPECT_TRUE(refused(h, seq, k.b.send));
    ChunkHdr t = h;
    t.offset += 1;
    EXPECT_TRUE(refused(t, seq, k.b.recv));
    t = h;
    t.sig.count ^= 1;
    EXPECT_TRUE(refused(t, seq, k.b.recv));
    t = h;
    t.msgBytes += 4096;
    EXPECT_TRUE(refused(t, seq, k.b.recv));
    t = h;
    t.tag[rng()() % sizeof(t.tag)] ^= 0x10;
    EXPECT_TRUE(refused(t, seq, k.b.recv));
    t = h;
    t.flags = kChunkAuthOnly;  // "the payload was pre-sealed": not for a sealed chunk's tag
    EXPECT_TRUE(refused(t, seq, k.b.recv));
    if (len) {
      std::vector<uint8_t> g = wire;
      g[rng()() % len] ^= 0x01;
      EXPECT_FALSE(openChunk(k.b.recv, seq, h, g.data()));
      EXPECT_TRUE(allZero(g.data(), len));
    }
  }
}

TEST(IbChunkCrypto, FlipBitHookMakesTheReceiverRefuse) {
  KeyPair k;
  std::vector<uint8_t> plain = randomBytes(1000), wire(1000);
  ChunkHdr h = header(1000, 0, 1000);
  sealChunk(k.a.send, 5, h, plain.data(), wire.data(), false, /*flipBit=*/true);
  EXPECT_FALSE(openChunk(k.b.recv, 5, h, wire.data()));
  EXPECT_TRUE(allZero(wire.data(), wire.size()));
  ChunkHdr e = header(0, 0, 0);  // nothing to flip but the tag
  sealChunk(k.a.send, 6, e, plain.data(), nullptr, false, true);
  EXPECT_FALSE(openChunk(k.b.recv, 6, e, nullptr));
}

TEST(IbChunkCrypto, PreSealedPayloadGoesAsItIsWithTheHeaderAuthenticated) {
  KeyPair k;
  std::vector<uint8_t> payload = randomBytes(5000);  // sealed by the GPU, opaque here
  ChunkHdr h = header(payload.size(), 0, payload.size());
  h.sig.flags = kSigPreSealed;
  sealChunk(k.a.send, 9, h, nullptr, nullptr, true);
  EXPECT_EQ(h.flags, kChunkAuthOnly);
  std::vector<uint8_t> got = payload;
  ASSERT_TRUE(openChunk(k.b.recv, 9, h, got.data()));
  EXPECT_EQ(got, payload);  // not decrypted: its end-to-end seal is the GPU's to open
  ChunkHdr t = h;
  t.len -= 1;
  EXPECT_FALSE(openChunk(k.b.recv, 9, t, got.data()));
  t = h;
  t.flags = kChunkSealed;
  EXPECT_FALSE(openChunk(k.b.recv, 9, t, got.data()));
  EXPECT_FALSE(openChunk(k.b.recv, 10, h, got.data()));
}

TEST(IbChunkCrypto, AnUnsealedChunkIsRefused) {
  KeyPair k;
  std::vector<uint8_t> payload = randomBytes(100);
  ChunkHdr h = header(payload.size(), 0, payload.size());  // flags 0: sent in clear
  EXPECT_FALSE(openChunk(k.b.recv, 0, h, payload.data()));
}

// The endpoint's use of ChunkCipher: chunks handed out in order, sealed
// ahead (big ones on the pool), "written" into the peer's slot when sealed,
// opened ahead there and delivered in order; send completions in any order
// free ring entries; the ring never holds more than its entries.
TEST(IbChunkCipher, PipelineDeliversEveryChunkAndRefusesAFlippedOne) {
  KeyPair k;
  const uint32_t entries = 8, slots = 4;
  const size_t maxPayload = 64 * 1024, stride = sizeof(ChunkHdr) + maxPayload;
  ChunkCipher tx(k.a, entries, stride, slots, maxPayload);
  ChunkCipher rx(k.b, entries, stride, slots, maxPayload);
  std::vector<char> slotMem(stride * slots);

  const int nChunks = 200, corruptAt = 150;
  std::vector<std::vector<uint8_t>> plain(nChunks);
  for (int i = 0; i < nChunks; ++i) plain[i] = randomBytes(rng()() % 3 ? rng()() % maxPayload : 0);
  uint64_t handed = 0, posted = 0, delivered = 0;
  std::vector<uint64_t> inFlight;  // posted, send not completed
  bool refused = false;
  while (delivered < static_cast<uint64_t>(nChunks) && !refused) {
    while (handed < static_cast<uint64_t>(nChunks) && tx.canSeal(handed)) {
      if (handed == static_cast<uint64_t>(corruptAt)) security::testing::corruptNextRecord();
      const auto& p = plain[handed];
      ChunkHdr h = header(p.size(), 0, p.size());
      tx.seal(handed, h, p.data(), false);
      ++handed;
    }
    ASSERT_LE(handed - std::min(handed, posted), entries);
    // Post while the receiver has a free slot (credits).
    while (posted < handed && posted - delivered < slots) {
      ChunkHdr* h = tx.sealed(posted);
      if (!h) break;
      ASSERT_EQ(h->flags, kChunkSealed);
      char* slot = slotMem.data() + (posted % slots) * stride;
      std::memcpy(slot, h, sizeof(ChunkHdr) + h->len);
      rx.openAhead(posted, static_cast<uint32_t>(posted % slots), slot);
      inFlight.push_back(posted++);
    }
    // Some send completions, in any order.
    std::shuffle(inFlight.begin(), inFlight.end(), rng());
    size_t nDone = inFlight.empty() ? 0 : rng()() % (inFlight.size() + 1);
    for (size_t i = 0; i < nDone; ++i) tx.sent(inFlight[i]);
    inFlight.erase(inFlight.begin(), inFlight.begin() + static_cast<long>(nDone));
    // Deliver in order.
    while (delivered < posted) {
      char* slot = slotMem.data() + (delivered % slots) * stride;
      ChunkCipher::Opened o = rx.open(delivered, static_cast<uint32_t>(delivered % slots), slot);
      if (o == ChunkCipher::kOpenBusy) break;
      const auto& p = plain[delivered];
      if (o == ChunkCipher::kOpenFailed) {
        EXPECT_EQ(delivered, static_cast<uint64_t>(corruptAt));
        EXPECT_TRUE(allZero(reinterpret_cast<uint8_t*>(slot) + sizeof(ChunkHdr), p.size()));
        refused = true;
        break;
      }
      if (!p.empty()) {  // an empty vector's data() may be null
        ASSERT_EQ(0, std::memcmp(slot + sizeof(ChunkHdr), p.data(), p.size())) << "chunk " << delivered;
      }
      ++delivered;
    }
  }
  EXPECT_TRUE(refused) << "the flipped chunk was delivered";
  EXPECT_EQ(delivered, static_cast<uint64_t>(corruptAt));
  tx.quiesce();
  rx.quiesce();
}

TEST(IbChunkCipher, RingRefusesOutOfOrderAndOversizedHandOuts) {
  KeyPair k;
  ChunkCipher tx(k.a, 2, sizeof(ChunkHdr) + 4096, 2, 4096);
  std::vector<uint8_t> p = randomBytes(4096);
  EXPECT_THROW(tx.seal(1, header(10, 0, 10), p.data(), false), InternalError);
  EXPECT_THROW(tx.seal(0, header(4097, 0, 4097), p.data(), false), InternalError);
  tx.seal(0, header(4096, 0, 4096), p.data(), false);
  tx.seal(1, header(0, 0, 0), nullptr, false);
  ASSERT_NE(tx.sealed(1), nullptr);
  EXPECT_EQ(tx.sealed(1)->flags, kChunkSealed);  // empty, but still sealed, not "pre-sealed"
  EXPECT_FALSE(tx.canSeal(2));
  tx.sent(1);
  EXPECT_FALSE(tx.canSeal(2));  // entry 0 still on the wire
  tx.sent(0);
  EXPECT_TRUE(tx.canSeal(2) && tx.canSeal(3));
}

}  // namespace
}  // namespace gdr::transport::ib
#endif
