#include "paths/staged/nonce.h"

#include <cstring>

#include "core/error.h"

namespace gdr::paths::staged {

void sealNonce(const SealId& id, uint8_t iv[12]) {
  if (id.dest != kSealAllRanks && (id.dest < 0 || id.dest > kSealMaxRank))
    throw InvalidArgument(strprintf("rank %d cannot be named in a GPU-sealed row's nonce", id.dest));
  const uint32_t dest = id.dest == kSealAllRanks ? 0xFFFFFFu : static_cast<uint32_t>(id.dest);
  iv[0] = id.domain;
  iv[1] = static_cast<uint8_t>(dest >> 16);
  iv[2] = static_cast<uint8_t>(dest >> 8);
  iv[3] = static_cast<uint8_t>(dest);
  for (int i = 0; i < 4; ++i) {
    iv[4 + i] = static_cast<uint8_t>(id.seq >> (24 - 8 * i));
    iv[8 + i] = static_cast<uint8_t>(id.index >> (24 - 8 * i));
  }
}

void sealOriginKey(const security::JobSecret& secret, int origin,
                   uint8_t key[security::kKeyBytes]) {
  if (origin < 0 || origin > kSealMaxRank)
    throw InvalidArgument(strprintf("bad origin rank %d", origin));
  static const char kLabel[] = "gdrcoll staged gpu seal v1";
  uint8_t info[sizeof(kLabel) + 4];
  std::memcpy(info, kLabel, sizeof(kLabel));
  for (int i = 0; i < 4; ++i)
    info[sizeof(kLabel) + i] = static_cast<uint8_t>(static_cast<uint32_t>(origin) >> (24 - 8 * i));
  security::hkdfSha256(secret.key, sizeof(secret.key), secret.jobId, sizeof(secret.jobId), info,
                       sizeof(info), key, security::kKeyBytes);
}

uint32_t takeSealSeq(uint32_t& next) {
  if (next == UINT32_MAX)
    throw InvalidUsage(
                "this communicator sealed 2^32 - 1 device operations under GDR_ENCRYPT; create a new one");
  return next++;
}

}  // namespace gdr::paths::staged
