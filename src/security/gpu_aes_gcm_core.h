// The arithmetic of the GPU AES-256-GCM kernels, written once for host and
// device (__host__ __device__ under nvcc, plain inline functions elsewhere), so
// the host unit tests run exactly the code the kernels run, against OpenSSL.
//
// Representation: a 128-bit block is four big-endian 32-bit words, w[0] holding
// bytes 0..3 (byte 0 most significant). AES uses one T-table (Te0; the other
// three are its rotations) reached through a lookup functor, so the kernels can
// keep it in shared memory, one copy per bank. GHASH is GF(2^128) in GCM's
// reflected bit order: bit k of the block (k = 0 the MSB of byte 0) is the
// coefficient of alpha^k, multiplying by alpha is a right shift, and
// alpha^128 = 1 + alpha + alpha^2 + alpha^7 (the 0xE1 byte).
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define GDR_GCM_HD __host__ __device__ __forceinline__
#else
#define GDR_GCM_HD inline
#endif

namespace gdr::security::gcm {

constexpr int kAesRounds = 14;                         // AES-256
constexpr int kRoundKeyWords = 4 * (kAesRounds + 1);  // 60

struct U128 {
  uint32_t w[4];
};

GDR_GCM_HD U128 zero128() { return U128{{0, 0, 0, 0}}; }
GDR_GCM_HD U128 xor128(U128 a, U128 b) {
  return U128{{a.w[0] ^ b.w[0], a.w[1] ^ b.w[1], a.w[2] ^ b.w[2], a.w[3] ^ b.w[3]}};
}
GDR_GCM_HD uint32_t loadBe32(const uint8_t* p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}
GDR_GCM_HD void storeBe32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v >> 24);
  p[1] = uint8_t(v >> 16);
  p[2] = uint8_t(v >> 8);
  p[3] = uint8_t(v);
}
GDR_GCM_HD U128 loadBlock(const uint8_t* p) {
  return U128{{loadBe32(p), loadBe32(p + 4), loadBe32(p + 8), loadBe32(p + 12)}};
}
GDR_GCM_HD void storeBlock(uint8_t* p, U128 v) {
  for (int i = 0; i < 4; ++i) storeBe32(p + 4 * i, v.w[i]);
}
// Byte j (0..15) of a block.
GDR_GCM_HD uint32_t byteOf(const U128& x, int j) { return (x.w[j >> 2] >> (24 - 8 * (j & 3))) & 0xff; }
// Keeps bytes 0..n-1 of a block and zeroes the rest (n in 0..16).
GDR_GCM_HD U128 keepBytes(U128 x, unsigned n) {
  for (unsigned i = 0; i < 4; ++i) {
    unsigned have = n > 4 * i ? n - 4 * i : 0;
    uint32_t mask = have >= 4 ? 0xffffffffu : ~(0xffffffffu >> (8 * have));
    x.w[i] &= mask;
  }
  return x;
}

GDR_GCM_HD uint32_t rotr32(uint32_t x, int n) {
#if defined(__CUDA_ARCH__)
  return __funnelshift_r(x, x, n);
#else
  return (x >> n) | (x << (32 - n));
#endif
}

// ---- AES-256 -----------------------------------------------------------------

GDR_GCM_HD uint32_t xtime(uint32_t x) { return ((x << 1) ^ ((x >> 7) * 0x1b)) & 0xff; }

GDR_GCM_HD uint32_t gf256Mul(uint32_t a, uint32_t b) {
  uint32_t r = 0;
  for (int i = 0; i < 8; ++i) {
    r ^= a & (0u - (b & 1));
    a = xtime(a);
    b >>= 1;
  }
  return r;
}

// The S-box from its definition: the inverse in GF(2^8) (x^254; 0 maps to 0)
// and the affine map. No 256-byte literal table to mistype.
GDR_GCM_HD uint32_t aesSbox(uint32_t x) {
  uint32_t inv = 1, base = x;
  for (uint32_t e = 254; e; e >>= 1) {
    if (e & 1) inv = gf256Mul(inv, base);
    base = gf256Mul(base, base);
  }
  uint32_t r = inv;
  for (int k = 1; k <= 4; ++k) r ^= ((inv << k) | (inv >> (8 - k))) & 0xff;
  return r ^ 0x63;
}

