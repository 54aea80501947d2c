// libFuzzer target: the connection handshake (security/handshake*). The first
// byte picks what the input is: raw bytes for the three parsers, or the peer's
// side of a live handshake fed over a socket to an acceptor (M1 then M3) or
// to an initiator (M2). Every path must end in acceptance or a clean
// refusal: a crash, a sanitizer report or a hang is a bug.
#include <cstring>

#include "core/error.h"
#include "fuzz/fuzz_common.h"
#include "security/handshake.h"
#include "security/handshake_wire.h"

using namespace gdr;
using namespace gdr::security;

namespace {
JobSecret fixedSecret() {
  JobSecret s{};
  fuzz::pattern(s.key, kKeyBytes, 7, 1);
  fuzz::pattern(s.jobId, kJobIdBytes, 1, 0);
  return s;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > fuzz::kMaxInput) return 0;
  uint8_t mode = data[0] % 4;
  const uint8_t* p = data + 1;
  size_t n = size - 1;
  static const JobSecret secret = fixedSecret();
  auto deadline = net::Clock::now() + std::chrono::seconds(2);
  switch (mode) {
    case 0: {
      HsHello a;
      HsReply b;
      HsFinish c;
      if (!parseHsHello(p, n, &a) && (a.magic != kHsMagic || n != sizeof(a))) __builtin_trap();
      if (!parseHsReply(p, n, &b) && (b.magic != kHsMagic || n != sizeof(b))) __builtin_trap();
      if (!parseHsFinish(p, n, &c) && (c.magic != kHsMagic || n != sizeof(c))) __builtin_trap();
      break;
    }
    case 1:
    case 2: {  // a live acceptor (any channel/encryption it is set up for)
      fuzz::FedSocket s(p, n);
      try {
        Acceptor acc(secret, mode == 1 ? Channel::Socket : Channel::BootRing, 2, mode == 2);
        if (mode == 2) acc.followPeerEncryptFlag();
        acc.start(s.fd[0], [](int r) -> const char* { return r == 1 ? nullptr : "not admitted"; });
        acc.finish(s.fd[0]);
        __builtin_trap();  // a MAC over a fresh nonce cannot be guessed
      } catch (const Error&) {
      }
      break;
    }
    case 3: {  // a live initiator reading the acceptor's reply
      fuzz::FedSocket s(p, n);
      try {
        Initiator ini(secret, Channel::Socket, 1, 2, false);
        ini.start(s.fd[0], deadline, "fuzz");
        ini.finish(s.fd[0], deadline, "fuzz");
        __builtin_trap();
      } catch (const Error&) {
      }
      break;
    }
  }
  return 0;
}
