// The GPUDirect path for device buffers between hosts: taken when every
// peer is reached over verbs whose endpoint takes device memory (GPUDirect
// by dma-buf or nvidia-peermem, or the software NIC; see choose.cc), else
// the staged path stays. No host copies of the data: the NIC reads the
// GPU source and writes into the GPU destination (rendezvous messages), or
// into a device scratch a reduction kernel then combines (plan.h).
//
// Ordering with the caller's stream (GDR_DIRECT_ORDER; order.h says which
// one `auto`, the default, takes and why). Stream-flags order: per phase
// the stream writes the phase's start word (host-mapped,
// cuStreamWriteValue32: "inputs ready") and then waits for its done word;
// the progress thread sees the start word, runs the network part (posts the
// messages over the endpoints, waits for their completions, applies the
// flush rule) and writes the done word; the stream then runs the phase's
// kernels; the call returns at once. The stream waits by
// cuStreamWaitValue32 (GDR_DIRECT_WAIT=stream, the default) or a one-thread
// kernel polling the word (=kernel, device/device_wait.h). It needs every
// kernel of the process loaded before a wait is pending (order.h), so
// `auto` takes it only under CUDA_MODULE_LOADING=EAGER. Host order: per
// phase the call waits for its stream, hands the network part to the
// progress thread and waits for it, then queues the phase's kernels.
// A failed operation fails the communicator with an error naming the peer;
// in flags mode the done word is still written (the engine's rule), so the
// stream never waits forever; the next call returns the error.
// CUDA-graph capture is refused with NotSupported (the start/done words are
// per call, not per replay). Operations of one communicator run one at a
// time in call order, across streams too (they share the scratch).
#pragma once

#include <cstdint>
#include <vector>

#include "comm/comm.h"
#include "core/call.h"
#include "paths/direct/plan.h"

namespace gdr::paths::direct {

// Whether device buffers of `comm` take this path; decided at the first
// device operation (each rank's answer goes to every peer over the host
// path, so every rank decides alike) and logged once (subsystem NET).
bool chosen(Communicator& comm);
// `stream` is a cudaStream_t. The buffers are device memory.
void runCollective(Communicator& comm, const CollCall& call, void* stream);
// A batch of device sends/receives of one communicator, on one stream.
void runP2P(Communicator& comm, const std::vector<P2PCall>& reqs);
// Blocks (deadline: GDR_TIMEOUT_MS) until the operations queued so far ran.
void waitIdle(Communicator& comm);
// Operations this process ran on the path, and those of them queued in
// stream-flags order (tests).
uint64_t opsRun();
uint64_t flagsOpsQueued();

}  // namespace gdr::paths::direct
