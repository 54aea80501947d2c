// What a device path writes for the status board (comm/device_ops.h): host
// memory that the GPU (host-mapped, system-scope atomics) or a progress
// thread writes and any host thread reads. Plain words, so a kernel, a
// progress thread and a report share one layout.
#pragma once

#include <cstdint>

namespace gdr {

// Peers whose waits a path can count (cuda_ipc: its local ranks; a path
// with more peers counts those below this).
constexpr int kDeviceWaitPeers = 64;
// A wait for a peer that lasts this long is counted (shorter ones are the
// normal course of a barrier and cost nothing).
constexpr unsigned long long kDeviceSlowWaitNs = 1000000;

struct DeviceWords {
  // The path's operations completed so far, in the order they were
  // launched (a fused kernel's last block, or the progress thread when a
  // job ends, adds one).
  uint32_t done;
  // The staged path: 1 + the segment whose device-to-host copy its progress
  // thread waits for on the caller's stream; 0 while it does not.
  uint32_t stage;
  // Per peer: waits for that peer now lasting over kDeviceSlowWaitNs
  // (a kernel's blocks each count one).
  uint32_t waiting[kDeviceWaitPeers];
};

}  // namespace gdr
