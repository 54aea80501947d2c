// Collectives and point-to-point calls of the NCCL-compatible API: NCCL's
// argument order and in-place conventions translated to the gdr* API. Gather
// and scatter are all-to-allv calls with one non-empty row; a PreMulSum op is
// gdrcoll's (gdrRedOpCreatePreMulSum), which scales and sums.
#include <cstring>
#include <memory>
#include <vector>

#include "compat/nccl/nccl_compat.h"
#include "compat/nccl/nccl_group.h"
#include "compat/nccl/nccl_one_rank.h"
#include "compat/nccl/nccl_sim.h"
#include "core/cuda.h"
#include "core/datatype.h"
#include "core/log.h"
#include "core/memory_kind.h"

#if GDR_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace gdr::nccl {

namespace {

gdrStream_t toGdr(cudaStream_t s) { return reinterpret_cast<gdrStream_t>(s); }

#if GDR_HAVE_CUDA
bool onDevice(const void* p) { return p && memoryKind(p) == MemKind::Device; }
#endif

// Copies between buffers of either kind, ordered on the stream for device memory.
void copyBytes(void* dst, const void* src, size_t n, cudaStream_t stream) {
  if (n == 0 || dst == src) return;
#if GDR_HAVE_CUDA
  if (onDevice(dst) || onDevice(src)) {
    checkCuda(cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, stream), "cudaMemcpyAsync");
    return;
  }
#else
  (void)stream;
#endif
  std::memmove(dst, src, n);
}

