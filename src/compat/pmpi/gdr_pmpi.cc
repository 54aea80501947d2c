// libgdrcoll_mpi.so: a PMPI interposer. Loaded with LD_PRELOAD into an
// unmodified MPI program, it takes MPI_Allreduce, MPI_Reduce, MPI_Bcast,
// MPI_Allgather, MPI_Reduce_scatter_block, MPI_Alltoall and MPI_Barrier.
// A call on device buffers (or on host buffers with GDR_PMPI_HOST=1) whose
// type and op gdrcoll has runs on a gdrcoll communicator cached on the
// MPI_Comm as an attribute (made on first use, freed with the communicator
// or at MPI_Finalize); everything else goes to PMPI_* untouched. Calls keep
// MPI's blocking semantics: device work is synchronized before returning.
//
// Every rank must route the same calls: the decision depends on buffer
// kind, type, op and counts, which MPI already requires to match (a
// program mixing device and host buffers across ranks in one call is not
// supported; docs/compat.md).
#include <mpi.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <set>

#include "core/log.h"
#include "core/memory_kind.h"
#include "core/params.h"
#include "gdrcoll_mpi.h"

#if GDR_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace {

enum Coll { kAllreduce, kReduce, kBcast, kAllgather, kReduceScatterBlock, kAlltoall, kBarrier, kNumColls };
const char* const kCollNames[kNumColls] = {"allreduce", "reduce", "bcast", "allgather", "reduce_scatter_block",
                                           "alltoall", "barrier"};

struct Settings {
  bool enabled = true;
  bool host = false;
};

const Settings& settings() {
  static const Settings s = [] {
    Settings v;
    try {
      v.enabled = gdr::param::getBool("GDR_PMPI");
      v.host = gdr::param::getBool("GDR_PMPI_HOST");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gdrcoll PMPI: %s; the layer is off\n", e.what());
      v.enabled = false;
    }
    GDR_INFO(kInit, "PMPI layer %s (device buffers%s)", v.enabled ? "on" : "off",
             v.host ? " and host buffers" : " only");
    return v;
  }();
  return s;
}

std::array<std::atomic<long>, kNumColls> gRouted{};
std::atomic<long> gPassed{0};

// gdrcoll's own MPI calls (the bootstrap on a duplicate communicator) come
// back through these wrappers: they must go straight to PMPI.
thread_local int tInside = 0;
struct Inside {
  Inside() { ++tInside; }
  ~Inside() { --tInside; }
};

int gKeyval = MPI_KEYVAL_INVALID;
std::mutex gMu;
std::set<MPI_Comm> gCached;  // communicators carrying a gdrcoll communicator

int deleteAttr(MPI_Comm comm, int, void* value, void*) {
  Inside in;
  gdrCommDestroy(static_cast<gdrComm_t>(value));
  std::lock_guard<std::mutex> lk(gMu);
  gCached.erase(comm);
  return MPI_SUCCESS;
}

bool isDevice(const void* p) {
  return p && p != MPI_IN_PLACE && gdr::memoryKind(p) == gdr::MemKind::Device;
}

// Whether buffers of this kind go to gdrcoll: device ones always, host ones
// with GDR_PMPI_HOST=1. A call mixing kinds stays with MPI.
bool routable(const void* a, const void* b) {
  const bool da = isDevice(a), db = isDevice(b);
  const bool ha = a && a != MPI_IN_PLACE && !da, hb = b && b != MPI_IN_PLACE && !db;
  if ((da || db) && !(ha || hb)) return true;
  return !(da || db) && settings().host;
}

bool usableComm(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return false;
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  return !inter;
}

// The gdrcoll communicator cached on comm, made (collectively) on first use.
gdrComm_t gdrFor(MPI_Comm comm) {
  if (gKeyval == MPI_KEYVAL_INVALID) PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, deleteAttr, &gKeyval, nullptr);
  void* value = nullptr;
  int found = 0;
  PMPI_Comm_get_attr(comm, gKeyval, &value, &found);
  if (found) return static_cast<gdrComm_t>(value);
  gdrComm_t g = nullptr;
  if (gdrCommInitMPI(&g, comm) != gdrSuccess) return nullptr;
  PMPI_Comm_set_attr(comm, gKeyval, g);
  std::lock_guard<std::mutex> lk(gMu);
  gCached.insert(comm);
  return g;
}

bool hasCached(MPI_Comm comm) {
  if (gKeyval == MPI_KEYVAL_INVALID) return false;
  void* value = nullptr;
  int found = 0;
  PMPI_Comm_get_attr(comm, gKeyval, &value, &found);
  return found != 0;
}

// Device work was enqueued on the default stream; MPI returns with results in place.
void finishDevice(bool device) {
#if GDR_HAVE_CUDA
  if (device) cudaStreamSynchronize(nullptr);
#else
  (void)device;
#endif
}

// gdrcoll failed after the call was committed to it: report through the
// communicator's MPI error handler, as MPI itself would.
int fail(MPI_Comm comm, gdrComm_t g, const char* fn) {
  GDR_WARN(kColl, "PMPI %s on gdrcoll failed: %s", fn, gdrGetLastError(g));
  PMPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);
  return MPI_ERR_OTHER;
}

