// The staged path for device buffers (ranks on other hosts, or forced with
// GDR_TRANSPORT=socket): stream-ordered and pipelined through the
// communicator's progress thread (src/progress, DESIGN.md "Device operations
// over the network").
//
// On the caller's stream an operation is two stream memory operations on
// host-mapped words: a start marker (cuStreamWriteValue32) and a wait for the
// done word (cuStreamWaitValue32). The call returns at once. The progress
// thread sees the marker, copies segments to pinned host buffers on an
// internal stream, runs the host collective segment by segment (copies of the
// next segments and results of the previous ones overlap it), copies results
// back, and sets the done word. Under CUDA-graph capture the operation is
// pushed by a captured host function at each replay instead of at call time.
// With GDR_ENCRYPT=1 and peers on other hosts, data-movement operations are
// sealed and opened on the GPU (paths/staged/seal.h); staged operations of
// one communicator run one after the other even from different streams
// (they share the pinned slots).
#pragma once

#include <vector>

#include "comm/comm.h"
#include "paths/host.h"
#include "paths/staged/plan.h"

namespace gdr::paths::staged {

// `stream` is a cudaStream_t.
void runCollective(Communicator& comm, const CollCall& call, void* stream);
// A batch of device sends/receives of one communicator, on one stream.
void runP2P(Communicator& comm, std::vector<P2PItem> items, void* stream);
// Blocks (deadline: GDR_TIMEOUT_MS) until the staged operations queued so
// far have run: host operations on the communicator must come after them.
void waitIdle(Communicator& comm);

}  // namespace gdr::paths::staged
