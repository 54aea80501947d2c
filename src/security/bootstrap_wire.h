// What the TCP bootstrap sends after a connection is authenticated, and the
// checks every received copy passes before use (pure functions, testable
// without sockets): the rendezvous hello and the address table.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/net.h"

namespace gdr::security {

constexpr uint32_t kRvMagic = 0x56524447;  // "GDRV" in memory
constexpr int32_t kMaxRanks = 1 << 20;

struct RvHello {
  uint32_t magic;
  uint16_t version;
  uint16_t reserved;
  int32_t rank;
  int32_t nranks;
  net::PackedAddr addr;
};
static_assert(sizeof(RvHello) == 40, "rendezvous hello layout");

// nullptr when well formed, else what is wrong.
const char* parseRvHello(const void* buf, size_t len, RvHello* out);
// An address that net::unpack accepts (IPv4 or IPv6, a port).
const char* checkPackedAddr(const net::PackedAddr& a);
// `len` bytes holding exactly `nranks` valid addresses.
const char* checkAddrTable(const void* buf, size_t len, int nranks);

}  // namespace gdr::security
