#include "bench_ops.h"

#include <vector>

#include "gdrcoll_mpi.h"

namespace bench {

gdrResult_t runGdr(const Options& o, const Plan& p, const Bufs& b, gdrComm_t comm, int rank) {
  switch (o.coll) {
    case Coll::AllReduce: return gdrAllReduce(b.send, b.recv, p.count, o.type, o.op, comm, nullptr);
    case Coll::AllGather: return gdrAllGather(b.send, p.count, b.recv, o.type, comm, nullptr);
    case Coll::ReduceScatter: return gdrReduceScatter(b.send, b.recv, p.count, o.type, o.op, comm, nullptr);
    case Coll::Bcast: return gdrBroadcast(b.recv, p.count, o.type, o.root, comm, nullptr);
    case Coll::Reduce: return gdrReduce(b.send, b.recv, p.count, o.type, o.op, o.root, comm, nullptr);
    case Coll::AllToAll: return gdrAllToAll(b.send, p.count, b.recv, o.type, comm, nullptr);
    case Coll::Barrier: return gdrBarrier(comm, nullptr);
    case Coll::SendRecv: {
      // Ping-pong between rank pairs (0,1), (2,3), ...; an odd last rank idles.
      int size = 0;
      gdrCommSize(comm, &size);
      int peer = rank ^ 1;
      if (peer >= size) return gdrSuccess;
      gdrResult_t r;
      if (rank % 2 == 0) {
        if ((r = gdrSend(b.send, p.count, o.type, peer, comm, nullptr)) != gdrSuccess) return r;
        return gdrRecv(b.recv, p.count, o.type, peer, comm, nullptr);
      }
      if ((r = gdrRecv(b.recv, p.count, o.type, peer, comm, nullptr)) != gdrSuccess) return r;
      return gdrSend(b.send, p.count, o.type, peer, comm, nullptr);
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

}  // namespace bench
