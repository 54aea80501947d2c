// AES-256-GCM of one verbs chunk (GDR_ENCRYPT=1): the header's bytes before
// its tag are the additional data, the chunk's sequence number on the
// connection is the nonce's counter (security/aead.h: 4 zero bytes and the
// 64-bit counter), the key is the direction's verbs key
// (security/channel_keys.h). A sequence number is used once per direction,
// so no (key, nonce) pair repeats, and a chunk replayed, reordered or moved
// to another slot fails its tag like an altered one.
#pragma once

#include <cstddef>
#include <cstdint>

#include "security/aead.h"
#include "transport/ib/ib_wire.h"

namespace gdr::transport::ib {

constexpr size_t kChunkAadBytes = offsetof(ChunkHdr, tag);
static_assert(sizeof(ChunkHdr::tag) == security::kTagBytes, "the header holds one GCM tag");

// Sets h.flags and h.tag. Normally encrypts h.len bytes of `src` into `out`
// (kChunkSealed). `preSealed` (the payload was sealed end to end by the GPU,
// kSigPreSealed): authenticates the header alone (kChunkAuthOnly); src and
// out are not used. `flipBit` (tests only) alters one bit after the tag is
// computed: of the ciphertext, or of the tag when there is none.
void sealChunk(const uint8_t key[security::kKeyBytes], uint64_t seq, ChunkHdr& h, const void* src,
               uint8_t* out, bool preSealed, bool flipBit = false);

// Verifies the chunk of sequence `seq` and decrypts its payload in place.
// False, and the payload's h.len bytes zeroed, when it is not authentic or
// carries neither flag (it was not sealed at all).
bool openChunk(const uint8_t key[security::kKeyBytes], uint64_t seq, const ChunkHdr& h,
               uint8_t* payload);

}  // namespace gdr::transport::ib
