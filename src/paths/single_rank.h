// A communicator of one rank: every collective's result is its input (a sum,
// product, maximum, minimum or average of one value is that value), so a call
// is one copy, or nothing when it is in place. Host buffers are copied with
// memmove, device buffers with one cudaMemcpyAsync on the caller's stream:
// no kernel, no set-up, no device memory of the library's.
#pragma once

#include <cstddef>

#include "paths/host.h"

namespace gdr::paths {

struct SingleRankCopy {
  void* dst = nullptr;
  const void* src = nullptr;
  size_t bytes = 0;  // 0: nothing to do
};

// What `call` amounts to on a one-rank communicator.
SingleRankCopy singleRankCopy(const CollCall& call);

}  // namespace gdr::paths
