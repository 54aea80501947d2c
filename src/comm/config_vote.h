// Before the set-up exchange every rank says whether its configuration
// parsed, and which settings its schedules depend on (GDR_ALGO,
// GDR_CHUNK_BYTES, GDR_CHECK_MISMATCH, and GDR_TUNING_FILE by its content). One bootstrap allgather
// settles it: a rank whose configuration failed, or settings that differ across ranks, fail the
// init on every rank with the same reason, instead of leaving the others waiting in the exchange
// (an MPI bootstrap has no deadline there) or running different schedules for one call.
#pragma once

#include <cstdint>
#include <string>

#include "bootstrap/bootstrap.h"
#include "gdrcoll.h"

namespace gdr {

struct ConfigVote {
  int32_t failed = 0;  // gdrResult_t of the local parse failure, 0 when it parsed
  int32_t checkMismatch = 0;
  int64_t chunkBytes = 0;
  uint64_t algoHash = 0;  // of the whole GDR_ALGO value
  char algo[96] = {};     // its start, for the message
  uint64_t tuningHash = 0;  // of GDR_TUNING_FILE's content (of "" without one)
  char tuning[96] = {};     // its path's start, for the message
  char error[160] = {};   // the parse failure's text (truncated)
};

ConfigVote makeConfigVote(gdrResult_t failed, const std::string& error, int checkMismatch,
                          int64_t chunkBytes, const std::string& algo,
                          const std::string& tuningFile, uint64_t tuningHash);
// A hash of the file's content (of "" for an empty path); throws
// InvalidArgument if the file cannot be read.
uint64_t tuningFileHash(const std::string& path);
// Throws on every rank when any vote failed or the votes differ; the failed
// rank rethrows its own error text.
void agreeOnConfig(boot::Bootstrap& boot, const ConfigVote& mine);

}  // namespace gdr