// Scratch memory of the same kind as `like`, freed (stream-ordered) with it.
class Scratch {
 public:
  Scratch(size_t bytes, const void* like, cudaStream_t stream) : stream_(stream) {
#if GDR_HAVE_CUDA
    if (onDevice(like)) {
      checkCuda(cudaMallocAsync(&dev_, bytes ? bytes : 1, stream), "cudaMallocAsync");
      return;
    }
#else
    (void)like;
#endif
    host_.resize(bytes ? bytes : 1);
  }
  ~Scratch() {
#if GDR_HAVE_CUDA
    if (dev_) cudaFreeAsync(dev_, stream_);
#endif
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* data() { return dev_ ? dev_ : host_.data(); }

 private:
  cudaStream_t stream_;
  void* dev_ = nullptr;
  std::vector<unsigned char> host_;
};

// A reduction op for one call: a built-in one, or a PreMulSum made on this
// communicator, which gdrcoll carries out (its op is made on the gdr
// communicator at first use: an NCCL op may be made before the
// communicator's init has finished).
gdrRedOp_t resolveOp(Comm& c, ncclRedOp_t op, ncclDataType_t type) {
  int v;
  std::memcpy(&v, &op, sizeof(v));
  gdrRedOp_t g;
  if (builtinOp(op)) {
    std::memcpy(&g, &v, sizeof(g));  // same numbering for sum, prod, max, min, avg
    return g;
  }
  std::lock_guard<std::mutex> lk(c.mu);
  auto it = c.ops.find(v);
  GDR_CHECK_ARG(it != c.ops.end(), "op %d is neither a built-in op nor one made on this communicator by "
                "ncclRedOpCreatePreMulSum (destroyed?)", v);
  PreMulSum& p = it->second;
  GDR_CHECK_ARG(std::memcmp(&p.type, &type, sizeof(type)) == 0,
                "op %d was created for another datatype than this call's", v);
  if (!p.made) {
    const bool immediate = p.residence == ncclScalarHostImmediate;
    checkGdr(gdrRedOpCreatePreMulSum(&p.gdrOp, immediate ? p.value : const_cast<void*>(p.pointer),
                                     toGdrType(type),
                                     immediate ? gdrScalarHostImmediate : gdrScalarDevice, c.gdr),
             c.gdr);
    p.made = true;
  }
  return p.gdrOp;
}

// Makes the call now: its gdr* calls run, or queue when a group is open.
// Inside a group on a communicator whose init still runs, the call is
// replayed at the group's end instead (nccl_group.h); `sim` is noted for
// ncclGroupSimulateEnd either way.
template <typename Issue>
ncclResult_t enqueue(const char* fn, ncclComm_t comm, const SimCall& sim, Issue issue) {
  return guard(fn, comm, [&]() -> ncclResult_t {
    Comm& c = checkComm(comm);
    if (groupActive()) {
      groupNoteSim(c, sim);
      auto replay = [fn, comm, issue] {
        try {
          Comm& ready = readyComm(comm);
          log::setContext(ready.rank, ready.cudaDev);
          ScopedDevice deviceScope(ready.cudaDev);
          issue(ready);
        } catch (...) {
          const ErrorReport r = reportCurrentException();
          recordError(fn, comm, fromGdr(r.code), r.text, true);
          throw;
        }
      };
      if (groupDefer(c, replay)) return ncclSuccess;
    }
    Comm& ready = readyComm(comm);
    ScopedDevice deviceScope(ready.cudaDev);
    issue(ready);
    return ncclSuccess;
  });
}

const unsigned char* bytePtr(const void* p) { return static_cast<const unsigned char*>(p); }

// Gather and scatter are all-to-allv calls whose only non-empty column
// (gather: everyone sends to the root) or row (scatter: the root sends to
// everyone) is the root's. In place on the root, its own block stays put.
void rootedExchange(Comm& c, const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                    bool gather, cudaStream_t stream) {
  const gdrDataType_t t = toGdrType(datatype);
  GDR_CHECK_ARG(root >= 0 && root < c.nranks, "root %d is outside [0, %d)", root, c.nranks);
  const size_t n = static_cast<size_t>(c.nranks);
  std::vector<size_t> one(n, 0), perRank(n, 0), zero(n, 0), displ(n, 0);
  const bool isRoot = c.rank == root;
  const size_t rootOffset = root * count * typeBytes(datatype);
  const bool inPlace = isRoot && (gather ? recvbuff && sendbuff == bytePtr(recvbuff) + rootOffset
                                         : sendbuff && recvbuff == bytePtr(sendbuff) + rootOffset);
  if (!inPlace) one[root] = count;  // the single message to or from the root
  if (isRoot)
    for (size_t r = 0; r < n; ++r) {
      perRank[r] = (inPlace && static_cast<int>(r) == root) ? 0 : count;
      displ[r] = r * count;
    }
  const void* src = gather && inPlace ? recvbuff : sendbuff;
  if (gather)
    checkGdr(gdrAllToAllv(src, one.data(), zero.data(), recvbuff, perRank.data(), displ.data(), t, c.gdr,
                          toGdr(stream)),
             c.gdr);
  else
    checkGdr(gdrAllToAllv(src, perRank.data(), displ.data(), recvbuff, one.data(), zero.data(), t, c.gdr,
                          toGdr(stream)),
             c.gdr);
}

}  // namespace

}  // namespace gdr::nccl

using namespace gdr::nccl;

