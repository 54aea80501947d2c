// Thin wrappers over OpenSSL's libcrypto: random bytes, SHA-256, HMAC-SHA-256,
// HKDF-SHA-256 and a constant-time compare. Everything else in src/security
// calls these, so the OpenSSL surface stays in one file.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gdr::security {

constexpr size_t kKeyBytes = 32;    // job secret, derived keys
constexpr size_t kMacBytes = 32;    // HMAC-SHA-256
constexpr size_t kJobIdBytes = 16;  // public job identifier bound into every handshake

// Cryptographically strong random bytes (RAND_bytes); throws on failure.
void randomBytes(void* out, size_t n);
void sha256(const void* data, size_t len, uint8_t out[32]);
void hmacSha256(const uint8_t key[kKeyBytes], const void* data, size_t len, uint8_t out[kMacBytes]);
// RFC 5869 extract-and-expand.
void hkdfSha256(const uint8_t* ikm, size_t ikmLen, const uint8_t* salt, size_t saltLen, const void* info,
                size_t infoLen, uint8_t* out, size_t outLen);
bool equalConstTime(const void* a, const void* b, size_t n);
// Overwrites key material in a way the compiler keeps.
void wipe(void* p, size_t n);

}  // namespace gdr::security
