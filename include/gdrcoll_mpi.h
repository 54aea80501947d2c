/* gdrcoll for MPI programs: communicator creation from an MPI_Comm, and the
 * mapping of MPI datatypes and ops to gdrcoll's, so that
 *   MPI_Allreduce(s, r, n, MPI_FLOAT, MPI_SUM, c)
 * becomes
 *   gdrMPI_Allreduce(s, r, n, MPI_FLOAT, MPI_SUM, g, stream)
 * with g from gdrCommInitMPI(&g, c). */
#ifndef GDRCOLL_MPI_H_
#define GDRCOLL_MPI_H_

#include <mpi.h>
#include <stdint.h>
#include <string.h>

#include "gdrcoll.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The MPI bootstrap lives here, compiled into the MPI program, so that
 * libgdrcoll itself needs no MPI (and works with any MPI's ABI). It calls
 * the PMPI_ names, so an MPI interposer never sees set-up traffic. */
static inline int gdrMPIBootAllgather_(void* ctx, void* data, size_t bytes) {
  if (bytes > (size_t)INT32_MAX) return MPI_ERR_COUNT;
  return PMPI_Allgather(MPI_IN_PLACE, 0, MPI_BYTE, data, (int)bytes, MPI_BYTE, *(MPI_Comm*)ctx);
}

static inline int gdrMPIBootBarrier_(void* ctx) { return PMPI_Barrier(*(MPI_Comm*)ctx); }

static inline void gdrMPIBootError_(void* ctx, int code, char* text, size_t len) {
  char buf[MPI_MAX_ERROR_STRING];
  int n = 0;
  (void)ctx;
  if (PMPI_Error_string(code, buf, &n) != MPI_SUCCESS || n < 0) n = 0;
  if ((size_t)n >= len) n = (int)len - 1;
  memcpy(text, buf, (size_t)n);
  text[n] = '\0';
}

/* Collective over mpiComm; the bootstrap works on a duplicate of it, so the
 * caller's communicator carries no gdrcoll traffic. */
static inline gdrResult_t gdrCommInitMPI(gdrComm_t* comm, MPI_Comm mpiComm) {
  gdrBootstrap_t b;
  MPI_Comm dup = MPI_COMM_NULL;
  int inited = 0, finalized = 0;
  gdrResult_t r;
  memset(&b, 0, sizeof(b));
  b.name = "mpi";
  b.size = 1;
  b.allgather = gdrMPIBootAllgather_;
  b.barrier = gdrMPIBootBarrier_;
  b.errorString = gdrMPIBootError_;
  PMPI_Initialized(&inited);
  PMPI_Finalized(&finalized);
  if (!inited || finalized)
    b.error = "gdrCommInitMPI called before MPI_Init or after MPI_Finalize";
  else if (mpiComm == MPI_COMM_NULL)
    b.error = "gdrCommInitMPI: the MPI communicator is MPI_COMM_NULL";
  else if (PMPI_Comm_dup(mpiComm, &dup) != MPI_SUCCESS)
    b.error = "gdrCommInitMPI: MPI_Comm_dup failed";
  if (!b.error) {
    /* Errors come back as codes, reported by gdrcoll, instead of aborting. */
    PMPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    PMPI_Comm_rank(dup, &b.rank);
    PMPI_Comm_size(dup, &b.size);
    b.ctx = &dup;
  }
  r = gdrCommInitBootstrap(comm, &b);
  if (dup != MPI_COMM_NULL) PMPI_Comm_free(&dup);
  return r;
}

/* Returns gdrSuccess and sets *out when the MPI datatype has a gdrcoll twin. */
static inline gdrResult_t gdrTypeFromMPI(MPI_Datatype t, gdrDataType_t* out) {
  if (t == MPI_INT8_T || t == MPI_SIGNED_CHAR || t == MPI_CHAR) *out = gdrInt8;
  else if (t == MPI_UINT8_T || t == MPI_UNSIGNED_CHAR || t == MPI_BYTE) *out = gdrUint8;
  else if (t == MPI_INT32_T || t == MPI_INT) *out = gdrInt32;
  else if (t == MPI_UINT32_T || t == MPI_UNSIGNED) *out = gdrUint32;
  else if (t == MPI_INT64_T || t == MPI_LONG_LONG || (sizeof(long) == 8 && t == MPI_LONG)) *out = gdrInt64;
  else if (t == MPI_UINT64_T || t == MPI_UNSIGNED_LONG_LONG ||
           (sizeof(unsigned long) == 8 && t == MPI_UNSIGNED_LONG)) *out = gdrUint64;
  else if (t == MPI_FLOAT) *out = gdrFloat32;
  else if (t == MPI_DOUBLE) *out = gdrFloat64;
  else return gdrInvalidArgument;
  return gdrSuccess;
}

/* MPI has no avg; gdrAvg is reachable through the native API only. */
static inline gdrResult_t gdrOpFromMPI(MPI_Op op, gdrRedOp_t* out) {
  if (op == MPI_SUM) *out = gdrSum;
  else if (op == MPI_PROD) *out = gdrProd;
  else if (op == MPI_MAX) *out = gdrMax;
  else if (op == MPI_MIN) *out = gdrMin;
  else return gdrInvalidArgument;
  return gdrSuccess;
}

/* The MPI twins of gdrcoll's types and ops; MPI_DATATYPE_NULL / MPI_OP_NULL
 * where MPI has none (fp16, bf16, fp8, avg): callers refuse those. */
static inline MPI_Datatype gdrTypeToMPI(gdrDataType_t t) {
  switch (t) {
    case gdrInt8: return MPI_INT8_T;
    case gdrUint8: return MPI_UINT8_T;
    case gdrInt32: return MPI_INT32_T;
    case gdrUint32: return MPI_UINT32_T;
    case gdrInt64: return MPI_INT64_T;
    case gdrUint64: return MPI_UINT64_T;
    case gdrFloat32: return MPI_FLOAT;
    case gdrFloat64: return MPI_DOUBLE;
    default: return MPI_DATATYPE_NULL;
  }
}

static inline MPI_Op gdrOpToMPI(gdrRedOp_t op) {
  switch (op) {
    case gdrSum: return MPI_SUM;
    case gdrProd: return MPI_PROD;
    case gdrMax: return MPI_MAX;
    case gdrMin: return MPI_MIN;
    default: return MPI_OP_NULL;
  }
}

static inline const void* gdrInPlaceFromMPI(const void* buf) {
  return buf == MPI_IN_PLACE ? GDR_IN_PLACE : buf;
}

static inline gdrResult_t gdrMPI_Allreduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op o,
                                           gdrComm_t c, gdrStream_t stream) {
  gdrDataType_t gt;
  gdrRedOp_t go;
  if (n < 0 || gdrTypeFromMPI(t, &gt) != gdrSuccess || gdrOpFromMPI(o, &go) != gdrSuccess)
    return gdrInvalidArgument;
  return gdrAllReduce(gdrInPlaceFromMPI(s), r, (size_t)n, gt, go, c, stream);
}

