// Shared by the verbs tests over the software NIC's two devices: a patterned
// message (a send and the receive of it into a zeroed buffer), and the
// devices softnic0 and softnic1 opened as GDR_IB_HCA would name them.
#pragma once
#if GDR_HAVE_IB
#include <cstdlib>
#include <memory>
#include <vector>

#include "transport/ib/ib_device.h"
#include "transport/transport.h"

namespace gdr::transport::ib::testing {

inline std::vector<char> pattern(size_t n, int seed) {
  std::vector<char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<char>((i * 131 + seed * 7 + (i >> 12)) & 0xff);
  return v;
}

struct Msg {
  std::vector<char> src, dst;
  SendOp s;
  RecvOp r;
  Msg(size_t n, int seed) : src(pattern(n, seed)), dst(n, 0) {
    s.data = src.data();
    s.bytes = r.bytes = n;
    s.sig.kind = r.sig.kind = kP2PKind;
    s.sig.count = r.sig.count = n;
    s.sig.seq = r.sig.seq = static_cast<uint64_t>(seed);
    r.dst = dst.data();
  }
};

inline std::vector<std::shared_ptr<IbDevice>> openTwoSoftnics() {
  setenv("GDR_IB_PROVIDER", "softnic", 1);
  setenv("GDR_SOFTNIC_DEVICES", "2", 1);
  setenv("GDR_IB_HCA", "softnic0,softnic1", 1);
  auto devs = IbDevice::openAll();
  unsetenv("GDR_IB_HCA");
  unsetenv("GDR_SOFTNIC_DEVICES");
  unsetenv("GDR_IB_PROVIDER");
  return devs;
}

}  // namespace gdr::transport::ib::testing
#endif
