#include "security/channel_keys.h"

#include <cstring>

namespace gdr::security {

SessionKeys deriveChannelKeys(const SessionKeys& c, const char* label) {
  SessionKeys k;
  const size_t n = std::strlen(label);
  const uint8_t salt[kKeyBytes] = {};  // RFC 5869's default: the keys are uniform already
  hkdfSha256(c.send, kKeyBytes, salt, sizeof(salt), label, n, k.send, kKeyBytes);
  hkdfSha256(c.recv, kKeyBytes, salt, sizeof(salt), label, n, k.recv, kKeyBytes);
  return k;
}

ChannelKeyTable::~ChannelKeyTable() {
  if (!keys_.empty()) wipe(keys_.data(), keys_.size() * sizeof(SessionKeys));
}

void ChannelKeyTable::derive(int rank, const SessionKeys& connection, const char* label) {
  if (static_cast<size_t>(rank) >= keys_.size()) {
    // Grow without leaving copies of keys in the old buffer.
    std::vector<SessionKeys> bigger(static_cast<size_t>(rank) + 1);
    if (!keys_.empty()) {
      std::memcpy(bigger.data(), keys_.data(), keys_.size() * sizeof(SessionKeys));
      wipe(keys_.data(), keys_.size() * sizeof(SessionKeys));
    }
    keys_.swap(bigger);
    have_.resize(keys_.size(), false);
  }
  keys_[rank] = deriveChannelKeys(connection, label);
  have_[rank] = true;
}

const SessionKeys* ChannelKeyTable::get(int rank) const {
  return rank >= 0 && static_cast<size_t>(rank) < have_.size() && have_[rank] ? &keys_[rank]
                                                                              : nullptr;
}

}  // namespace gdr::security
