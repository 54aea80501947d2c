// What one operation on the GPUDirect path does, worked out on the host
// before anything is queued: the copies on the caller's stream before the
// network part (a rank's own block), the messages the progress thread posts
// (device buffers both ends: the NIC reads and writes GPU memory), and the
// reduction the caller's stream runs once the messages landed. Pure
// arithmetic on pointers, so it is tested without a GPU.
//
// Exchanges (all-gather, broadcast, all-to-all(v), barrier, send/recv) send
// from the input and receive straight into the output. Reductions are
// one-shot: every rank's input reaches the ranks that need it (all of them
// for all-reduce, the block's owner for reduce-scatter, the root for
// reduce) in a device scratch, one block per peer, and one reduction kernel
// combines the blocks in rank order, so every rank computes bit-identical
// results. Each rank moves (n - 1) blocks: optimal for two ranks. Beyond two
// ranks all-reduce and reduce-scatter run the host path's ring schedule
// (collectives/, reduce-scatter then all-gather, chunked by GDR_CHUNK_BYTES)
// in phases (phases.h): every rank moves 2(n - 1)/n of the buffer
// (all-reduce), and each block is reduced along one chain and then passed
// on, so the ranks' results are identical again.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/call.h"

namespace gdr::paths::direct {

struct Msg {
  bool isSend;
  char* buf;  // device memory
  size_t bytes;
  int peer;
  gdrDataType_t type = gdrUint8;  // a send/recv keeps its caller's (bytes is a multiple)
};

struct LocalCopy {
  char* dst;
  const char* src;
  size_t bytes;
};

struct Reduction {
  char* dst = nullptr;
  std::vector<const char*> srcs;  // rank order
  size_t count = 0;
  gdrDataType_t type = gdrFloat32;
  gdrRedOp_t op = gdrSum;
};

// Local work after a phase's messages: dst = a (a copy of `count`
// elements) or dst = op(srcs...) (a reduction kernel).
struct LocalOp {
  bool isCopy = false;
  char* dst = nullptr;
  const char* srcs[2] = {nullptr, nullptr};
  int nsrc = 0;
  size_t count = 0;
  gdrDataType_t type = gdrFloat32;
  gdrRedOp_t op = gdrSum;
  int avgDivisor = 0;
};

// A network part (the progress thread), then local work on the stream.
struct Phase {
  std::vector<Msg> msgs;
  std::vector<LocalOp> ops;
};

struct Plan {
  std::string what;               // "all-reduce of 4096 B" (logs, timeouts)
  std::vector<LocalCopy> before;  // on the caller's stream, before the network part
  std::vector<Msg> msgs;          // the network part (the progress thread)
  bool reduces = false;
  Reduction reduction;  // on the caller's stream, after the messages landed
  // A scheduled plan (the ring): these phases in order, instead of msgs and
  // reduction (both empty then).
  std::vector<Phase> phases;
};

// Whether `call` runs the ring schedule on this path (more than two ranks,
// all-reduce or reduce-scatter, a built-in op).
bool ringApplies(const CollCall& call, int n);
// Scratch bytes `call` needs on this rank (0: none); `chunkElems`: the
// ring's pipelining unit (0: none).
size_t scratchBytes(const CollCall& call, int me, int n, size_t chunkElems = 0);
// `scratch`: a device buffer of at least scratchBytes(call, me, n,
// chunkElems) bytes.
Plan planCollective(const CollCall& call, int me, int n, char* scratch, size_t chunkElems = 0);

}  // namespace gdr::paths::direct
