// Host side of the GPU AES-256-GCM: the work done once per key (round keys,
// H = E(K, 0), the tables of powers of H) and once per call (J0, E(K, J0), the
// AAD and length blocks). Plain C++, so it is unit-tested without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>

#include "security/gpu_aes_gcm_core.h"

namespace gdr::security::gcm {

struct HostKey {
  uint32_t rk[kRoundKeyWords];
  U128 h;  // E(K, 0^128)
};

void expandKey(const uint8_t key[32], HostKey& out);
// One AES-256 block on the host (the same round code the kernels run).
U128 encryptBlock(const uint32_t rk[kRoundKeyWords], U128 in);
void buildTables(U128 h, Tables& out);
// Parameters of one seal or open of `len` bytes; throws InvalidArgument for an
// AAD over kMaxAadBytes or a length GCM cannot carry under one nonce.
void makeLaunchParams(const HostKey& key, const uint8_t iv[kIvBytes], const void* aad, size_t aadLen,
                      uint64_t len, LaunchParams& out);
// The most plaintext one call takes: 2^32 - 2 blocks (GCM's 32-bit counter).
constexpr uint64_t kMaxLen = (uint64_t{1} << 36) - 32;

}  // namespace gdr::security::gcm

namespace gdr::security {
// aead.h's record format, for a GPU end that talks to a CPU end: the nonce of
// record `counter` (4 zero bytes, then the counter big-endian) and the AAD
// (the record's 4-byte length header, host byte order).
void recordNonce(uint64_t counter, uint8_t iv[gcm::kIvBytes]);
void recordHeader(uint32_t len, uint8_t hdr[4]);
}  // namespace gdr::security
