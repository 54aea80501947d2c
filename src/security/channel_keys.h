// Keys for a second channel of an authenticated connection: the verbs QPs a
// TCP connection is upgraded to (transport/ib) get their own key per
// direction, derived from that connection's session keys, so neither channel
// ever uses the other's (key, nonce) pairs although both count from 0.
//
// Each direction is derived from the same direction's key with a label
// (HKDF-SHA-256, label as info), so one side's derived send key is the
// other side's derived receive key.
#pragma once

#include <vector>

#include "security/handshake.h"

namespace gdr::security {

constexpr char kIbKeyLabel[] = "gdrcoll ib v1";

SessionKeys deriveChannelKeys(const SessionKeys& connection, const char* label);

// Derived keys of every peer of this rank, by rank; wiped when destroyed.
class ChannelKeyTable {
 public:
  ChannelKeyTable() = default;
  ~ChannelKeyTable();
  ChannelKeyTable(const ChannelKeyTable&) = delete;
  ChannelKeyTable& operator=(const ChannelKeyTable&) = delete;
  void derive(int rank, const SessionKeys& connection, const char* label);
  // Null where no keys were derived (no encryption to that rank).
  const SessionKeys* get(int rank) const;

 private:
  std::vector<SessionKeys> keys_;
  std::vector<bool> have_;
};

}  // namespace gdr::security
