// AES-256-GCM records for one direction of a connection (OpenSSL EVP).
//
// A record on the wire is [u32 length][ciphertext of length bytes][16-byte tag].
// The length is the additional authenticated data; the 96-bit nonce is
// 4 zero bytes and a 64-bit counter that starts at 0 and goes up by one per
// record, so with a key per connection and direction no nonce is ever
// reused, and a dropped, repeated, reordered or altered record fails the tag.
#pragma once

#include <cstddef>
#include <cstdint>

#include "security/crypto.h"

typedef struct evp_cipher_ctx_st EVP_CIPHER_CTX;

namespace gdr::security {

constexpr size_t kRecordHdrBytes = 4;
constexpr size_t kTagBytes = 16;
constexpr size_t kMaxRecordBytes = 64 * 1024;  // plaintext bytes per record, at most

class RecordSealer {
 public:
  explicit RecordSealer(const uint8_t key[kKeyBytes]);
  ~RecordSealer();
  RecordSealer(const RecordSealer&) = delete;
  RecordSealer& operator=(const RecordSealer&) = delete;
  // A record of `len` plaintext bytes: begin writes the header to out[0..4),
  // each update encrypts the next piece, end writes the tag after them.
  void begin(uint8_t* out, uint32_t len);
  void update(const void* in, size_t n, uint8_t* out);
  void end(uint8_t tag[kTagBytes]);

 private:
  EVP_CIPHER_CTX* ctx_;
  uint64_t counter_ = 0;
};

class RecordOpener {
 public:
  explicit RecordOpener(const uint8_t key[kKeyBytes]);
  ~RecordOpener();
  RecordOpener(const RecordOpener&) = delete;
  RecordOpener& operator=(const RecordOpener&) = delete;
  // Decrypts `n` bytes in place and checks the tag; false (and the bytes
  // zeroed) if the record is not authentic.
  bool open(const uint8_t hdr[kRecordHdrBytes], uint8_t* data, size_t n, const uint8_t tag[kTagBytes]);

 private:
  EVP_CIPHER_CTX* ctx_;
  uint64_t counter_ = 0;
};

namespace testing {
// Flips one bit of the next record this process seals (after its tag is
// computed), so tests can see the receiver refuse it.
void corruptNextRecord();
}  // namespace testing

}  // namespace gdr::security
