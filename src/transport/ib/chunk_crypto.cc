#include "transport/ib/chunk_crypto.h"

#include <cstring>

namespace gdr::transport::ib {

void sealChunk(const uint8_t key[security::kKeyBytes], uint64_t seq, ChunkHdr& h, const void* src,
               uint8_t* out, bool preSealed, bool flipBit) {
  h.flags = preSealed ? kChunkAuthOnly : kChunkSealed;
  std::memset(h.tag, 0, sizeof(h.tag));
  security::Piece piece{src, preSealed ? 0 : h.len};
  security::gcmSeal(key, seq, &h, kChunkAadBytes, &piece, preSealed ? 0 : 1, out, h.tag);
  if (!flipBit) return;
  if (!preSealed && h.len)
    out[0] ^= 0x01;
  else
    h.tag[0] ^= 0x01;
}

bool openChunk(const uint8_t key[security::kKeyBytes], uint64_t seq, const ChunkHdr& h,
               uint8_t* payload) {
  bool ok = h.flags == kChunkSealed || h.flags == kChunkAuthOnly;
  const size_t n = h.flags == kChunkSealed ? h.len : 0;
  ok = ok && security::gcmOpen(key, seq, &h, kChunkAadBytes, payload, n, h.tag);
  if (!ok && h.len) std::memset(payload, 0, h.len);
  return ok;
}

}  // namespace gdr::transport::ib
