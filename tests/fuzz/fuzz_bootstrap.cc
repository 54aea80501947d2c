// libFuzzer target: the TCP bootstrap's messages (security/bootstrap_wire.h,
// security/boot_link.h). Mode byte: 0 the rendezvous hello, 1 the address
// table, 2 the envelope header, 3/4 whole envelopes opened by a link (plain,
// encrypted) from raw bytes, 5 an oracle: the input sealed by one end must
// open to the same bytes at the other, and any single altered byte must be
// refused without touching the output.
#include <cstring>
#include <vector>

#include "core/error.h"
#include "fuzz/fuzz_common.h"
#include "security/boot_link.h"
#include "security/bootstrap_wire.h"

using namespace gdr;
using namespace gdr::security;

namespace {
void pair(bool encrypt, BootLink* a, BootLink* b) {
  SessionKeys ka{}, kb{};
  fuzz::pattern(ka.send, kKeyBytes, 1, 1);
  fuzz::pattern(ka.recv, kKeyBytes, 255, 200);
  std::memcpy(kb.recv, ka.send, kKeyBytes);
  std::memcpy(kb.send, ka.recv, kKeyBytes);
  *a = BootLink(ka, encrypt, "rank 0");
  *b = BootLink(kb, encrypt, "rank 1");
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2 || size > fuzz::kMaxInput) return 0;
  uint8_t mode = data[0] % 6;
  const uint8_t* p = data + 1;
  size_t n = size - 1;
  switch (mode) {
    case 0: {
      RvHello h;
      if (!parseRvHello(p, n, &h) && (h.rank < 0 || h.rank >= h.nranks || n != sizeof(h))) __builtin_trap();
      break;
    }
    case 1:
      checkAddrTable(p, n, static_cast<int>(p[0]) + 1);
      checkAddrTable(p, n, static_cast<int>(n / sizeof(net::PackedAddr)));
      break;
    case 2: {
      BootMsgHdr h;
      size_t expect = p[0] * 13u;
      if (!parseBootMsgHdr(p, n, p[0] & 1, expect, &h) && h.len != expect) __builtin_trap();
      break;
    }
    case 3:
    case 4: {
      BootLink a, b;
      pair(mode == 4, &a, &b);
      size_t len = n > b.wireBytes(0) ? n - b.wireBytes(0) : 0;
      std::vector<uint8_t> out(len + 1, 0x5A);
      try {
        b.open(p, n, out.data(), len);
        __builtin_trap();  // forged without the key
      } catch (const Error&) {
        for (uint8_t c : out)
          if (c != 0x5A) __builtin_trap();  // a refused message wrote to the caller
      }
      break;
    }
    case 5: {
      bool encrypt = p[0] & 1;
      BootLink a, b;
      pair(encrypt, &a, &b);
      std::vector<uint8_t> wire(a.wireBytes(n));
      a.seal(p, n, wire.data());
      std::vector<uint8_t> copy = wire;
      size_t at = (p[0] * 2654435761u) % wire.size();
      copy[at] ^= static_cast<uint8_t>(1u << (p[n - 1] % 8));
      std::vector<uint8_t> out(n, 0xA5);
      try {
        b.open(copy.data(), copy.size(), out.data(), n);
        __builtin_trap();  // an altered byte was accepted
      } catch (const Error&) {
      }
      for (uint8_t c : out)
        if (c != 0xA5) __builtin_trap();
      BootLink a2, b2;
      pair(encrypt, &a2, &b2);
      a2.seal(p, n, wire.data());
      b2.open(wire.data(), wire.size(), out.data(), n);
      if (std::memcmp(out.data(), p, n) != 0) __builtin_trap();
      break;
    }
  }
  return 0;
}
