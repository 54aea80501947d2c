#include "security/aead.h"

#include <openssl/evp.h>

#include <atomic>
#include <cstring>

#include "core/error.h"

namespace gdr::security {

namespace {

std::atomic<bool> gCorruptNext{false};

void makeIv(uint64_t counter, uint8_t iv[12]) {
  std::memset(iv, 0, 4);
  for (int i = 0; i < 8; ++i) iv[4 + i] = static_cast<uint8_t>(counter >> (56 - 8 * i));
}

// One encryption and one decryption context per thread, keyed per call (the
// AES key schedule is a few hundred nanoseconds against tens of microseconds
// for a record).
struct ThreadCtx {
  EVP_CIPHER_CTX* enc = nullptr;
  EVP_CIPHER_CTX* dec = nullptr;
  ~ThreadCtx() {
    EVP_CIPHER_CTX_free(enc);
    EVP_CIPHER_CTX_free(dec);
  }
  EVP_CIPHER_CTX* get(bool encrypt) {
    EVP_CIPHER_CTX*& c = encrypt ? enc : dec;
    if (c) return c;
    c = EVP_CIPHER_CTX_new();
    if (!c) throw InternalError("OpenSSL: EVP_CIPHER_CTX_new failed");
    int ok = encrypt ? EVP_EncryptInit_ex(c, EVP_aes_256_gcm(), nullptr, nullptr, nullptr)
                     : EVP_DecryptInit_ex(c, EVP_aes_256_gcm(), nullptr, nullptr, nullptr);
    if (ok != 1) throw InternalError("OpenSSL: AES-256-GCM initialisation failed");
    return c;
  }
};
thread_local ThreadCtx tCtx;

}  // namespace

uint64_t takeCounter(uint64_t& next) {
  if (next == UINT64_MAX) throw InternalError("AES-GCM counter exhausted");
  return next++;
}

void gcmSeal(const uint8_t key[kKeyBytes], uint64_t counter, const void* aad, size_t aadLen, const Piece* in,
             int nin, uint8_t* out, uint8_t tag[kTagBytes]) {
  EVP_CIPHER_CTX* ctx = tCtx.get(true);
  uint8_t iv[12];
  makeIv(counter, iv);
  int n = 0;
  bool ok = EVP_EncryptInit_ex(ctx, nullptr, nullptr, key, iv) == 1 &&
            (aadLen == 0 || EVP_EncryptUpdate(ctx, nullptr, &n, static_cast<const uint8_t*>(aad),
                                              static_cast<int>(aadLen)) == 1);
  for (int i = 0; ok && i < nin; ++i) {
    if (!in[i].bytes) continue;
    ok = EVP_EncryptUpdate(ctx, out, &n, static_cast<const uint8_t*>(in[i].data), static_cast<int>(in[i].bytes)) ==
             1 &&
         static_cast<size_t>(n) == in[i].bytes;
    out += in[i].bytes;
  }
  uint8_t none[16];
  ok = ok && EVP_EncryptFinal_ex(ctx, none, &n) == 1 &&
       EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, kTagBytes, tag) == 1;
  if (!ok) throw InternalError("OpenSSL: AES-GCM encryption failed");
}

bool gcmOpen(const uint8_t key[kKeyBytes], uint64_t counter, const void* aad, size_t aadLen, uint8_t* data,
             size_t len, const uint8_t tag[kTagBytes]) {
  EVP_CIPHER_CTX* ctx = tCtx.get(false);
  uint8_t iv[12];
  makeIv(counter, iv);
  int n = 0;
  uint8_t tagCopy[kTagBytes];
  std::memcpy(tagCopy, tag, kTagBytes);
  bool ok = EVP_DecryptInit_ex(ctx, nullptr, nullptr, key, iv) == 1 &&
            (aadLen == 0 || EVP_DecryptUpdate(ctx, nullptr, &n, static_cast<const uint8_t*>(aad),
                                              static_cast<int>(aadLen)) == 1) &&
            (len == 0 || EVP_DecryptUpdate(ctx, data, &n, data, static_cast<int>(len)) == 1) &&
            EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, kTagBytes, tagCopy) == 1;
  uint8_t none[16];
  ok = ok && EVP_DecryptFinal_ex(ctx, none, &n) == 1;
  if (!ok && len) std::memset(data, 0, len);  // data may be null when len is 0 (found by fuzz_bootstrap)
  return ok;
}

void sealRecord(const uint8_t key[kKeyBytes], uint64_t counter, const Piece* in, int nin, uint32_t len,
                uint8_t* out, bool flipBit) {
  std::memcpy(out, &len, kRecordHdrBytes);
  uint8_t* body = out + kRecordHdrBytes;
  gcmSeal(key, counter, out, kRecordHdrBytes, in, nin, body, body + len);
  if (len && flipBit) body[0] ^= 0x01;
}

bool openRecord(const uint8_t key[kKeyBytes], uint64_t counter, uint8_t* rec, size_t len) {
  uint8_t* body = rec + kRecordHdrBytes;
  return gcmOpen(key, counter, rec, kRecordHdrBytes, body, len, body + len);
}

namespace testing {
void corruptNextRecord() { gCorruptNext.store(true); }
bool takeCorruptRequest() { return gCorruptNext.load(std::memory_order_relaxed) && gCorruptNext.exchange(false); }
}  // namespace testing

}  // namespace gdr::security
