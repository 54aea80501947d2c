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

EVP_CIPHER_CTX* newCtx(const uint8_t key[kKeyBytes], bool encrypt) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  if (!ctx) throw InternalError("OpenSSL: EVP_CIPHER_CTX_new failed");
  int ok = encrypt ? EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr, key, nullptr)
                   : EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr, key, nullptr);
  if (ok != 1) {
    EVP_CIPHER_CTX_free(ctx);
    throw InternalError("OpenSSL: AES-256-GCM initialisation failed");
  }
  return ctx;
}

uint64_t nextCounter(uint64_t& c) {
  if (c == UINT64_MAX) throw InternalError("AES-GCM record counter exhausted");
  return c++;
}

}  // namespace

RecordSealer::RecordSealer(const uint8_t key[kKeyBytes]) : ctx_(newCtx(key, true)) {}
RecordSealer::~RecordSealer() { EVP_CIPHER_CTX_free(ctx_); }

void RecordSealer::begin(uint8_t* out, uint32_t len) {
  std::memcpy(out, &len, kRecordHdrBytes);
  uint8_t iv[12];
  makeIv(nextCounter(counter_), iv);
  int n = 0;
  if (EVP_EncryptInit_ex(ctx_, nullptr, nullptr, nullptr, iv) != 1 ||
      EVP_EncryptUpdate(ctx_, nullptr, &n, out, kRecordHdrBytes) != 1)
    throw InternalError("OpenSSL: AES-GCM record start failed");
}

void RecordSealer::update(const void* in, size_t len, uint8_t* out) {
  int n = 0;
  if (EVP_EncryptUpdate(ctx_, out, &n, static_cast<const uint8_t*>(in), static_cast<int>(len)) != 1 ||
      static_cast<size_t>(n) != len)
    throw InternalError("OpenSSL: AES-GCM encryption failed");
  if (len && gCorruptNext.load(std::memory_order_relaxed) && gCorruptNext.exchange(false)) out[0] ^= 0x01;
}

void RecordSealer::end(uint8_t tag[kTagBytes]) {
  int n = 0;
  uint8_t none[16];
  if (EVP_EncryptFinal_ex(ctx_, none, &n) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_GCM_GET_TAG, kTagBytes, tag) != 1)
    throw InternalError("OpenSSL: AES-GCM record end failed");
}

RecordOpener::RecordOpener(const uint8_t key[kKeyBytes]) : ctx_(newCtx(key, false)) {}
RecordOpener::~RecordOpener() { EVP_CIPHER_CTX_free(ctx_); }

bool RecordOpener::open(const uint8_t hdr[kRecordHdrBytes], uint8_t* data, size_t len,
                        const uint8_t tag[kTagBytes]) {
  uint8_t iv[12];
  makeIv(nextCounter(counter_), iv);
  int n = 0;
  uint8_t tagCopy[kTagBytes];
  std::memcpy(tagCopy, tag, kTagBytes);
  bool ok = EVP_DecryptInit_ex(ctx_, nullptr, nullptr, nullptr, iv) == 1 &&
            EVP_DecryptUpdate(ctx_, nullptr, &n, hdr, kRecordHdrBytes) == 1 &&
            EVP_DecryptUpdate(ctx_, data, &n, data, static_cast<int>(len)) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_GCM_SET_TAG, kTagBytes, tagCopy) == 1;
  uint8_t none[16];
  ok = ok && EVP_DecryptFinal_ex(ctx_, none, &n) == 1;
  if (!ok) std::memset(data, 0, len);
  return ok;
}

namespace testing {
void corruptNextRecord() { gCorruptNext.store(true); }
}  // namespace testing

}  // namespace gdr::security
