// Collective and point-to-point entry points of the C API: argument checks
// (nothing is written when they fail, and the communicator stays usable),
// then the router (dispatch/route.h) picks the path. A call mixing host and
// device buffers is refused.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "api/guard.h"
#include "core/call.h"
#include "core/datatype.h"
#include "dispatch/group.h"
#include "dispatch/route.h"
#include "paths/device.h"

using gdr::CollCall;
using gdr::CollKind;
using gdr::Communicator;
using gdr::api::checkComm;
using gdr::api::guarded;

namespace {

Communicator& ready(gdrComm_t comm) {
  Communicator& c = checkComm(comm);
  c.throwIfFailed();
  // A communicator created inside a group connects at that group's end; its
  // own group may queue work for it (run after the connect), nothing else.
  if (c.pending() && !gdr::dispatch::groupOwnsInit(&c))
    throw gdr::InvalidUsage(
        "the communicator is still being created: its gdrCommInitRank was inside a group whose gdrGroupEnd has "
        "not run yet");
  return c;
}

// Reads an enum argument's bits without loading it as the enum type: a
// caller may pass any int, and loading an out-of-range enum is undefined.
template <typename E>
int rawValue(const E& e) {
  std::underlying_type_t<E> v;
  std::memcpy(&v, &e, sizeof(v));
  return static_cast<int>(v);
}

void checkType(const gdrDataType_t& t) {
  int v = rawValue(t);
  GDR_CHECK_ARG(v >= 0 && v < gdrNumTypes, "datatype %d is not a gdrDataType_t", v);
}

// A reducing call's op: a built-in one, or a PreMulSum made on `c` for the
// call's type (checked off the path of built-in ops; the router resolves it
// again when the call runs).
__attribute__((noinline)) void checkPreMulSum(Communicator& c, int op, gdrDataType_t t) {
  GDR_CHECK_ARG(op >= gdrNumOps, "op %d is not a gdrRedOp_t", op);
  (void)c.preMulOps().resolve(op, t);
}
void checkReduceOp(Communicator& c, const gdrRedOp_t& op, gdrDataType_t t) {
  const int v = rawValue(op);
  if (__builtin_expect(v < 0 || v >= gdrNumOps, 0)) checkPreMulSum(c, v, t);
}

// count * multiplier elements of type t must fit in memory; a negative int
// passed as size_t shows up here as an enormous count.
// (Overflow-checked products, not divisions: this runs on every call.)
void checkCount(size_t count, size_t multiplier, gdrDataType_t t, const char* what) {
  size_t elems = 0, bytes = 0;
  const bool overflow = __builtin_mul_overflow(count, multiplier ? multiplier : 1, &elems) ||
                        __builtin_mul_overflow(elems, gdr::typeSize(t), &bytes);
  GDR_CHECK_ARG(!overflow && bytes <= SIZE_MAX / 4,
                "%s %zu is too large (a negative count converted to size_t?)", what, count);
}

void checkBuf(const void* p, size_t count, const char* what) {
  GDR_CHECK_ARG(p || count == 0, "%s is NULL", what);
}

// A buffer the call reads or writes itself (never the in-place marker, which
// only a send buffer may be: its value is a pointer no program owns).
void checkRealBuf(const void* p, size_t count, const char* what) {
  checkBuf(p, count, what);
  GDR_CHECK_ARG(p != GDR_IN_PLACE, "%s is GDR_IN_PLACE, which only a send buffer may be", what);
}

void checkRoot(const Communicator& c, int root) {
  GDR_CHECK_ARG(root >= 0 && root < c.size(), "root %d is outside [0, %d)", root, c.size());
}

void checkPeer(const Communicator& c, int peer) {
  GDR_CHECK_ARG(peer >= 0 && peer < c.size(), "peer %d is outside [0, %d)", peer, c.size());
}

bool inPlace(const void* sendbuf, const void* recvbuf) { return sendbuf == GDR_IN_PLACE || sendbuf == recvbuf; }

}  // namespace

