#include "bench_ops.h"

#include <vector>

#include "gdrcoll_mpi.h"

#if GDR_BENCH_NCCL
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdio>
#endif

namespace bench {

gdrResult_t runGdr(const Options& o, const Plan& p, const Bufs& b, gdrComm_t comm, int rank) {
  switch (o.coll) {
    case Coll::AllReduce: return gdrAllReduce(b.send, b.recv, p.count, o.type, o.op, comm, b.stream);
    case Coll::AllGather: return gdrAllGather(b.send, p.count, b.recv, o.type, comm, b.stream);
    case Coll::ReduceScatter: return gdrReduceScatter(b.send, b.recv, p.count, o.type, o.op, comm, b.stream);
    case Coll::Bcast: return gdrBroadcast(b.recv, p.count, o.type, o.root, comm, b.stream);
    case Coll::Reduce: return gdrReduce(b.send, b.recv, p.count, o.type, o.op, o.root, comm, b.stream);
    case Coll::AllToAll: return gdrAllToAll(b.send, p.count, b.recv, o.type, comm, b.stream);
    case Coll::AllToAllv:
      return gdrAllToAllv(b.send, p.counts.data(), p.displs.data(), b.recv, p.counts.data(), p.displs.data(),
                          o.type, comm, b.stream);
    case Coll::Barrier: return gdrBarrier(comm, b.stream);
    case Coll::SendRecv: {
      // Ping-pong between rank pairs (0,1), (2,3), ...; an odd last rank idles.
      int size = 0;
      gdrCommSize(comm, &size);
      int peer = rank ^ 1;
      if (peer >= size) return gdrSuccess;
      gdrResult_t r;
      if (rank % 2 == 0) {
        if ((r = gdrSend(b.send, p.count, o.type, peer, comm, b.stream)) != gdrSuccess) return r;
        return gdrRecv(b.recv, p.count, o.type, peer, comm, b.stream);
      }
      if ((r = gdrRecv(b.recv, p.count, o.type, peer, comm, b.stream)) != gdrSuccess) return r;
      return gdrSend(b.send, p.count, o.type, peer, comm, b.stream);
    }
  }
  return gdrInvalidArgument;
}

namespace {
MPI_Datatype mpiType(gdrDataType_t t) { return gdrTypeToMPI(t); }
MPI_Op mpiOp(gdrRedOp_t op) { return gdrOpToMPI(op); }
}  // namespace

bool mpiCanRun(const Options& o) { return mpiType(o.type) != MPI_DATATYPE_NULL && mpiOp(o.op) != MPI_OP_NULL; }

void runMpi(const Options& o, const Plan& p, const Bufs& b, MPI_Comm comm, int rank) {
  MPI_Datatype t = mpiType(o.type);
  MPI_Op op = mpiOp(o.op);
  int n = static_cast<int>(p.count);
  switch (o.coll) {
    case Coll::AllReduce: MPI_Allreduce(b.send, b.recv, n, t, op, comm); break;
    case Coll::AllGather: MPI_Allgather(b.send, n, t, b.recv, n, t, comm); break;
    case Coll::ReduceScatter: MPI_Reduce_scatter_block(b.send, b.recv, n, t, op, comm); break;
    case Coll::Bcast: MPI_Bcast(b.recv, n, t, o.root, comm); break;
    case Coll::Reduce: MPI_Reduce(b.send, b.recv, n, t, op, o.root, comm); break;
    case Coll::AllToAll: MPI_Alltoall(b.send, n, t, b.recv, n, t, comm); break;
    case Coll::AllToAllv:
      MPI_Alltoallv(b.send, p.mpiCounts.data(), p.mpiDispls.data(), t, b.recv, p.mpiCounts.data(),
                    p.mpiDispls.data(), t, comm);
      break;
    case Coll::Barrier: MPI_Barrier(comm); break;
    case Coll::SendRecv: {
      int size = 0;
      MPI_Comm_size(comm, &size);
      int peer = rank ^ 1;
      if (peer >= size) break;
      if (rank % 2 == 0) {
        MPI_Send(b.send, n, t, peer, 0, comm);
        MPI_Recv(b.recv, n, t, peer, 0, comm, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(b.recv, n, t, peer, 0, comm, MPI_STATUS_IGNORE);
        MPI_Send(b.send, n, t, peer, 0, comm);
      }
      break;
    }
  }
}

#if GDR_BENCH_NCCL
namespace {
ncclDataType_t ncclType(gdrDataType_t t) {
  static const ncclDataType_t k[] = {ncclInt8,    ncclUint8,   ncclInt32,      ncclUint32,
                                     ncclInt64,   ncclUint64,  ncclFloat16,    ncclBfloat16,
                                     ncclFloat32, ncclFloat64, ncclFloat8e4m3, ncclFloat8e5m2};
  static_assert(sizeof(k) / sizeof(k[0]) == gdrNumTypes, "an NCCL type per gdrDataType_t");
  return k[t];
}
ncclRedOp_t ncclOpOf(gdrRedOp_t op) {
  static const ncclRedOp_t k[] = {ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg};
  return k[op];
}
void ncclCheck(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) {
    std::fprintf(stderr, "gdr-bench: %s: %s\n", what, ncclGetErrorString(r));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}
}  // namespace

bool ncclCanRun(const Options& o) { return o.coll != Coll::Barrier; }

void ncclInit(void** ncclComm, MPI_Comm world) {
  int rank = 0, n = 1;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &n);
  ncclUniqueId id;
  if (rank == 0) ncclCheck(ncclGetUniqueId(&id), "ncclGetUniqueId");
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, world);
  ncclComm_t c;
  ncclCheck(ncclCommInitRank(&c, n, id, rank), "ncclCommInitRank");
  *ncclComm = c;
}