extern "C" {

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  ncclResult_t one;
  if (builtinOp(op) && oneRankCopy("ncclAllReduce", comm, sendbuff, recvbuff, count, datatype, stream, &one)) return one;
  const SimCall sim = simCall(gdr::CollKind::AllReduce, count, datatype);
  return enqueue("ncclAllReduce", comm, sim, [=](Comm& c) {
    const gdrDataType_t t = toGdrType(datatype);
    checkGdr(gdrAllReduce(sendbuff, recvbuff, count, t, resolveOp(c, op, datatype), c.gdr,
                          toGdr(stream)),
             c.gdr);
  });
}

ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream) {
  ncclResult_t one;
  if (root == 0 && oneRankCopy("ncclBroadcast", comm, sendbuff, recvbuff, count, datatype, stream, &one)) return one;
  const SimCall sim = simCall(gdr::CollKind::Broadcast, count, datatype, root);
  // Out of place in one call: on one host's GPUs the root's copy rides in
  // the broadcast kernel, so sendbuff is read once.
  return enqueue("ncclBroadcast", comm, sim, [=](Comm& c) {
    checkGdr(gdrBroadcastFrom(sendbuff ? sendbuff : recvbuff, recvbuff, count, toGdrType(datatype),
                              root, c.gdr, toGdr(stream)),
             c.gdr);
  });
}

ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream) {
  ncclResult_t one;
  if (root == 0 && oneRankCopy("ncclBcast", comm, buff, buff, count, datatype, stream, &one)) return one;
  const SimCall sim = simCall(gdr::CollKind::Broadcast, count, datatype, root);
  return enqueue("ncclBcast", comm, sim, [=](Comm& c) {
    checkGdr(gdrBroadcast(buff, count, toGdrType(datatype), root, c.gdr, toGdr(stream)), c.gdr);
  });
}

ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                        int root, ncclComm_t comm, cudaStream_t stream) {
  ncclResult_t one;
  if (builtinOp(op) && root == 0 && oneRankCopy("ncclReduce", comm, sendbuff, recvbuff, count, datatype, stream, &one)) return one;
  const SimCall sim = simCall(gdr::CollKind::Reduce, count, datatype, root);
  return enqueue("ncclReduce", comm, sim, [=](Comm& c) {
    const gdrDataType_t t = toGdrType(datatype);
    checkGdr(gdrReduce(sendbuff, recvbuff, count, t, resolveOp(c, op, datatype), root, c.gdr,
                       toGdr(stream)),
             c.gdr);
  });
}

// In place when sendbuff is this rank's block of recvbuff.
ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream) {
  ncclResult_t one;
  if (oneRankCopy("ncclAllGather", comm, sendbuff, recvbuff, sendcount, datatype, stream, &one)) return one;
  const SimCall sim = simCall(gdr::CollKind::AllGather, sendcount, datatype);
  return enqueue("ncclAllGather", comm, sim, [=](Comm& c) {
    const size_t block = sendcount * typeBytes(datatype);
    const bool inPlace = recvbuff && sendbuff == bytePtr(recvbuff) + c.rank * block;
    checkGdr(gdrAllGather(inPlace ? GDR_IN_PLACE : sendbuff, sendcount, recvbuff, toGdrType(datatype), c.gdr,
                          toGdr(stream)),
             c.gdr);
  });
}

// In place when recvbuff is this rank's block of sendbuff. gdrcoll's in-place
// form leaves the result at the buffer's start instead, so overlapping calls
// on ranks other than 0 reduce into scratch and copy the block where NCCL
// puts it (in a group, a step after the call).
ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  ncclResult_t one;
  if (builtinOp(op) && oneRankCopy("ncclReduceScatter", comm, sendbuff, recvbuff, recvcount, datatype, stream, &one)) return one;
  const SimCall sim = simCall(gdr::CollKind::ReduceScatter, recvcount, datatype);
  return enqueue("ncclReduceScatter", comm, sim, [=](Comm& c) {
    const gdrDataType_t t = toGdrType(datatype);
    const gdrRedOp_t g = resolveOp(c, op, datatype);
    const size_t block = recvcount * typeBytes(datatype);
    const size_t total = block * static_cast<size_t>(c.nranks);
    const bool overlaps = block && bytePtr(recvbuff) < bytePtr(sendbuff) + total &&
                          bytePtr(sendbuff) < bytePtr(recvbuff) + block;
    if (!overlaps) {
      checkGdr(gdrReduceScatter(sendbuff, recvbuff, recvcount, t, g, c.gdr, toGdr(stream)), c.gdr);
      return;
    }
    // Rank 0's block is the buffer's start, where gdrcoll's in-place form
    // leaves the result: no scratch (and, with one rank, nothing to do).
    if (c.rank == 0 && recvbuff == sendbuff) {
      checkGdr(gdrReduceScatter(GDR_IN_PLACE, recvbuff, recvcount, t, g, c.gdr, toGdr(stream)),
               c.gdr);
      return;
    }
    // The scratch lives until the copy has run (in a group: until its end).
    auto out = std::make_shared<Scratch>(block, recvbuff, stream);
    checkGdr(gdrReduceScatter(sendbuff, out->data(), recvcount, t, g, c.gdr, toGdr(stream)), c.gdr);
    groupStep(c, [=] { copyBytes(recvbuff, out->data(), block, stream); });
  });
}

ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                          ncclComm_t comm, cudaStream_t stream) {
  ncclResult_t one;
  if (oneRankCopy("ncclAlltoAll", comm, sendbuff, recvbuff, count, datatype, stream, &one)) return one;
  const SimCall sim = simCall(gdr::CollKind::AllToAll, count, datatype);
  return enqueue("ncclAlltoAll", comm, sim, [=](Comm& c) {
    checkGdr(gdrAllToAll(sendbuff, count, recvbuff, toGdrType(datatype), c.gdr, toGdr(stream)), c.gdr);
  });
}

ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream) {
  const SimCall sim = simOther(SimShape::Gather, count, datatype, root);
  return enqueue("ncclGather", comm, sim, [=](Comm& c) {
    rootedExchange(c, sendbuff, recvbuff, count, datatype, root, true, stream);
  });
}

ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                         ncclComm_t comm, cudaStream_t stream) {
  const SimCall sim = simOther(SimShape::Scatter, count, datatype, root);
  return enqueue("ncclScatter", comm, sim, [=](Comm& c) {
    rootedExchange(c, sendbuff, recvbuff, count, datatype, root, false, stream);
  });
}

ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  const SimCall sim = simOther(SimShape::Send, count, datatype, peer);
  return enqueue("ncclSend", comm, sim, [=](Comm& c) {
    checkGdr(gdrSend(sendbuff, count, toGdrType(datatype), peer, c.gdr, toGdr(stream)), c.gdr);
  });
}

ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  const SimCall sim = simOther(SimShape::Recv, count, datatype, peer);
  return enqueue("ncclRecv", comm, sim, [=](Comm& c) {
    checkGdr(gdrRecv(recvbuff, count, toGdrType(datatype), peer, c.gdr, toGdr(stream)), c.gdr);
  });
}

