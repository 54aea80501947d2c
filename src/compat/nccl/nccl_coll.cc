// Collectives and point-to-point calls of the NCCL-compatible API: NCCL's
// argument order and in-place conventions translated to the gdr* API. Gather
// and scatter are all-to-allv calls with one non-empty row; PreMulSum scales
// the input into a scratch buffer (a kernel on the caller's stream for device
// buffers) and sums.
#include <cstring>
#include <vector>

#include "compat/nccl/nccl_compat.h"
#include "compat/nccl/nccl_group.h"
#include "compat/nccl/nccl_one_rank.h"
#include "compat/nccl/nccl_sim.h"
#include "core/cuda.h"
#include "core/datatype.h"
#include "core/memory_kind.h"

#if GDR_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "device/device_scale.h"
#endif

namespace gdr::nccl {

namespace {

gdrStream_t toGdr(cudaStream_t s) { return reinterpret_cast<gdrStream_t>(s); }

bool onDevice(const void* p) { return p && memoryKind(p) == MemKind::Device; }

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

template <typename T>
void scaleTyped(void* dst, const void* src, size_t n, const void* scalar) {
  T s;
  std::memcpy(&s, scalar, sizeof(T));
  const T* in = static_cast<const T*>(src);
  T* out = static_cast<T*>(dst);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<T>(in[i] * s);
}

// Narrow floats multiply in fp32 and round once, as the device kernel does.
template <typename Bits, float (*ToF)(Bits), Bits (*FromF)(float)>
void scaleNarrow(void* dst, const void* src, size_t n, const void* scalar) {
  Bits s;
  std::memcpy(&s, scalar, sizeof(s));
  const float fs = ToF(s);
  const Bits* in = static_cast<const Bits*>(src);
  Bits* out = static_cast<Bits*>(dst);
  for (size_t i = 0; i < n; ++i) out[i] = FromF(ToF(in[i]) * fs);
}

// dst[i] = src[i] * scalar on host memory (fp16/bf16/fp8 through fp32).
void hostScale(void* dst, const void* src, size_t n, gdrDataType_t t, const void* scalar) {
  switch (t) {
    case gdrInt8: return scaleTyped<int8_t>(dst, src, n, scalar);
    case gdrUint8: return scaleTyped<uint8_t>(dst, src, n, scalar);
    case gdrInt32: return scaleTyped<int32_t>(dst, src, n, scalar);
    case gdrUint32: return scaleTyped<uint32_t>(dst, src, n, scalar);
    case gdrInt64: return scaleTyped<int64_t>(dst, src, n, scalar);
    case gdrUint64: return scaleTyped<uint64_t>(dst, src, n, scalar);
    case gdrFloat32: return scaleTyped<float>(dst, src, n, scalar);
    case gdrFloat64: return scaleTyped<double>(dst, src, n, scalar);
    case gdrFloat16:
      return scaleNarrow<uint16_t, gdr::halfToFloat, gdr::floatToHalf>(dst, src, n, scalar);
    case gdrBfloat16:
      return scaleNarrow<uint16_t, gdr::bf16ToFloat, gdr::floatToBf16>(dst, src, n, scalar);
    case gdrFloat8e4m3:
      return scaleNarrow<uint8_t, gdr::fp8e4m3ToFloat, gdr::floatToFp8e4m3>(dst, src, n, scalar);
    case gdrFloat8e5m2:
      return scaleNarrow<uint8_t, gdr::fp8e5m2ToFloat, gdr::floatToFp8e5m2>(dst, src, n, scalar);
    default: throw InternalError("hostScale: bad type");
  }
}

// A reduction op resolved for one call: a built-in one, or PreMulSum.
struct ResolvedOp {
  gdrRedOp_t gdr = gdrSum;
  const PreMulSum* preMul = nullptr;
};

ResolvedOp resolveOp(Comm& c, ncclRedOp_t op, ncclDataType_t type) {
  int v;
  std::memcpy(&v, &op, sizeof(v));
  ResolvedOp r;
  if (builtinOp(op)) {
    r.gdr = static_cast<gdrRedOp_t>(v);  // same numbering for sum, prod, max, min, avg
    return r;
  }
  std::lock_guard<std::mutex> lk(c.mu);
  auto it = c.ops.find(v);
  GDR_CHECK_ARG(it != c.ops.end(), "op %d is neither a built-in op nor one made on this communicator by "
                "ncclRedOpCreatePreMulSum (destroyed?)", v);
  GDR_CHECK_ARG(std::memcmp(&it->second.type, &type, sizeof(type)) == 0,
                "op %d was created for another datatype than this call's", v);
  r.preMul = &it->second;
  return r;
}

// The PreMulSum input: src scaled by the op's scalar into `out` (same kind of
// memory as src). Device buffers: a kernel on `stream`, which reads an
// ncclScalarDevice scalar in device memory when it runs (stream-ordered, as
// NCCL does); a scalar in host memory is read now. Host buffers: scaled here,
// after reading a device-resident scalar (stream-ordered too).
void preScale(const PreMulSum& p, const void* src, size_t count, ncclDataType_t type, void* out, cudaStream_t stream) {
  const gdrDataType_t t = toGdrType(type);
  const size_t bytes = typeBytes(type);
  (void)stream;  // device work only (unused without CUDA)
  unsigned char scalar[8] = {0};
  const bool scalarOnDevice = p.residence == ncclScalarDevice && onDevice(p.pointer);
  if (p.residence == ncclScalarHostImmediate) std::memcpy(scalar, p.value, bytes);
  else if (!scalarOnDevice) std::memcpy(scalar, p.pointer, bytes);
  if (onDevice(src) || onDevice(out)) {
#if GDR_HAVE_CUDA
    GDR_CHECK_ARG(onDevice(src) && onDevice(out), "PreMulSum: the input and the scratch are not both device memory");
    checkCuda(
        dev::launchScale(out, src, count, t, scalarOnDevice ? p.pointer : nullptr, scalar, stream),
        "PreMulSum scaling kernel");
#endif
    return;
  }
  if (scalarOnDevice) {
#if GDR_HAVE_CUDA
    checkCuda(cudaMemcpyAsync(scalar, p.pointer, bytes, cudaMemcpyDeviceToHost, stream),
              "cudaMemcpyAsync (PreMulSum scalar)");
    checkCuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize (PreMulSum scalar)");
#endif
  }
  hostScale(out, src, count, t, scalar);
}

// Runs `issue` now, or queues it when a group is open (noting `sim` for
// ncclGroupSimulateEnd).
template <typename Issue>
ncclResult_t enqueue(const char* fn, ncclComm_t comm, bool p2p, const SimCall& sim, Issue issue) {
  return guard(fn, comm, [&]() -> ncclResult_t {
    Comm& c = checkComm(comm);
    if (groupActive()) {
      groupNoteSim(c, sim);
      groupDefer(&c, p2p, [fn, comm, issue]() {
        return guard(fn, comm, [&] {
          Comm& ready = readyComm(comm);
          ScopedDevice deviceScope(ready.cudaDev);
          issue(ready);
          return ncclSuccess;
        });
      });
      return ncclSuccess;
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
  return enqueue("ncclAllReduce", comm, false, sim, [=](Comm& c) {
    const gdrDataType_t t = toGdrType(datatype);
    ResolvedOp r = resolveOp(c, op, datatype);
    if (!r.preMul) {
      checkGdr(gdrAllReduce(sendbuff, recvbuff, count, t, r.gdr, c.gdr, toGdr(stream)), c.gdr);
      return;
    }
    Scratch scaled(count * typeBytes(datatype), sendbuff, stream);
    preScale(*r.preMul, sendbuff, count, datatype, scaled.data(), stream);
    checkGdr(gdrAllReduce(scaled.data(), recvbuff, count, t, gdrSum, c.gdr, toGdr(stream)), c.gdr);
  });
}

ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream) {
  ncclResult_t one;
  if (root == 0 && oneRankCopy("ncclBroadcast", comm, sendbuff, recvbuff, count, datatype, stream, &one)) return one;
  const SimCall sim = simCall(gdr::CollKind::Broadcast, count, datatype, root);
  return enqueue("ncclBroadcast", comm, false, sim, [=](Comm& c) {
    const gdrDataType_t t = toGdrType(datatype);
    if (c.rank == root && sendbuff) copyBytes(recvbuff, sendbuff, count * typeBytes(datatype), stream);
    checkGdr(gdrBroadcast(recvbuff, count, t, root, c.gdr, toGdr(stream)), c.gdr);
  });
}

ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream) {
  ncclResult_t one;
  if (root == 0 && oneRankCopy("ncclBcast", comm, buff, buff, count, datatype, stream, &one)) return one;
  const SimCall sim = simCall(gdr::CollKind::Broadcast, count, datatype, root);
  return enqueue("ncclBcast", comm, false, sim, [=](Comm& c) {
    checkGdr(gdrBroadcast(buff, count, toGdrType(datatype), root, c.gdr, toGdr(stream)), c.gdr);
  });
}

ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                        int root, ncclComm_t comm, cudaStream_t stream) {
  ncclResult_t one;
  if (builtinOp(op) && root == 0 && oneRankCopy("ncclReduce", comm, sendbuff, recvbuff, count, datatype, stream, &one)) return one;
  const SimCall sim = simCall(gdr::CollKind::Reduce, count, datatype, root);
  return enqueue("ncclReduce", comm, false, sim, [=](Comm& c) {
    const gdrDataType_t t = toGdrType(datatype);
    ResolvedOp r = resolveOp(c, op, datatype);
    if (!r.preMul) {
      checkGdr(gdrReduce(sendbuff, recvbuff, count, t, r.gdr, root, c.gdr, toGdr(stream)), c.gdr);
      return;
    }
    Scratch scaled(count * typeBytes(datatype), sendbuff, stream);
    preScale(*r.preMul, sendbuff, count, datatype, scaled.data(), stream);
    checkGdr(gdrReduce(scaled.data(), recvbuff, count, t, gdrSum, root, c.gdr, toGdr(stream)), c.gdr);
  });
}

// In place when sendbuff is this rank's block of recvbuff.
ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream) {
  ncclResult_t one;
  if (oneRankCopy("ncclAllGather", comm, sendbuff, recvbuff, sendcount, datatype, stream, &one)) return one;
  const SimCall sim = simCall(gdr::CollKind::AllGather, sendcount, datatype);
  return enqueue("ncclAllGather", comm, false, sim, [=](Comm& c) {
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
// puts it.
ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  ncclResult_t one;
  if (builtinOp(op) && oneRankCopy("ncclReduceScatter", comm, sendbuff, recvbuff, recvcount, datatype, stream, &one)) return one;
  const SimCall sim = simCall(gdr::CollKind::ReduceScatter, recvcount, datatype);
  return enqueue("ncclReduceScatter", comm, false, sim, [=](Comm& c) {
    const gdrDataType_t t = toGdrType(datatype);
    ResolvedOp r = resolveOp(c, op, datatype);
    const size_t block = recvcount * typeBytes(datatype);
    const size_t total = block * static_cast<size_t>(c.nranks);
    const void* src = sendbuff;
    std::unique_ptr<Scratch> scaled;
    if (r.preMul) {
      scaled = std::make_unique<Scratch>(total, sendbuff, stream);
      preScale(*r.preMul, sendbuff, recvcount * c.nranks, datatype, scaled->data(), stream);
      src = scaled->data();
    }
    const bool overlaps = block && bytePtr(recvbuff) < bytePtr(sendbuff) + total &&
                          bytePtr(sendbuff) < bytePtr(recvbuff) + block;
    if (!overlaps || src != sendbuff) {
      checkGdr(gdrReduceScatter(src, recvbuff, recvcount, t, r.gdr, c.gdr, toGdr(stream)), c.gdr);
      return;
    }
    // Rank 0's block is the buffer's start, where gdrcoll's in-place form
    // leaves the result: no scratch (and, with one rank, nothing to do).
    if (c.rank == 0 && recvbuff == sendbuff) {
      checkGdr(gdrReduceScatter(GDR_IN_PLACE, recvbuff, recvcount, t, r.gdr, c.gdr, toGdr(stream)),
               c.gdr);
      return;
    }
    Scratch out(block, recvbuff, stream);
    checkGdr(gdrReduceScatter(src, out.data(), recvcount, t, r.gdr, c.gdr, toGdr(stream)), c.gdr);
    copyBytes(recvbuff, out.data(), block, stream);
  });
}

ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                          ncclComm_t comm, cudaStream_t stream) {
  ncclResult_t one;
  if (oneRankCopy("ncclAlltoAll", comm, sendbuff, recvbuff, count, datatype, stream, &one)) return one;
  const SimCall sim = simCall(gdr::CollKind::AllToAll, count, datatype);
  return enqueue("ncclAlltoAll", comm, false, sim, [=](Comm& c) {
    checkGdr(gdrAllToAll(sendbuff, count, recvbuff, toGdrType(datatype), c.gdr, toGdr(stream)), c.gdr);
  });
}

ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream) {
  return enqueue("ncclGather", comm, false, SimCall{}, [=](Comm& c) {
    rootedExchange(c, sendbuff, recvbuff, count, datatype, root, true, stream);
  });
}

ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                         ncclComm_t comm, cudaStream_t stream) {
  return enqueue("ncclScatter", comm, false, SimCall{}, [=](Comm& c) {
    rootedExchange(c, sendbuff, recvbuff, count, datatype, root, false, stream);
  });
}

ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  return enqueue("ncclSend", comm, true, SimCall{}, [=](Comm& c) {
    checkGdr(gdrSend(sendbuff, count, toGdrType(datatype), peer, c.gdr, toGdr(stream)), c.gdr);
  });
}

ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  return enqueue("ncclRecv", comm, true, SimCall{}, [=](Comm& c) {
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
  return guard("ncclGroupEnd", nullptr, [] {
    const ncclResult_t r = groupEnd();
    if (r != ncclSuccess && r != ncclInProgress)
      return recordError("ncclGroupEnd", nullptr, r, threadLastError(), true);
    return r;
  });
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
    GDR_CHECK_ARG(c.ops.erase(v) == 1, "op %d was not created on this communicator (or was destroyed)", v);
    return ncclSuccess;
  });
}

}  // extern "C"
