#include "security/crypto.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>

#include <memory>

#include "core/error.h"

namespace gdr::security {

namespace {
[[noreturn]] void fail(const char* what) {
  char text[256] = "unknown error";
  unsigned long e = ERR_get_error();
  if (e) ERR_error_string_n(e, text, sizeof(text));
  throw InternalError(strprintf("OpenSSL %s failed: %s", what, text));
}
}  // namespace

void randomBytes(void* out, size_t n) {
  if (RAND_bytes(static_cast<unsigned char*>(out), static_cast<int>(n)) != 1) fail("RAND_bytes");
}

void sha256(const void* data, size_t len, uint8_t out[32]) {
  unsigned int outLen = 0;
  if (EVP_Digest(data, len, out, &outLen, EVP_sha256(), nullptr) != 1 || outLen != 32) fail("SHA-256");
}

void hmacSha256(const uint8_t key[kKeyBytes], const void* data, size_t len, uint8_t out[kMacBytes]) {
  unsigned int outLen = 0;
  if (!HMAC(EVP_sha256(), key, kKeyBytes, static_cast<const unsigned char*>(data), len, out, &outLen) ||
      outLen != kMacBytes)
    fail("HMAC-SHA-256");
}

void hkdfSha256(const uint8_t* ikm, size_t ikmLen, const uint8_t* salt, size_t saltLen, const void* info,
                size_t infoLen, uint8_t* out, size_t outLen) {
  std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nullptr),
                                                                  EVP_PKEY_CTX_free);
  size_t got = outLen;
  if (!ctx || EVP_PKEY_derive_init(ctx.get()) <= 0 || EVP_PKEY_CTX_set_hkdf_md(ctx.get(), EVP_sha256()) <= 0 ||
      EVP_PKEY_CTX_set1_hkdf_salt(ctx.get(), salt, static_cast<int>(saltLen)) <= 0 ||
      EVP_PKEY_CTX_set1_hkdf_key(ctx.get(), ikm, static_cast<int>(ikmLen)) <= 0 ||
      EVP_PKEY_CTX_add1_hkdf_info(ctx.get(), static_cast<const unsigned char*>(info), static_cast<int>(infoLen)) <=
          0 ||
      EVP_PKEY_derive(ctx.get(), out, &got) <= 0 || got != outLen)
    fail("HKDF-SHA-256");
}

bool equalConstTime(const void* a, const void* b, size_t n) { return CRYPTO_memcmp(a, b, n) == 0; }

void wipe(void* p, size_t n) { OPENSSL_cleanse(p, n); }

}  // namespace gdr::security