// Te0[x] = (2s, s, s, 3s) for s = S(x); S(x) is its byte 1.
GDR_GCM_HD uint32_t aesTe0(uint32_t x) {
  uint32_t s = aesSbox(x), s2 = xtime(s);
  return (s2 << 24) | (s << 16) | (s << 8) | (s2 ^ s);
}

GDR_GCM_HD uint32_t subWord(uint32_t w) {
  return (aesSbox(w >> 24) << 24) | (aesSbox((w >> 16) & 0xff) << 16) | (aesSbox((w >> 8) & 0xff) << 8) |
         aesSbox(w & 0xff);
}

// FIPS-197 key expansion for a 32-byte key: 60 round-key words.
GDR_GCM_HD void aesExpandKey256(const uint8_t key[32], uint32_t rk[kRoundKeyWords]) {
  for (int i = 0; i < 8; ++i) rk[i] = loadBe32(key + 4 * i);
  uint32_t rcon = 1;
  for (int i = 8; i < kRoundKeyWords; ++i) {
    uint32_t t = rk[i - 1];
    if (i % 8 == 0) {
      t = subWord((t << 8) | (t >> 24)) ^ (rcon << 24);
      rcon = xtime(rcon);
    } else if (i % 8 == 4) {
      t = subWord(t);
    }
    rk[i] = rk[i - 8] ^ t;
  }
}

// One block. `te(x)` returns Te0[x].
template <class Te>
GDR_GCM_HD U128 aesEncrypt(const uint32_t* rk, U128 in, const Te& te) {
  uint32_t s0 = in.w[0] ^ rk[0], s1 = in.w[1] ^ rk[1], s2 = in.w[2] ^ rk[2], s3 = in.w[3] ^ rk[3];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int r = 1; r < kAesRounds; ++r) {
    const uint32_t* k = rk + 4 * r;
    uint32_t t0 = te(s0 >> 24) ^ rotr32(te((s1 >> 16) & 0xff), 8) ^ rotr32(te((s2 >> 8) & 0xff), 16) ^
                  rotr32(te(s3 & 0xff), 24) ^ k[0];
    uint32_t t1 = te(s1 >> 24) ^ rotr32(te((s2 >> 16) & 0xff), 8) ^ rotr32(te((s3 >> 8) & 0xff), 16) ^
                  rotr32(te(s0 & 0xff), 24) ^ k[1];
    uint32_t t2 = te(s2 >> 24) ^ rotr32(te((s3 >> 16) & 0xff), 8) ^ rotr32(te((s0 >> 8) & 0xff), 16) ^
                  rotr32(te(s1 & 0xff), 24) ^ k[2];
    uint32_t t3 = te(s3 >> 24) ^ rotr32(te((s0 >> 16) & 0xff), 8) ^ rotr32(te((s1 >> 8) & 0xff), 16) ^
                  rotr32(te(s2 & 0xff), 24) ^ k[3];
    s0 = t0, s1 = t1, s2 = t2, s3 = t3;
  }
  auto sb = [&](uint32_t x) { return (te(x) >> 16) & 0xff; };
  const uint32_t* k = rk + 4 * kAesRounds;
  U128 out;
  out.w[0] = ((sb(s0 >> 24) << 24) | (sb((s1 >> 16) & 0xff) << 16) | (sb((s2 >> 8) & 0xff) << 8) | sb(s3 & 0xff)) ^ k[0];
  out.w[1] = ((sb(s1 >> 24) << 24) | (sb((s2 >> 16) & 0xff) << 16) | (sb((s3 >> 8) & 0xff) << 8) | sb(s0 & 0xff)) ^ k[1];
  out.w[2] = ((sb(s2 >> 24) << 24) | (sb((s3 >> 16) & 0xff) << 16) | (sb((s0 >> 8) & 0xff) << 8) | sb(s1 & 0xff)) ^ k[2];
  out.w[3] = ((sb(s3 >> 24) << 24) | (sb((s0 >> 16) & 0xff) << 16) | (sb((s1 >> 8) & 0xff) << 8) | sb(s2 & 0xff)) ^ k[3];
  return out;
}

// ---- GF(2^128) for GHASH ---------------------------------------------------------

