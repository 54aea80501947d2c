// What the GPU AES-256-GCM is checked against: OpenSSL's EVP_aes_256_gcm on
// the same key, nonce, AAD and data, and the AES-256 test cases (13 to 16) of
// the GCM specification (McGrew and Viega), also used by NIST's GCM test
// vectors. Shared by the host unit test (gdr-unit) and the GPU test.
#pragma once

#include <openssl/evp.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace gcmref {

using Bytes = std::vector<uint8_t>;

inline Bytes hex(const std::string& s) {
  Bytes out(s.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(std::stoul(s.substr(2 * i, 2), nullptr, 16));
  return out;
}

struct Vector {
  const char* name;
  const char *key, *iv, *pt, *aad, *ct, *tag;
};

inline const std::vector<Vector>& specVectors() {
  static const std::vector<Vector> v = {
      {"TC13 empty", "0000000000000000000000000000000000000000000000000000000000000000", "000000000000000000000000",
       "", "", "", "530f8afbc74536b9a963b4f1c4cb738b"},
      {"TC14 one zero block", "0000000000000000000000000000000000000000000000000000000000000000",
       "000000000000000000000000", "00000000000000000000000000000000", "", "cea7403d4d606b6e074ec5d3baf39d18",
       "d0d1c8a799996bf0265b98b5d48ab919"},
      {"TC15 four blocks", "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
       "cafebabefacedbaddecaf888",
       "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525"
       "b16aedf5aa0de657ba637b391aafd255",
       "",
       "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838"
       "c5f61e6393ba7a0abcc9f662898015ad",
       "b094dac5d93471bdec1a502270e3cc6c"},
      {"TC16 60 bytes with AAD", "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
       "cafebabefacedbaddecaf888",
       "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525"
       "b16aedf5aa0de657ba637b39",
       "feedfacedeadbeeffeedfacedeadbeefabaddad2",
       "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838"
       "c5f61e6393ba7a0abcc9f662",
       "76fc6ece0f4e1768cddf8853bb2d551b"},
  };
  return v;
}

// OpenSSL's AES-256-GCM seal: ciphertext into out (len bytes), tag into tag.
inline void opensslSeal(const uint8_t key[32], const uint8_t iv[12], const uint8_t* aad, size_t aadLen,
                        const uint8_t* in, size_t len, uint8_t* out, uint8_t tag[16]) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int n = 0;
  bool ok = ctx && EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr, key, iv) == 1 &&
            (aadLen == 0 || EVP_EncryptUpdate(ctx, nullptr, &n, aad, static_cast<int>(aadLen)) == 1);
  for (size_t off = 0; ok && off < len;) {  // EVP takes int lengths
    size_t step = std::min<size_t>(len - off, size_t{1} << 30);
    ok = EVP_EncryptUpdate(ctx, out + off, &n, in + off, static_cast<int>(step)) == 1;
    off += step;
  }
  uint8_t none[16];
  ok = ok && EVP_EncryptFinal_ex(ctx, none, &n) == 1 &&
       EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag) == 1;
  EVP_CIPHER_CTX_free(ctx);
  if (!ok) throw std::runtime_error("OpenSSL AES-256-GCM seal failed");
}

// OpenSSL's AES-256-GCM open: plaintext into out (len bytes); false if the
// tag does not match.
inline bool opensslOpen(const uint8_t key[32], const uint8_t iv[12], const uint8_t* aad, size_t aadLen,
                        const uint8_t* in, size_t len, const uint8_t tag[16], uint8_t* out) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int n = 0;
  bool ok = ctx && EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr, key, iv) == 1 &&
            (aadLen == 0 || EVP_DecryptUpdate(ctx, nullptr, &n, aad, static_cast<int>(aadLen)) == 1);
  for (size_t off = 0; ok && off < len;) {
    size_t step = std::min<size_t>(len - off, size_t{1} << 30);
    ok = EVP_DecryptUpdate(ctx, out + off, &n, in + off, static_cast<int>(step)) == 1;
    off += step;
  }
  uint8_t expected[16], none[16];
  std::copy(tag, tag + 16, expected);
  ok = ok && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, expected) == 1 &&
       EVP_DecryptFinal_ex(ctx, none, &n) == 1;
  EVP_CIPHER_CTX_free(ctx);
  return ok;
}

}  // namespace gcmref
