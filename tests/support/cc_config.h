// The congestion controller's configuration the cc tests share: the
// library's defaults written out, with a 2 MiB window and a 512 KiB fixed
// one, so a test's figures do not move when a default does.
#pragma once

#include "transport/ib/cc_window.h"

namespace gdr::transport::ib::test {

inline CcConfig ccTestConfig(CcMode m) {
  CcConfig c;
  c.mode = m;
  c.targetUs = 500;
  c.increaseBytes = 64 * 1024;
  c.decrease = 0.7;
  c.probeUs = 100000;
  c.minWindow = 128 * 1024;
  c.maxWindow = 2048 * 1024;
  c.fixedWindow = 512 * 1024;
  return c;
}

}  // namespace gdr::transport::ib::test