void ncclFree(void* ncclComm) { ncclCommDestroy(static_cast<ncclComm_t>(ncclComm)); }

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
NcclWindows::NcclWindows(void* ncclComm, size_t sendBytes, size_t recvBytes, gdrStream_t stream)
    : comm_(ncclComm) {
  auto c = static_cast<ncclComm_t>(ncclComm);
  bufs.stream = stream;
  ncclCheck(ncclMemAlloc(&bufs.send, sendBytes), "ncclMemAlloc");
  ncclCheck(ncclMemAlloc(&bufs.recv, recvBytes), "ncclMemAlloc");
  ncclWindow_t w[2];
  ncclCheck(ncclCommWindowRegister(c, bufs.send, sendBytes, &w[0], NCCL_WIN_COLL_SYMMETRIC),
            "ncclCommWindowRegister");
  ncclCheck(ncclCommWindowRegister(c, bufs.recv, recvBytes, &w[1], NCCL_WIN_COLL_SYMMETRIC),
            "ncclCommWindowRegister");
  win_[0] = w[0];
  win_[1] = w[1];
}
NcclWindows::~NcclWindows() {
  auto c = static_cast<ncclComm_t>(comm_);
  cudaDeviceSynchronize();
  for (void* w : win_) ncclCommWindowDeregister(c, static_cast<ncclWindow_t>(w));
  ncclMemFree(bufs.send);
  ncclMemFree(bufs.recv);
}
#else
NcclWindows::NcclWindows(void* ncclComm, size_t, size_t, gdrStream_t) : comm_(ncclComm) {
  std::fprintf(stderr,
               "gdr-bench: --window --compare nccl: this NCCL (%d) has no ncclCommWindowRegister\n",
               NCCL_VERSION_CODE);
  MPI_Abort(MPI_COMM_WORLD, 2);
}
NcclWindows::~NcclWindows() {}
#endif

void runNccl(const Options& o, const Plan& p, const Bufs& b, void* ncclComm, int rank) {
  auto c = static_cast<ncclComm_t>(ncclComm);
  auto s = reinterpret_cast<cudaStream_t>(b.stream);
  const ncclDataType_t t = ncclType(o.type);
  const ncclRedOp_t op = ncclOpOf(o.op);
  const size_t n = p.count;
  int size = 1;
  ncclCommCount(c, &size);
  switch (o.coll) {
    case Coll::AllReduce: ncclCheck(ncclAllReduce(b.send, b.recv, n, t, op, c, s), "ncclAllReduce"); break;
    case Coll::AllGather: ncclCheck(ncclAllGather(b.send, b.recv, n, t, c, s), "ncclAllGather"); break;
    case Coll::ReduceScatter: ncclCheck(ncclReduceScatter(b.send, b.recv, n, t, op, c, s), "ncclReduceScatter"); break;
    case Coll::Bcast: ncclCheck(ncclBroadcast(b.recv, b.recv, n, t, o.root, c, s), "ncclBroadcast"); break;
    case Coll::Reduce: ncclCheck(ncclReduce(b.send, b.recv, n, t, op, o.root, c, s), "ncclReduce"); break;
    case Coll::AllToAll:
    case Coll::AllToAllv: {
      // NCCL has no all-to-all call: the usual grouped send/recv (equal
      // blocks, so one form serves both).
      const size_t eb = typeSize(o.type);
      ncclCheck(ncclGroupStart(), "ncclGroupStart");
      for (int r = 0; r < size; ++r) {
        ncclCheck(ncclSend(static_cast<const char*>(b.send) + r * n * eb, n, t, r, c, s), "ncclSend");
        ncclCheck(ncclRecv(static_cast<char*>(b.recv) + r * n * eb, n, t, r, c, s), "ncclRecv");
      }
      ncclCheck(ncclGroupEnd(), "ncclGroupEnd");
      break;
    }
    case Coll::SendRecv: {
      int peer = rank ^ 1;
      if (peer >= size) break;
      if (rank % 2 == 0) {
        ncclCheck(ncclSend(b.send, n, t, peer, c, s), "ncclSend");
        ncclCheck(ncclRecv(b.recv, n, t, peer, c, s), "ncclRecv");
      } else {
        ncclCheck(ncclRecv(b.recv, n, t, peer, c, s), "ncclRecv");
        ncclCheck(ncclSend(b.send, n, t, peer, c, s), "ncclSend");
      }
      break;
    }
    case Coll::Barrier: break;
  }
}
#endif

}  // namespace bench
