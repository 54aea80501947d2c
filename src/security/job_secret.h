// The job secret: 32 random bytes every rank of a job holds and nobody else
// does, plus a public job id. It reaches ranks out of band (inside the unique
// id the user hands to every rank, through MPI, or from GDR_AUTH_KEY_FILE) and
// never crosses a gdrcoll socket; connections prove knowledge of it with an
// HMAC challenge-response (security/handshake.h).
#pragma once

#include <cstdint>

#include "security/crypto.h"

namespace gdr::security {

struct JobSecret {
  uint8_t key[kKeyBytes];
  uint8_t jobId[kJobIdBytes];
};

// A fresh random key and job id.
JobSecret generateJobSecret();

// GDR_AUTH_KEY_FILE: if set, fills `key` with SHA-256 of the file's contents
// and returns true. The file must hold at least 16 bytes and must not be
// readable by group or others.
bool keyFromFile(uint8_t key[kKeyBytes]);

}  // namespace gdr::security
