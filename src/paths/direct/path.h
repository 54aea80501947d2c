// The GPUDirect path for device buffers between hosts: taken when every
// peer is reached over verbs whose endpoint takes device memory (GPUDirect
// by dma-buf or nvidia-peermem, or the software NIC; see choose.cc), else
// the staged path stays. No host copies of the data: the NIC reads the
// GPU source and writes into the GPU destination (rendezvous messages), or
// into a device scratch a reduction kernel then combines (plan.h).
//
// Ordering with the caller's stream. GDR_DIRECT_ORDER=host (the default):
// the call queues the plan's local copies, waits for its stream, runs the
// network part itself (posts the messages over the endpoints, waits for their
// completions, applies the flush rule, path.cc), then queues the reduction
// kernel, if any, on the stream. GDR_DIRECT_ORDER=flags: per phase the
// stream writes the phase's start word (host-mapped, cuStreamWriteValue32:
// "inputs ready") and then waits for its done word; the progress thread sees
// the start word, runs the network part and writes the done word; the
// stream then runs the phase's kernels; the call returns at once. The wait
// is a one-thread kernel polling the word (GDR_DIRECT_WAIT=kernel, the
// default, device/device_wait.h) or cuStreamWaitValue32 (=stream). Flags
// order hangs on the H200 machine with either wait (docs/gpudirect.md):
// in one process, CUDA calls block the host while a stream waits, most
// likely lazy module loading (a kernel's first launch waiting for a context
// synchronization the pending wait never allows); so flags order loads the
// path's kernels up front, and CUDA_MODULE_LOADING=EAGER is the cure to
// test for the rest. Host order is the default.
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
// Operations this process ran on the path (tests).
uint64_t opsRun();

}  // namespace gdr::paths::direct
