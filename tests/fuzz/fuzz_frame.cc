// libFuzzer target: the socket transport's stream parser (frame headers,
// abort notices, encrypted record headers, the receive and receive-reduce
// paths) in transport/socket/socket_endpoint.* and record_pipe.*. The input
// arrives on a socket to an endpoint with one receive posted.
//   byte 0: mode: 0 plain frames; 1 raw bytes on an encrypted connection;
//           2 the rest sealed into valid records, so the frames inside are
//           parsed after decryption; 3 plain, no receive posted (checkPeer)
//   byte 1: the posted receive: bit 0 receive-reduce, bits 1-7 its size / 512
//   byte 2: high nibble: extra bytes of that size (odd sizes); low nibble
//           (mode 2): record size / 256 - 1
// The endpoint must deliver, or end with a clean error; never crash, and
// never complete a receive with bytes that did not come from the peer.
#include <cstring>
#include <vector>

#include "core/error.h"
#include "fuzz/fuzz_common.h"
#include "security/aead.h"
#include "transport/socket/socket_endpoint.h"

using namespace gdr;
using namespace gdr::transport;

namespace {

void sumBytes(void* dst, const void* a, const void* in, size_t n) {
  for (size_t i = 0; i < n; ++i)
    static_cast<uint8_t*>(dst)[i] =
        static_cast<uint8_t>(static_cast<const uint8_t*>(a)[i] + static_cast<const uint8_t*>(in)[i]);
}

security::SessionKeys fixedKeys() {
  security::SessionKeys k{};
  fuzz::pattern(k.recv, security::kKeyBytes, 3, 0);
  fuzz::pattern(k.send, security::kKeyBytes, 5, 1);
  return k;
}

// The plaintext stream cut into records of `chunk` bytes, sealed with the key
// the endpoint opens with, counters from 0.
std::vector<uint8_t> sealStream(const uint8_t* p, size_t n, size_t chunk, const uint8_t key[security::kKeyBytes]) {
  std::vector<uint8_t> out;
  uint64_t counter = 0;
  for (size_t off = 0; off < n; off += chunk) {
    size_t len = std::min(chunk, n - off);
    size_t at = out.size();
    out.resize(at + security::kRecordHdrBytes + len + security::kTagBytes);
    security::Piece piece{p + off, len};
    security::sealRecord(key, counter++, &piece, 1, static_cast<uint32_t>(len), out.data() + at);
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3 || size > 64 * 1024) return 0;
  uint8_t mode = data[0] % 4;
  bool reduce = data[1] & 1;
  size_t want = (data[1] >> 1) * 512 + (data[2] >> 4);
  const uint8_t* p = data + 3;
  size_t n = size - 3;
  static const security::SessionKeys keys = fixedKeys();
  std::vector<uint8_t> stream;
  if (mode == 2) stream = sealStream(p, n, 256 * (1 + (data[2] & 0xF)), keys.recv);
  else stream.assign(p, p + n);

  fuzz::FedSocket s(stream.data(), stream.size());
  bool encrypted = mode == 1 || mode == 2;
  sock::SocketEndpoint ep(s.release(), 0, 1, encrypted ? &keys : nullptr);
  std::vector<uint8_t> dst(want, 0), base(want, 1);
  RecvOp op;
  op.dst = dst.data();
  op.bytes = want;
  if (reduce) {
    op.fn = sumBytes;
    op.reduceSrc = base.data();
  }
  try {
    if (mode == 3) {
      for (int i = 0; i < 4; ++i) ep.checkPeer();
    } else {
      ep.postRecv(&op);
      for (int i = 0; i < 100000 && !op.complete; ++i) ep.progress();
    }
  } catch (const Error&) {
    return 0;  // refused cleanly
  }
  // Completed: the frame header said exactly `want` bytes and all arrived.
  if (op.complete && n < sizeof(sock::FrameHdr) + want) __builtin_trap();
  return 0;
}