// The multiplicative identity (alpha^0: the MSB of byte 0).
GDR_GCM_HD U128 gfOne() { return U128{{0x80000000u, 0, 0, 0}}; }

// v * alpha.
GDR_GCM_HD U128 gfMulAlpha(U128 v) {
  uint32_t carry = 0u - (v.w[3] & 1);
  v.w[3] = (v.w[3] >> 1) | (v.w[2] << 31);
  v.w[2] = (v.w[2] >> 1) | (v.w[1] << 31);
  v.w[1] = (v.w[1] >> 1) | (v.w[0] << 31);
  v.w[0] = (v.w[0] >> 1) ^ (0xe1000000u & carry);
  return v;
}

// x * y, one bit at a time: for values with no table (once per thread).
GDR_GCM_HD U128 gfMul(U128 x, U128 y) {
  U128 z = zero128();
  for (int i = 0; i < 128; ++i) {
    uint32_t m = 0u - ((x.w[i >> 5] >> (31 - (i & 31))) & 1);
    z.w[0] ^= y.w[0] & m;
    z.w[1] ^= y.w[1] & m;
    z.w[2] ^= y.w[2] & m;
    z.w[3] ^= y.w[3] & m;
    y = gfMulAlpha(y);
  }
  return z;
}

// Entry b of the byte table of v: b(alpha) * v, with bit 0x80 of b the
// coefficient of alpha^0 (a block's byte read the way GCM reads it).
GDR_GCM_HD U128 gfTable8Entry(U128 v, uint32_t b) {
  U128 z = zero128();
  for (int k = 0; k < 8; ++k) {
    uint32_t m = 0u - ((b >> (7 - k)) & 1);
    for (int i = 0; i < 4; ++i) z.w[i] ^= v.w[i] & m;
    v = gfMulAlpha(v);
  }
  return z;
}

// z * alpha^8: shift right one byte; the byte r shifted out comes back as
// r(alpha) * (1 + alpha + alpha^2 + alpha^7) in the top 15 bits, which is the
// carry-less product r * 0xE1 placed at bit 17.
GDR_GCM_HD U128 gfMulAlpha8(U128 z) {
  uint32_t r = z.w[3] & 0xff;
#if defined(__CUDA_ARCH__)
  z.w[3] = __funnelshift_r(z.w[3], z.w[2], 8);
  z.w[2] = __funnelshift_r(z.w[2], z.w[1], 8);
  z.w[1] = __funnelshift_r(z.w[1], z.w[0], 8);
#else
  z.w[3] = (z.w[3] >> 8) | (z.w[2] << 24);
  z.w[2] = (z.w[2] >> 8) | (z.w[1] << 24);
  z.w[1] = (z.w[1] >> 8) | (z.w[0] << 24);
#endif
  z.w[0] = (z.w[0] >> 8) ^ (r << 24) ^ (r << 23) ^ (r << 22) ^ (r << 17);
  return z;
}

// x * v with `tab(b)` returning gfTable8Entry(v, b): Horner over the bytes of
// x from the last (the highest powers of alpha) to the first.
template <class Tab>
GDR_GCM_HD U128 gfMulTable8(U128 x, const Tab& tab) {
  U128 z = tab(byteOf(x, 15));
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int j = 14; j >= 0; --j) z = xor128(gfMulAlpha8(z), tab(byteOf(x, j)));
  return z;
}

// ---- the GCM layout shared by host and kernels -----------------------------------
//
// GHASH over (A blocks, C blocks, length block) is the sum of X * H^(e) over its
// blocks, the last (the length block) with e = 1. The kernels number the blocks
// from the end: position q = 0 is the length block, q = 1..c the ciphertext
// blocks from the last to the first (q <-> block c - q), q = c+1..c+a the AAD
// blocks from the last to the first; block q is weighted H^(q+1). With P
// threads, thread u takes positions u, u+P, u+2P, ... and forms
// Y_u = sum_m X_(u+mP) * (H^P)^m by Horner; the tag's hash is
// sum_u Y_u * H^(u+1). Grid of G blocks of T threads, u = g*T + t:
// H^(u+1) = H^(t+1) * H^(g*T), both from per-key tables.

