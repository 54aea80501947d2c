// AES-256-GCM on the GPU, for device buffers sent between hosts: a chunk is
// sealed on the GPU before it leaves and opened on the GPU after it lands.
// Byte for byte the same as OpenSSL's EVP_aes_256_gcm (ciphertext and tag),
// so a chunk sealed here opens with the CPU AEAD (aead.h) and the other way
// round; recordNonce/recordHeader (gpu_aes_gcm_host.h) give its nonce and AAD.
//
// Chunk-oriented: each call seals or opens one chunk under its own 96-bit
// nonce; the caller never reuses a nonce under a key. Calls are enqueued on a
// stream and return at once (no host synchronisation inside).
//
// How the work spreads: every thread of a grid that fills the GPU takes every
// P-th 16-byte block, runs AES-CTR on it (T-table in shared memory, one copy
// per bank) and folds the ciphertext into its own GHASH accumulator by Horner
// with H^P; per-key tables of powers of H put the accumulators together, the
// blocks of the grid into per-block partial hashes, and the last block to
// finish adds those up into the tag.
//
// Open verifies before it decrypts: a first kernel hashes the ciphertext and
// compares the tag (status word kGcmAuthentic or kGcmForged); a second one,
// queued behind it, decrypts only when the status says authentic and
// otherwise writes zeros to `out`. So when the tag fails, no plaintext is
// ever written, the output holds zeros, and the status says why.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "security/crypto.h"
#include "security/gpu_aes_gcm_host.h"

namespace gdr::security {

constexpr uint32_t kGcmPending = 0;     // never written by a finished open
constexpr uint32_t kGcmAuthentic = 1;   // tag matched; `out` holds the plaintext
constexpr uint32_t kGcmForged = 2;      // tag did not match; `out` holds zeros

// One key's material on one device: round keys and H on the host, the tables
// of powers of H on the device. Made once per key (synchronous: set-up time;
// the tables are on the device when the constructor returns, so any stream,
// non-blocking ones included, may use the key at once); immutable after, so
// any number of streams may use it at once. The destructor waits for the
// device, then clears the tables.
class GpuGcmKey {
 public:
  explicit GpuGcmKey(const uint8_t key[kKeyBytes]);  // on the current device
  ~GpuGcmKey();
  GpuGcmKey(const GpuGcmKey&) = delete;
  GpuGcmKey& operator=(const GpuGcmKey&) = delete;

  const gcm::HostKey& host() const { return host_; }
  const gcm::Tables* tables() const { return tables_; }
  int device() const { return device_; }
  // Most blocks of 256 threads a launch of `mode` uses (all resident at once).
  int gridCap(gcm::Mode mode) const { return caps_[static_cast<int>(mode)]; }

 private:
  gcm::HostKey host_;
  gcm::Tables* tables_ = nullptr;
  int device_ = 0;
  int caps_[3] = {1, 1, 1};
};

// Device scratch of one call in flight: per-block partial hashes, the
// arrival counter and the status of the last open. Calls that share one must
// be ordered (one stream); give each concurrent stream its own. Zeroed on the
// device when the constructor returns.
class GpuGcmScratch {
 public:
  GpuGcmScratch();  // on the current device
  ~GpuGcmScratch();
  GpuGcmScratch(const GpuGcmScratch&) = delete;
  GpuGcmScratch& operator=(const GpuGcmScratch&) = delete;

  struct Device;
  Device* device() { return dev_; }
  // Device address of the status word of the last open on this scratch.
  const uint32_t* status() const;

 private:
  Device* dev_ = nullptr;
};

// Seals `len` bytes at `in` into `out` (both device memory; may be the same
// buffer; any alignment, 16-byte aligned is the fast path) and writes the
// 16-byte tag to `tag` (device or host-mapped memory). `aad` (host memory,
// at most 64 bytes) is authenticated, not encrypted. Throws InvalidArgument
// for bad arguments; returns the CUDA error of the launch.
cudaError_t gpuAesGcmSeal(const GpuGcmKey& key, const uint8_t iv[gcm::kIvBytes], const void* aad,
                          size_t aadLen, const void* in, void* out, size_t len, uint8_t* tag,
                          GpuGcmScratch& scratch, cudaStream_t stream);

// Opens what gpuAesGcmSeal made: checks `tag` (device or host-mapped) over
// the ciphertext `in` and the AAD, then writes the plaintext to `out`, or
// zeros if the tag does not match. The result goes to scratch.status() and,
// if `status` is not null, to *status (device or host-mapped memory) once the
// check is done: kGcmAuthentic or kGcmForged.
cudaError_t gpuAesGcmOpen(const GpuGcmKey& key, const uint8_t iv[gcm::kIvBytes], const void* aad,
                          size_t aadLen, const void* in, void* out, size_t len, const uint8_t* tag,
                          GpuGcmScratch& scratch, uint32_t* status, cudaStream_t stream);

}  // namespace gdr::security
