// AES-256-GCM (OpenSSL EVP) for one direction of a connection.
//
// Callers pass the nonce as a 64-bit counter: the 96-bit nonce is 4 zero
// bytes and the counter, so with a key per connection and direction and a
// counter that only goes up, no nonce is ever reused. The functions keep no
// state between calls (a cipher context per thread), so records of one
// stream can be sealed or opened by several threads at once, each with the
// counter it was given in stream order.
//
// A socket record on the wire is [u32 length][ciphertext of length bytes][16-byte tag];
// the length is the additional authenticated data, so a dropped, repeated,
// reordered or altered record fails the tag.
#pragma once

#include <cstddef>
#include <cstdint>

#include "security/crypto.h"

namespace gdr::security {

constexpr size_t kRecordHdrBytes = 4;
constexpr size_t kTagBytes = 16;
constexpr size_t kMaxRecordBytes = 64 * 1024;  // plaintext bytes per record, at most

// A piece of plaintext: records may gather from several (frame header, payload).
struct Piece {
  const void* data;
  size_t bytes;
};

// Encrypts the pieces (in order) into `out` and writes the tag.
void gcmSeal(const uint8_t key[kKeyBytes], uint64_t counter, const void* aad, size_t aadLen, const Piece* in,
             int nin, uint8_t* out, uint8_t tag[kTagBytes]);
// Decrypts `n` bytes in place and checks the tag; false (and the bytes
// zeroed) if they are not authentic.
bool gcmOpen(const uint8_t key[kKeyBytes], uint64_t counter, const void* aad, size_t aadLen, uint8_t* data,
             size_t n, const uint8_t tag[kTagBytes]);

// A whole socket record of `len` plaintext bytes gathered from `in` into
// out[0 .. kRecordHdrBytes + len + kTagBytes). `flipBit` (tests only, see
// below) alters one ciphertext bit after the tag is computed.
void sealRecord(const uint8_t key[kKeyBytes], uint64_t counter, const Piece* in, int nin, uint32_t len,
                uint8_t* out, bool flipBit = false);
// Opens a whole record (header, `len` bytes of ciphertext, tag) in place:
// the plaintext is at rec + kRecordHdrBytes.
bool openRecord(const uint8_t key[kKeyBytes], uint64_t counter, uint8_t* rec, size_t len);

// The next counter of a direction; throws before it would wrap.
uint64_t takeCounter(uint64_t& next);

namespace testing {
// Flips one bit of the next socket record this process hands out to be
// sealed (in stream order, after its tag is computed), so tests can see the
// receiver refuse it.
void corruptNextRecord();
// Whether the record being handed out now is that one (clears the request).
bool takeCorruptRequest();
}  // namespace testing

}  // namespace gdr::security