constexpr int kThreads = 256;   // T
constexpr int kMaxGrid = 1024;  // G at most
constexpr size_t kIvBytes = 12;
constexpr uint64_t kMinPositionsPerThread = 4;

// Blocks of a launch over `positions` positions: enough for about
// kMinPositionsPerThread per thread, at least 1, at most `cap` (what fits at once).
inline int launchGrid(uint64_t positions, int cap) {
  const uint64_t perBlock = uint64_t(kThreads) * kMinPositionsPerThread;
  const uint64_t want = (positions + perBlock - 1) / perBlock;
  return static_cast<int>(want < 1 ? 1 : want > uint64_t(cap) ? uint64_t(cap) : want);
}
constexpr size_t kMaxAadBytes = 64;

// Per key, on the device: powers of H the kernels combine with, and Te0
// (the same for every key; here so a kernel loads it instead of computing it).
struct Tables {
  uint32_t te0[256];
  U128 hThread[kThreads];     // H^(t+1)
  U128 hGrid[kMaxGrid + 1];  // H^(g*T); hGrid[G] = H^P is the Horner step
};

// Everything one launch needs, passed by value (kernel parameter space).
struct LaunchParams {
  uint32_t rk[kRoundKeyWords];
  uint32_t iv[3];                   // J0 = iv || 1; data block i uses counter 2 + i
  U128 ej0;                         // E(K, J0), masks the tag
  U128 lenBlock;                    // [len(A) bits]_64 || [len(C) bits]_64
  uint32_t aad[kMaxAadBytes / 4];  // big-endian words, zero padded
  uint32_t aadBlocks;               // a
  uint64_t len;                     // plaintext bytes
  uint64_t blocks;                  // c = ceil(len / 16)
  uint64_t positions;               // 1 + c + a
};

GDR_GCM_HD U128 counterBlock(const LaunchParams& p, uint64_t i) {
  return U128{{p.iv[0], p.iv[1], p.iv[2], uint32_t(i + 2)}};
}
// Bytes of data block i (16 but for a short last block).
GDR_GCM_HD unsigned blockBytes(const LaunchParams& p, uint64_t i) {
  return i + 1 < p.blocks || (p.len & 15) == 0 ? 16u : unsigned(p.len & 15);
}
GDR_GCM_HD U128 aadBlock(const LaunchParams& p, uint64_t j) {
  return U128{{p.aad[4 * j], p.aad[4 * j + 1], p.aad[4 * j + 2], p.aad[4 * j + 3]}};
}

enum class Mode { Seal, Hash, Decrypt };

// One thread's share of a launch: thread u of P. Seal encrypts its data
// blocks and hashes the ciphertext; Hash only hashes (the input is
// ciphertext); Decrypt only decrypts (or writes zeros when !authentic).
// `io.load(i, n)` / `io.store(i, x, n)` move data block i (n bytes, as a
// block, zero padded); `te` is the AES table, `tab` the byte table of H^P.
// Returns Y_u (zero for Decrypt).
template <Mode kMode, class Io, class Te, class Tab>
GDR_GCM_HD U128 threadPart(const LaunchParams& p, uint64_t u, uint64_t P, const Io& io, const Te& te,
                           const Tab& tab, bool authentic) {
  U128 y = zero128();
  if (u >= p.positions) return y;
  for (uint64_t m = (p.positions - 1 - u) / P + 1; m-- > 0;) {
    uint64_t q = u + m * P;
    U128 x;
    if (q == 0) {
      x = p.lenBlock;
    } else if (q <= p.blocks) {
      uint64_t i = p.blocks - q;
      unsigned n = blockBytes(p, i);
      U128 in = io.load(i, n);
      if (kMode == Mode::Hash) {
        x = in;
      } else {
        U128 ks = aesEncrypt(p.rk, counterBlock(p, i), te);
        x = kMode == Mode::Decrypt && !authentic ? zero128() : keepBytes(xor128(in, ks), n);
        io.store(i, x, n);
      }
    } else {
      x = aadBlock(p, p.blocks + p.aadBlocks - q);
    }
    if (kMode != Mode::Decrypt) y = xor128(gfMulTable8(y, tab), x);
  }
  return y;
}

}  // namespace gdr::security::gcm