ncclResult_t ncclGroupStart(void) {
  return guard("ncclGroupStart", nullptr, [] {
    groupStart();
    return ncclSuccess;
  });
}

ncclResult_t ncclGroupEnd(void) {
  return guard("ncclGroupEnd", nullptr, [] { return groupEnd(); });
}

ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                      ncclScalarResidence_t residence, ncclComm_t comm) {
  return guard("ncclRedOpCreatePreMulSum", comm, [&] {
    GDR_CHECK_ARG(op, "op (the output pointer) is NULL");
    GDR_CHECK_ARG(scalar, "scalar is NULL");
    Comm& c = checkComm(comm);
    PreMulSum p{};
    p.type = datatype;
    const size_t bytes = typeBytes(datatype);  // rejects bad types
    int res;
    std::memcpy(&res, &residence, sizeof(res));
    GDR_CHECK_ARG(res == ncclScalarDevice || res == ncclScalarHostImmediate,
                  "residence %d is not an ncclScalarResidence_t", res);
    p.residence = residence;
    p.pointer = scalar;
    if (res == ncclScalarHostImmediate) std::memcpy(p.value, scalar, bytes);
    std::lock_guard<std::mutex> lk(c.mu);
    const int id = c.nextOp++;
    c.ops[id] = p;
    *op = static_cast<ncclRedOp_t>(id);
    return ncclSuccess;
  });
}

ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  return guard("ncclRedOpDestroy", comm, [&] {
    Comm& c = checkComm(comm);
    int v;
    std::memcpy(&v, &op, sizeof(v));
    GDR_CHECK_ARG(v >= ncclNumOps, "op %d is built in and cannot be destroyed", v);
    std::lock_guard<std::mutex> lk(c.mu);
    auto it = c.ops.find(v);
    GDR_CHECK_ARG(it != c.ops.end(),
                  "op %d was not created on this communicator (or was destroyed)", v);
    const PreMulSum p = it->second;
    c.ops.erase(it);
    if (p.made) checkGdr(gdrRedOpDestroy(p.gdrOp, c.gdr), c.gdr);
    return ncclSuccess;
  });
}

}  // extern "C"