static inline gdrResult_t gdrMPI_Bcast(void* b, int n, MPI_Datatype t, int root, gdrComm_t c,
                                       gdrStream_t stream) {
  gdrDataType_t gt;
  if (n < 0 || gdrTypeFromMPI(t, &gt) != gdrSuccess) return gdrInvalidArgument;
  return gdrBroadcast(b, (size_t)n, gt, root, c, stream);
}

static inline gdrResult_t gdrMPI_Reduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op o,
                                        int root, gdrComm_t c, gdrStream_t stream) {
  gdrDataType_t gt;
  gdrRedOp_t go;
  if (n < 0 || gdrTypeFromMPI(t, &gt) != gdrSuccess || gdrOpFromMPI(o, &go) != gdrSuccess)
    return gdrInvalidArgument;
  return gdrReduce(gdrInPlaceFromMPI(s), r, (size_t)n, gt, go, root, c, stream);
}

static inline gdrResult_t gdrMPI_Allgather(const void* s, int n, MPI_Datatype t, void* r,
                                           gdrComm_t c, gdrStream_t stream) {
  gdrDataType_t gt;
  if (n < 0 || gdrTypeFromMPI(t, &gt) != gdrSuccess) return gdrInvalidArgument;
  return gdrAllGather(gdrInPlaceFromMPI(s), (size_t)n, r, gt, c, stream);
}

static inline gdrResult_t gdrMPI_Reduce_scatter_block(const void* s, void* r, int n,
                                                      MPI_Datatype t, MPI_Op o, gdrComm_t c,
                                                      gdrStream_t stream) {
  gdrDataType_t gt;
  gdrRedOp_t go;
  if (n < 0 || gdrTypeFromMPI(t, &gt) != gdrSuccess || gdrOpFromMPI(o, &go) != gdrSuccess)
    return gdrInvalidArgument;
  return gdrReduceScatter(gdrInPlaceFromMPI(s), r, (size_t)n, gt, go, c, stream);
}

static inline gdrResult_t gdrMPI_Alltoall(const void* s, int n, MPI_Datatype t, void* r,
                                          gdrComm_t c, gdrStream_t stream) {
  gdrDataType_t gt;
  if (n < 0 || gdrTypeFromMPI(t, &gt) != gdrSuccess) return gdrInvalidArgument;
  return gdrAllToAll(gdrInPlaceFromMPI(s), (size_t)n, r, gt, c, stream);
}

#ifdef __cplusplus
}
#endif
#endif /* GDRCOLL_MPI_H_ */
