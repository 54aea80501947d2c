// Keys and nonces of device buffers sealed on the GPU for the staged path
// (GDR_ENCRYPT=1; paths/staged/seal.h does the sealing).
//
// A row the GPU seals may be forwarded by other ranks (a ring all-gather) and
// opened by any rank of the communicator, so it is sealed end to end under
// its origin's key, not a connection's: every rank derives every origin's
// key from the job secret (HKDF-SHA-256, salt = the job id, which is fresh for
// every communicator; info names the origin rank).
//
// The 96-bit nonce is not sent: both ends compute it from where the row sits,
// so an old row replayed in a new place fails its tag.
//   byte 0      domain: collective or send/receive
//   bytes 1-3   destination rank (0xFFFFFF: every rank, as in broadcast)
//   bytes 4-7   sequence: the communicator's count of sealed collectives, or
//               for send/receive the count of sealed messages origin -> dest
//   bytes 8-11  index: the segment (collectives) or chunk (send/receive)
// Under one origin key no two rows share (domain, dest, sequence, index), so
// no nonce is used twice; a sequence that would wrap is refused.
#pragma once

#include <cstdint>

#include "security/job_secret.h"

namespace gdr::paths::staged {

enum SealDomain : uint8_t { kSealCollective = 1, kSealP2P = 2 };
constexpr int kSealAllRanks = -1;
constexpr int kSealMaxRank = 0xFFFFFE;  // ranks a nonce can name
constexpr size_t kSealTagBytes = 16;

struct SealId {
  SealDomain domain = kSealCollective;
  int dest = kSealAllRanks;
  uint32_t seq = 0;
  uint32_t index = 0;
};

// Throws InvalidArgument for a rank the nonce cannot name.
void sealNonce(const SealId& id, uint8_t iv[12]);
void sealOriginKey(const security::JobSecret& secret, int origin, uint8_t key[security::kKeyBytes]);
// The next sequence number of a counter; throws before it would wrap.
uint32_t takeSealSeq(uint32_t& next);

}  // namespace gdr::paths::staged