// Runs `call` on comm's gdrcoll communicator when the call may go there;
// returns false to send it to PMPI.
template <typename Call>
bool route(Coll which, MPI_Comm comm, bool buffersOk, int* rc, Call call) {
  if (tInside || !settings().enabled || !buffersOk || !usableComm(comm)) return false;
  Inside in;
  gdrComm_t g = gdrFor(comm);
  if (!g) return false;
  const long n = ++gRouted[which];
  if (n == 1) GDR_INFO(kColl, "PMPI: MPI_%s routed to gdrcoll", kCollNames[which]);
  const gdrResult_t r = call(g);
  *rc = r == gdrSuccess ? MPI_SUCCESS : fail(comm, g, kCollNames[which]);
  return true;
}

bool typeOk(MPI_Datatype t) {
  gdrDataType_t g;
  return gdrTypeFromMPI(t, &g) == gdrSuccess;
}
bool opOk(MPI_Op o) {
  gdrRedOp_t g;
  return gdrOpFromMPI(o, &g) == gdrSuccess;
}

int passed(int rc) {
  if (!tInside) ++gPassed;
  return rc;
}

}  // namespace

extern "C" {

int MPI_Allreduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c) {
  int rc;
  if (route(kAllreduce, c, typeOk(t) && opOk(o) && routable(s, r), &rc, [&](gdrComm_t g) {
        gdrResult_t res = gdrMPI_Allreduce(s, r, n, t, o, g, nullptr);
        finishDevice(isDevice(r));
        return res;
      }))
    return rc;
  return passed(PMPI_Allreduce(s, r, n, t, o, c));
}

int MPI_Reduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op o, int root, MPI_Comm c) {
  int rc, me = -1;
  PMPI_Comm_rank(c == MPI_COMM_NULL ? MPI_COMM_SELF : c, &me);
  const void* rr = me == root ? r : nullptr;  // recvbuf is significant at the root only
  if (route(kReduce, c, typeOk(t) && opOk(o) && routable(s, rr), &rc, [&](gdrComm_t g) {
        gdrResult_t res = gdrMPI_Reduce(s, r, n, t, o, root, g, nullptr);
        finishDevice(isDevice(s) || isDevice(rr));
        return res;
      }))
    return rc;
  return passed(PMPI_Reduce(s, r, n, t, o, root, c));
}

int MPI_Bcast(void* b, int n, MPI_Datatype t, int root, MPI_Comm c) {
  int rc;
  if (route(kBcast, c, typeOk(t) && routable(b, nullptr), &rc, [&](gdrComm_t g) {
        gdrResult_t res = gdrMPI_Bcast(b, n, t, root, g, nullptr);
        finishDevice(isDevice(b));
        return res;
      }))
    return rc;
  return passed(PMPI_Bcast(b, n, t, root, c));
}

int MPI_Allgather(const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt, MPI_Comm c) {
  int rc;
  const bool same = s == MPI_IN_PLACE || (st == rt && sn == rn);
  if (route(kAllgather, c, same && typeOk(rt) && routable(s, r), &rc, [&](gdrComm_t g) {
        gdrResult_t res = gdrMPI_Allgather(s, rn, rt, r, g, nullptr);
        finishDevice(isDevice(r));
        return res;
      }))
    return rc;
  return passed(PMPI_Allgather(s, sn, st, r, rn, rt, c));
}

int MPI_Reduce_scatter_block(const void* s, void* r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c) {
  int rc;
  if (route(kReduceScatterBlock, c, typeOk(t) && opOk(o) && routable(s, r), &rc, [&](gdrComm_t g) {
        gdrResult_t res = gdrMPI_Reduce_scatter_block(s, r, n, t, o, g, nullptr);
        finishDevice(isDevice(r));
        return res;
      }))
    return rc;
  return passed(PMPI_Reduce_scatter_block(s, r, n, t, o, c));
}

int MPI_Alltoall(const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt, MPI_Comm c) {
  int rc;
  const bool same = s == MPI_IN_PLACE || (st == rt && sn == rn);
  if (route(kAlltoall, c, same && typeOk(rt) && routable(s, r), &rc, [&](gdrComm_t g) {
        gdrResult_t res = gdrMPI_Alltoall(s, rn, rt, r, g, nullptr);
        finishDevice(isDevice(r));
        return res;
      }))
    return rc;
  return passed(PMPI_Alltoall(s, sn, st, r, rn, rt, c));
}

// A barrier has no buffers: it goes to gdrcoll where host calls are routed,
// or where the communicator already carries a gdrcoll communicator.
int MPI_Barrier(MPI_Comm c) {
  int rc;
  const bool go = settings().host || (usableComm(c) && hasCached(c));
  if (route(kBarrier, c, go, &rc, [&](gdrComm_t g) { return gdrBarrier(g, nullptr); })) return rc;
  return passed(PMPI_Barrier(c));
}

// Frees what is still cached (MPI_COMM_WORLD's and any communicator the
// program never freed) while MPI still works, then reports what was routed.
int MPI_Finalize(void) {
  if (gKeyval != MPI_KEYVAL_INVALID) {
    std::set<MPI_Comm> left;
    {
      std::lock_guard<std::mutex> lk(gMu);
      left = gCached;
    }
    for (MPI_Comm c : left) PMPI_Comm_delete_attr(c, gKeyval);
    PMPI_Comm_free_keyval(&gKeyval);
  }
  long total = 0;
  char text[512];
  int len = 0;
  for (int i = 0; i < kNumColls; ++i) {
    total += gRouted[i];
    len += std::snprintf(text + len, sizeof(text) - len, " %s=%ld", kCollNames[i], gRouted[i].load());
  }
  if (settings().enabled)
    GDR_INFO(kInit, "PMPI summary: routed to gdrcoll %ld calls (%s ), passed to MPI %ld", total, text + 1,
             gPassed.load());
  return PMPI_Finalize();
}

}  // extern "C"
