#include "security/gpu_aes_gcm_host.h"

#include <cstring>

#include "core/error.h"

namespace gdr::security::gcm {

namespace {

struct HostTe {
  uint32_t t[256];
  HostTe() {
    for (uint32_t x = 0; x < 256; ++x) t[x] = aesTe0(x);
  }
  uint32_t operator()(uint32_t x) const { return t[x]; }
};

const HostTe& hostTe() {
  static const HostTe te;
  return te;
}

}  // namespace

U128 encryptBlock(const uint32_t rk[kRoundKeyWords], U128 in) { return aesEncrypt(rk, in, hostTe()); }

void expandKey(const uint8_t key[32], HostKey& out) {
  aesExpandKey256(key, out.rk);
  out.h = encryptBlock(out.rk, zero128());
}

void buildTables(U128 h, Tables& out) {
  std::memcpy(out.te0, hostTe().t, sizeof(out.te0));
  U128 p = h;
  for (int t = 0; t < kThreads; ++t) {
    out.hThread[t] = p;  // H^(t+1)
    p = gfMul(p, h);
  }
  // p = H^(T+1); H^T is the last hThread entry.
  const U128 hT = out.hThread[kThreads - 1];
  out.hGrid[0] = gfOne();
  for (int g = 1; g <= kMaxGrid; ++g) out.hGrid[g] = gfMul(out.hGrid[g - 1], hT);
}

void makeLaunchParams(const HostKey& key, const uint8_t iv[kIvBytes], const void* aad, size_t aadLen,
                      uint64_t len, LaunchParams& out) {
  GDR_CHECK_ARG(aadLen <= kMaxAadBytes, "AES-GCM on the GPU: %zu bytes of AAD, at most %zu", aadLen,
                kMaxAadBytes);
  GDR_CHECK_ARG(len <= kMaxLen, "AES-GCM: %llu bytes under one nonce, at most %llu",
                static_cast<unsigned long long>(len), static_cast<unsigned long long>(kMaxLen));
  GDR_CHECK_ARG(aadLen == 0 || aad, "AES-GCM: null AAD of %zu bytes", aadLen);
  std::memcpy(out.rk, key.rk, sizeof(out.rk));
  for (int i = 0; i < 3; ++i) out.iv[i] = loadBe32(iv + 4 * i);
  out.ej0 = encryptBlock(key.rk, U128{{out.iv[0], out.iv[1], out.iv[2], 1}});
  uint8_t padded[kMaxAadBytes] = {};
  if (aadLen) std::memcpy(padded, aad, aadLen);
  for (size_t i = 0; i < kMaxAadBytes / 4; ++i) out.aad[i] = loadBe32(padded + 4 * i);
  out.aadBlocks = static_cast<uint32_t>((aadLen + 15) / 16);
  out.len = len;
  out.blocks = (len + 15) / 16;
  out.positions = 1 + out.blocks + out.aadBlocks;
  const uint64_t aBits = uint64_t{aadLen} * 8, cBits = len * 8;
  out.lenBlock = U128{{uint32_t(aBits >> 32), uint32_t(aBits), uint32_t(cBits >> 32), uint32_t(cBits)}};
}

}  // namespace gdr::security::gcm

namespace gdr::security {

void recordNonce(uint64_t counter, uint8_t iv[gcm::kIvBytes]) {
  std::memset(iv, 0, 4);
  for (int i = 0; i < 8; ++i) iv[4 + i] = static_cast<uint8_t>(counter >> (56 - 8 * i));
}

void recordHeader(uint32_t len, uint8_t hdr[4]) { std::memcpy(hdr, &len, 4); }

}  // namespace gdr::security