extern "C" {

gdrResult_t gdrAllReduce(const void* sendbuf, void* recvbuf, size_t count, gdrDataType_t datatype,
                         gdrRedOp_t op, gdrComm_t comm, gdrStream_t stream) {
  return guarded("gdrAllReduce", comm, [&] {
    Communicator& c = ready(comm);
    checkType(datatype);
    checkReduceOp(c, op, datatype);
    checkCount(count, 1, datatype, "count");
    checkBuf(sendbuf, count, "sendbuf");
    checkRealBuf(recvbuf, count, "recvbuf");
    const bool dev = gdr::paths::isDeviceCall(sendbuf, recvbuf);
    CollCall call{CollKind::AllReduce, sendbuf, recvbuf, count, datatype, op};
    call.inPlace = inPlace(sendbuf, recvbuf);
    gdr::dispatch::collective(c, call, dev, stream);
  });
}

gdrResult_t gdrBroadcast(void* buffer, size_t count, gdrDataType_t datatype, int root, gdrComm_t comm,
                         gdrStream_t stream) {
  return guarded("gdrBroadcast", comm, [&] {
    Communicator& c = ready(comm);
    checkType(datatype);
    checkCount(count, 1, datatype, "count");
    checkRealBuf(buffer, count, "buffer");
    checkRoot(c, root);
    const bool dev = gdr::paths::isDeviceCall(buffer);
    CollCall call{CollKind::Broadcast, buffer, buffer, count, datatype, gdrSum, root};
    gdr::dispatch::collective(c, call, dev, stream);
  });
}

gdrResult_t gdrBroadcastFrom(const void* sendbuf, void* recvbuf, size_t count,
                             gdrDataType_t datatype, int root, gdrComm_t comm, gdrStream_t stream) {
  return guarded("gdrBroadcastFrom", comm, [&] {
    Communicator& c = ready(comm);
    checkType(datatype);
    checkCount(count, 1, datatype, "count");
    checkRealBuf(recvbuf, count, "recvbuf");
    checkRoot(c, root);
    const bool isRoot = c.rank() == root;
    if (isRoot) checkBuf(sendbuf, count, "sendbuf (on the root)");
    // Elsewhere sendbuf is not read: the call is the in-place one there.
    const void* src = isRoot && !inPlace(sendbuf, recvbuf) ? sendbuf : recvbuf;
    const bool dev = gdr::paths::isDeviceCall(src, recvbuf);
    CollCall call{CollKind::Broadcast, src, recvbuf, count, datatype, gdrSum, root};
    gdr::dispatch::collective(c, call, dev, stream);
  });
}

gdrResult_t gdrReduce(const void* sendbuf, void* recvbuf, size_t count, gdrDataType_t datatype, gdrRedOp_t op,
                      int root, gdrComm_t comm, gdrStream_t stream) {
  return guarded("gdrReduce", comm, [&] {
    Communicator& c = ready(comm);
    checkType(datatype);
    checkReduceOp(c, op, datatype);
    checkCount(count, 1, datatype, "count");
    checkRoot(c, root);
    const bool isRoot = c.rank() == root;
    GDR_CHECK_ARG(isRoot || sendbuf != GDR_IN_PLACE, "GDR_IN_PLACE is only valid on the root");
    checkBuf(sendbuf, count, "sendbuf");
    if (isRoot) checkRealBuf(recvbuf, count, "recvbuf (on the root)");
    const bool dev = gdr::paths::isDeviceCall(sendbuf, isRoot ? recvbuf : nullptr);
    CollCall call{CollKind::Reduce, sendbuf, recvbuf, count, datatype, op, root};
    call.inPlace = isRoot && inPlace(sendbuf, recvbuf);
    gdr::dispatch::collective(c, call, dev, stream);
  });
}

gdrResult_t gdrAllGather(const void* sendbuf, size_t sendcount, void* recvbuf, gdrDataType_t datatype,
                         gdrComm_t comm, gdrStream_t stream) {
  return guarded("gdrAllGather", comm, [&] {
    Communicator& c = ready(comm);
    checkType(datatype);
    checkCount(sendcount, c.size(), datatype, "sendcount");
    checkBuf(sendbuf, sendcount, "sendbuf");
    checkRealBuf(recvbuf, sendcount, "recvbuf");
    const bool dev = gdr::paths::isDeviceCall(sendbuf, recvbuf);
    CollCall call{CollKind::AllGather, sendbuf, recvbuf, sendcount, datatype};
    call.blockAtStart = sendbuf == recvbuf && sendcount > 0;
    call.inPlace = sendbuf == GDR_IN_PLACE || call.blockAtStart;
    gdr::dispatch::collective(c, call, dev, stream);
  });
}

gdrResult_t gdrReduceScatter(const void* sendbuf, void* recvbuf, size_t recvcount, gdrDataType_t datatype,
                             gdrRedOp_t op, gdrComm_t comm, gdrStream_t stream) {
  return guarded("gdrReduceScatter", comm, [&] {
    Communicator& c = ready(comm);
    checkType(datatype);
    checkReduceOp(c, op, datatype);
    checkCount(recvcount, c.size(), datatype, "recvcount");
    checkBuf(sendbuf, recvcount, "sendbuf");
    checkRealBuf(recvbuf, recvcount, "recvbuf");
    const bool dev = gdr::paths::isDeviceCall(sendbuf, recvbuf);
    GDR_CHECK_ARG(sendbuf != recvbuf || recvcount == 0,
                  "sendbuf equals recvbuf: pass GDR_IN_PLACE for an in-place reduce-scatter");
    CollCall call{CollKind::ReduceScatter, sendbuf, recvbuf, recvcount, datatype, op};
    call.inPlace = sendbuf == GDR_IN_PLACE;
    gdr::dispatch::collective(c, call, dev, stream);
  });
}

gdrResult_t gdrAllToAll(const void* sendbuf, size_t sendcount, void* recvbuf, gdrDataType_t datatype,
                        gdrComm_t comm, gdrStream_t stream) {
  return guarded("gdrAllToAll", comm, [&] {
    Communicator& c = ready(comm);
    checkType(datatype);
    checkCount(sendcount, c.size(), datatype, "sendcount");
    checkBuf(sendbuf, sendcount, "sendbuf");
    checkRealBuf(recvbuf, sendcount, "recvbuf");
    const bool dev = gdr::paths::isDeviceCall(sendbuf, recvbuf);
    CollCall call{CollKind::AllToAll, sendbuf, recvbuf, sendcount, datatype};
    call.inPlace = inPlace(sendbuf, recvbuf);
    gdr::dispatch::collective(c, call, dev, stream);
  });
}

gdrResult_t gdrAllToAllv(const void* sendbuf, const size_t* sendcounts, const size_t* sdispls, void* recvbuf,
                         const size_t* recvcounts, const size_t* rdispls, gdrDataType_t datatype,
                         gdrComm_t comm, gdrStream_t stream) {
  return guarded("gdrAllToAllv", comm, [&] {
    Communicator& c = ready(comm);
    checkType(datatype);
    const bool ip = sendbuf == GDR_IN_PLACE;
    GDR_CHECK_ARG(recvcounts && rdispls, "recvcounts and rdispls must not be NULL");
    GDR_CHECK_ARG(ip || (sendcounts && sdispls), "sendcounts and sdispls must not be NULL");
    size_t anySend = 0, anyRecv = 0;
    for (int r = 0; r < c.size(); ++r) {
      checkCount(recvcounts[r], 1, datatype, "recvcounts[r]");
      checkCount(rdispls[r], 1, datatype, "rdispls[r]");
      anyRecv += recvcounts[r];
      if (!ip) {
        checkCount(sendcounts[r], 1, datatype, "sendcounts[r]");
        checkCount(sdispls[r], 1, datatype, "sdispls[r]");
        anySend += sendcounts[r];
      }
    }
    checkBuf(ip ? recvbuf : sendbuf, ip ? anyRecv : anySend, "sendbuf");
    checkRealBuf(recvbuf, anyRecv, "recvbuf");
    const bool dev = gdr::paths::isDeviceCall(sendbuf, recvbuf);
    CollCall call{CollKind::AllToAllv, sendbuf, recvbuf, 0, datatype};
    call.inPlace = ip;
    call.sendCounts = sendcounts;
    call.sendDispls = sdispls;
    call.recvCounts = recvcounts;
    call.recvDispls = rdispls;
    gdr::dispatch::collective(c, call, dev, stream);
  });
}

gdrResult_t gdrBarrier(gdrComm_t comm, gdrStream_t stream) {
  return guarded("gdrBarrier", comm, [&] {
    Communicator& c = ready(comm);
    // A barrier on a non-null stream is stream-ordered (device path).
    gdr::dispatch::collective(c, CollCall{CollKind::Barrier}, stream != nullptr, stream);
  });
}

gdrResult_t gdrSend(const void* sendbuf, size_t count, gdrDataType_t datatype, int peer, gdrComm_t comm,
                    gdrStream_t stream) {
  return guarded("gdrSend", comm, [&] {
    Communicator& c = ready(comm);
    checkType(datatype);
    checkCount(count, 1, datatype, "count");
    checkRealBuf(sendbuf, count, "sendbuf");
    checkPeer(c, peer);
    gdr::dispatch::p2p(c, gdr::P2PCall{true, sendbuf, nullptr, count, datatype, peer, stream},
                       gdr::paths::isDeviceCall(sendbuf));
  });
}

gdrResult_t gdrRecv(void* recvbuf, size_t count, gdrDataType_t datatype, int peer, gdrComm_t comm,
                    gdrStream_t stream) {
  return guarded("gdrRecv", comm, [&] {
    Communicator& c = ready(comm);
    checkType(datatype);
    checkCount(count, 1, datatype, "count");
    checkRealBuf(recvbuf, count, "recvbuf");
    checkPeer(c, peer);
    gdr::dispatch::p2p(c, gdr::P2PCall{false, nullptr, recvbuf, count, datatype, peer, stream},
                       gdr::paths::isDeviceCall(recvbuf));
  });
}

gdrResult_t gdrGroupStart(void) {
  return guarded("gdrGroupStart", nullptr, [&] { gdr::dispatch::groupStart(); });
}

gdrResult_t gdrGroupEnd(void) {
  return guarded("gdrGroupEnd", nullptr, [&] { gdr::dispatch::groupEnd(); });
}

gdrResult_t gdrRedOpCreatePreMulSum(gdrRedOp_t* op, void* scalar, gdrDataType_t datatype,
                                    gdrScalarResidence_t residence, gdrComm_t comm) {
  return guarded("gdrRedOpCreatePreMulSum", comm, [&] {
    GDR_CHECK_ARG(op, "op (the output pointer) is NULL");
    GDR_CHECK_ARG(scalar, "scalar is NULL");
    Communicator& c = checkComm(comm);
    checkType(datatype);
    const int res = rawValue(residence);
    GDR_CHECK_ARG(res == gdrScalarDevice || res == gdrScalarHostImmediate,
                  "residence %d is not a gdrScalarResidence_t", res);
    const int id = c.preMulOps().create(datatype, scalar, res == gdrScalarDevice);
    std::memcpy(op, &id, sizeof(id));  // a value outside the enum's named ones
  });
}

gdrResult_t gdrRedOpDestroy(gdrRedOp_t op, gdrComm_t comm) {
  return guarded("gdrRedOpDestroy", comm, [&] {
    Communicator& c = checkComm(comm);
    const int v = rawValue(op);
    GDR_CHECK_ARG(v >= gdrNumOps, "op %d is built in and cannot be destroyed", v);
    c.preMulOps().destroy(v);
  });
}

}  // extern "C"
