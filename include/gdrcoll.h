/* gdrcoll: MPI-compatible collective communication for GPUs and host memory.
 *
 * Every entry point returns gdrResult_t. Host buffers complete before the call
 * returns (like MPI); device buffers are stream-ordered (like NCCL). Argument
 * order follows MPI, with a CUDA stream appended (ignored for host buffers,
 * may be NULL). This header needs neither MPI nor CUDA headers. */
#ifndef GDRCOLL_H_
#define GDRCOLL_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GDR_VERSION_MAJOR 0
#define GDR_VERSION_MINOR 1
#define GDR_VERSION_PATCH 0
#define GDR_VERSION_CODE (GDR_VERSION_MAJOR * 10000 + GDR_VERSION_MINOR * 100 + GDR_VERSION_PATCH)

typedef enum {
  gdrSuccess = 0,
  gdrInvalidArgument = 1,  /* a bad pointer, type, op, count or rank */
  gdrInvalidUsage = 2,     /* a call in the wrong state, or mismatched across ranks */
  gdrSystemError = 3,      /* an OS call failed (errno text in the last error) */
  gdrRemoteError = 4,      /* a peer failed, vanished or reported an error */
  gdrTimeout = 5,          /* a wait passed GDR_TIMEOUT_MS */
  gdrNotSupported = 6,     /* the build or the hardware lacks the feature */
  gdrInternalError = 7,    /* a bug in gdrcoll: please report it */
  gdrCudaError = 8,        /* a CUDA call failed */
  gdrInProgress = 9,       /* a non-blocking operation has not finished */
  gdrNumResults = 10
} gdrResult_t;

typedef enum {
  gdrInt8 = 0,
  gdrUint8 = 1,
  gdrInt32 = 2,
  gdrUint32 = 3,
  gdrInt64 = 4,
  gdrUint64 = 5,
  gdrFloat16 = 6,
  gdrBfloat16 = 7,
  gdrFloat32 = 8,
  gdrFloat64 = 9,
  gdrFloat8e4m3 = 10, /* OCP fp8 E4M3 (max 448, no infinities); reduced in fp32, stored saturating */
  gdrFloat8e5m2 = 11, /* OCP fp8 E5M2 (max 57344); reduced in fp32, stored saturating */
  gdrNumTypes = 12
} gdrDataType_t;

/* PreMulSum ops (gdrRedOpCreatePreMulSum) take values from gdrNumOps up;
 * gdrMaxRedOp makes every such value one of the enum's (as NCCL's ncclMaxRedOp). */
typedef enum {
  gdrSum = 0,
  gdrProd = 1,
  gdrMax = 2,
  gdrMin = 3,
  gdrAvg = 4,
  gdrNumOps = 5,
  gdrMaxRedOp = 0x7fffffff
} gdrRedOp_t;

/* Pass as the send buffer for an in-place collective (its value is Open MPI's
 * MPI_IN_PLACE; gdrcoll_mpi.h translates other MPIs' value). Passing the
 * receive buffer as the send buffer is also treated as in-place. */
#define GDR_IN_PLACE ((void*)1)

#define GDR_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[GDR_UNIQUE_ID_BYTES];
} gdrUniqueId;

typedef struct gdrComm* gdrComm_t;
/* Same type as cudaStream_t, without including the CUDA headers. */
typedef struct CUstream_st* gdrStream_t;

/* ---- communicators ---- */

/* gdrCommInitMPI(comm, MPI_Comm) is in gdrcoll_mpi.h (built on
 * gdrCommInitBootstrap below, so this library needs no MPI). */
/* Unique-id rendezvous over TCP: rank 0 (or any one process) calls
 * gdrGetUniqueId, shares the id, and every rank calls gdrCommInitRank. */
gdrResult_t gdrGetUniqueId(gdrUniqueId* uniqueId);
gdrResult_t gdrCommInitRank(gdrComm_t* comm, int nranks, gdrUniqueId uniqueId, int rank);
/* Every rank of a job launched by mpirun or srun --mpi=pmix (PMIx), torchrun
 * (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE), Slurm (SLURM_PROCID,
 * SLURM_NTASKS with GDR_COMM_ID) or by hand (GDR_COMM_ID=host:port with RANK
 * and WORLD_SIZE) calls this, without MPI: the bootstrap is picked from the
 * environment in that order (GDR_BOOTSTRAP forces one) and logged with the
 * reason (GDR_DEBUG=INFO). For the TCP ones rank 0 serves the rendezvous
 * and the key comes from GDR_AUTH_KEY_FILE; under PMIx, from PMIx. Not
 * inside gdrGroupStart/gdrGroupEnd. */
gdrResult_t gdrCommInitFromEnv(gdrComm_t* comm);
gdrResult_t gdrCommDestroy(gdrComm_t comm);

/* A bootstrap the caller already has (its MPI, PMIx, ...): gdrcoll calls
 * allgather and barrier only inside gdrCommInitBootstrap, on the calling
 * thread, to exchange set-up data (and rank 0's job secret, so the channel
 * should be private to the job). allgather: `data` holds `size` pieces of
 * `bytes`, this rank's at rank * bytes; fill in every piece. Both return 0
 * on success, else a code that errorString (may be NULL) turns into words.
 * A non-NULL `error` makes the init fail with that text (an adapter that
 * could not start, e.g. MPI not initialized). Collective over the `size`
 * ranks; also inside a group, it connects at once. */
typedef struct {
  int rank;
  int size;
  void* ctx;
  int (*allgather)(void* ctx, void* data, size_t bytes);
  int (*barrier)(void* ctx);
  void (*errorString)(void* ctx, int code, char* text, size_t len);
  const char* name;  /* for logs, e.g. "mpi" */
  const char* error; /* NULL unless the adapter failed */
} gdrBootstrap_t;
gdrResult_t gdrCommInitBootstrap(gdrComm_t* comm, const gdrBootstrap_t* bootstrap);
/* Always returns: fails pending operations and frees the communicator.
 *
 * Threads. Any thread may make any call, but one communicator runs one
 * operation at a time: collectives, send/recv and groups on it come from one
 * thread at a time (or are serialised by the program). The exceptions, safe
 * from any thread at any moment, also while another thread waits in a call
 * on the same communicator: gdrCommAbort, gdrCommRevoke, gdrCommGetAsyncError,
 * gdrGetLastError, gdrCommRank and gdrCommSize. gdrCommAbort makes that
 * waiting call return gdrRemoteError at once (the peers are told), and the
 * memory is released when the last call using the communicator returns; the
 * handle is invalid as soon as gdrCommAbort returns. gdrCommDestroy while
 * another thread uses the communicator is a program error, but it does not
 * free memory under that thread either. */
gdrResult_t gdrCommAbort(gdrComm_t comm);
gdrResult_t gdrCommRank(gdrComm_t comm, int* rank);
gdrResult_t gdrCommSize(gdrComm_t comm, int* size);
/* gdrSuccess while healthy; the error that broke the communicator otherwise. */
gdrResult_t gdrCommGetAsyncError(gdrComm_t comm, gdrResult_t* asyncError);

/* ---- fault tolerance (the ULFM shape: MPIX_Comm_revoke / MPIX_Comm_shrink) ----
 *
 * gdrCommRevoke: every pending and later operation on the communicator, on
 * every rank, fails fast with gdrRemoteError and a text that says it was
 * revoked (and by which rank). This rank's waiting call returns at once; the
 * peers are told over the connections (a peer waiting in a call returns as
 * the notice arrives; a peer between calls fails at its next call that
 * waits). Threads: safe from any thread, also while another thread waits in
 * a call on the communicator (a watchdog), like gdrCommAbort; unlike abort,
 * the handle stays valid for gdrCommShrink, gdrCommGetAsyncError and
 * gdrCommDestroy. Revoking twice, or a communicator that has failed already,
 * is harmless.
 *
 * gdrCommShrink: collective over the ranks still alive. They agree on who
 * they are (a bounded agreement over fresh TCP connections, independent of
 * the bootstrap and of the broken endpoints, that survives a rank dying
 * during it) and build a new communicator of those ranks, numbered in the
 * old rank order, with new keys and new connections. The old communicator
 * is revoked first (so a peer still waiting in it comes out) and must still
 * be destroyed. Ranks in excludeRanks (NULL if excludeCount is 0; the same
 * list on every rank, as ncclCommShrink requires) are left out even if alive
 * and should not call; the failed ones are found without being named. Every
 * wait is bounded by GDR_TIMEOUT_MS: a rank that stops answering is left
 * out. A rank that the others left out gets gdrRemoteError and *newcomm ==
 * NULL. Threads: the thread that drives the communicator calls it, once per
 * rank, with no other call on the communicator in progress. Not inside
 * gdrGroupStart/gdrGroupEnd. */
gdrResult_t gdrCommRevoke(gdrComm_t comm);
gdrResult_t gdrCommShrink(gdrComm_t comm, const int* excludeRanks, int excludeCount,
                          gdrComm_t* newcomm);
const char* gdrGetErrorString(gdrResult_t result);
/* The text of the last error seen on this communicator (or, for comm == NULL,
 * by this thread outside any communicator). Never NULL. */
const char* gdrGetLastError(gdrComm_t comm);
gdrResult_t gdrGetVersion(int* version);

/* ---- collectives ---- */

gdrResult_t gdrAllReduce(const void* sendbuf, void* recvbuf, size_t count, gdrDataType_t datatype,
                         gdrRedOp_t op, gdrComm_t comm, gdrStream_t stream);
gdrResult_t gdrBroadcast(void* buffer, size_t count, gdrDataType_t datatype, int root,
                         gdrComm_t comm, gdrStream_t stream);
/* Out of place (NCCL's ncclBroadcast): the root's sendbuf lands in recvbuf on
 * every rank, the root's own recvbuf included; sendbuf matters on the root
 * only (sendbuf == recvbuf or GDR_IN_PLACE: gdrBroadcast). Device buffers of
 * one host read sendbuf once: the root's copy is part of the same kernel. */
gdrResult_t gdrBroadcastFrom(const void* sendbuf, void* recvbuf, size_t count,
                             gdrDataType_t datatype, int root, gdrComm_t comm, gdrStream_t stream);
/* recvbuf matters on the root only. */
gdrResult_t gdrReduce(const void* sendbuf, void* recvbuf, size_t count, gdrDataType_t datatype,
                      gdrRedOp_t op, int root, gdrComm_t comm, gdrStream_t stream);
/* recvbuf holds size * sendcount elements; rank r's block lands at r * sendcount.
 * In-place: sendbuf == GDR_IN_PLACE and the rank's block is already in recvbuf
 * at r * sendcount. sendbuf == recvbuf reads the block from recvbuf's start
 * (where a sendbuf would hold it) and runs in place. */
gdrResult_t gdrAllGather(const void* sendbuf, size_t sendcount, void* recvbuf,
                         gdrDataType_t datatype, gdrComm_t comm, gdrStream_t stream);
/* sendbuf holds size * recvcount elements (MPI_Reduce_scatter_block). In-place:
 * sendbuf == GDR_IN_PLACE, the input is in recvbuf (size * recvcount elements)
 * and the result lands at its start. */
gdrResult_t gdrReduceScatter(const void* sendbuf, void* recvbuf, size_t recvcount,
                             gdrDataType_t datatype, gdrRedOp_t op, gdrComm_t comm,
                             gdrStream_t stream);
/* Block r of sendbuf (sendcount elements) goes to rank r. In-place allowed. */
gdrResult_t gdrAllToAll(const void* sendbuf, size_t sendcount, void* recvbuf,
                        gdrDataType_t datatype, gdrComm_t comm, gdrStream_t stream);
/* Counts and displacements in elements, one per rank. */
gdrResult_t gdrAllToAllv(const void* sendbuf, const size_t* sendcounts, const size_t* sdispls,
                         void* recvbuf, const size_t* recvcounts, const size_t* rdispls,
                         gdrDataType_t datatype, gdrComm_t comm, gdrStream_t stream);
gdrResult_t gdrBarrier(gdrComm_t comm, gdrStream_t stream);

/* PreMulSum ops (as NCCL's ncclRedOpCreatePreMulSum): an op made on a
 * communicator for one datatype; gdrAllReduce, gdrReduce and gdrReduceScatter
 * with it sum each rank's input multiplied by the scalar (one element of the
 * datatype). gdrScalarHostImmediate: the scalar's value is taken now;
 * gdrScalarDevice: `scalar` is read by each call when it runs (a call queued
 * in a group: at gdrGroupEnd), stream-ordered when it is device memory. Both
 * functions run at once, inside a group too.
 * gdrRedOpDestroy frees the op; calls already made with it are unaffected. */
/* gdrScalarResidenceMax keeps the enum 32 bits wide, so that a wrong value a
 * program passes is still one of the type's values (and refused as such). */
typedef enum {
  gdrScalarDevice = 0,
  gdrScalarHostImmediate = 1,
  gdrScalarResidenceMax = 0x7fffffff
} gdrScalarResidence_t;
gdrResult_t gdrRedOpCreatePreMulSum(gdrRedOp_t* op, void* scalar, gdrDataType_t datatype,
                                    gdrScalarResidence_t residence, gdrComm_t comm);
gdrResult_t gdrRedOpDestroy(gdrRedOp_t op, gdrComm_t comm);

/* ---- point to point ---- */

/* Messages between two ranks match in order. Outside a group a send may wait
 * for its receive (like MPI_Send); inside gdrGroupStart/gdrGroupEnd every
 * call is queued and gdrGroupEnd runs them together, so any pattern of sends
 * and receives completes. */
gdrResult_t gdrSend(const void* sendbuf, size_t count, gdrDataType_t datatype, int peer,
                    gdrComm_t comm, gdrStream_t stream);
gdrResult_t gdrRecv(void* recvbuf, size_t count, gdrDataType_t datatype, int peer,
                    gdrComm_t comm, gdrStream_t stream);
/* Groups also let one thread drive several communicators (one per GPU, as
 * NCCL programs do). Inside a group gdrCommInitRank returns its handle at
 * once and connects at gdrGroupEnd (all pending inits concurrently), and
 * collectives are queued too; gdrGroupEnd runs each communicator's share on
 * its own worker thread, e.g. group { for g: gdrAllReduce(.., comm[g],
 * stream[g]) }. The CUDA device current at a communicator's init is its
 * device: its work runs with that device set, whatever the caller's current
 * device (which is left as it was). gdrGroupEnd returns when host buffers are
 * done and device work is enqueued, with the first error; a failed init
 * leaves that communicator in the error state (destroy it), and a
 * gdrCommInitRank that fails inside a group fails the group's other pending
 * inits rather than letting them wait for a rank that will never come.
 * Work queued on a communicator in the group that creates it runs after it
 * connects; any other use before that gdrGroupEnd is gdrInvalidUsage. */
gdrResult_t gdrGroupStart(void);
gdrResult_t gdrGroupEnd(void);

/* ---- configuration ---- */

/* Visits every GDR_* variable: name, type, default, current value, description.
 * Used by gdr-info; the visitor returns non-zero to stop. */
typedef int (*gdrParamVisitor_t)(const char* name, const char* type, const char* defaultValue,
                                 const char* currentValue, const char* description, void* arg);
gdrResult_t gdrParamVisit(gdrParamVisitor_t visitor, void* arg);

/* ---- memory registration ---- */

/* Registering a buffer that is used again and again (host or device) lets the
 * network transport keep its NIC registration between calls; unregistered
 * buffers are registered for each operation and released after it, since the
 * program may free them at any time. The buffer must stay allocated until
 * gdrCommDeregister. Registering is optional and never changes results. */
typedef struct gdrRegHandle* gdrRegHandle_t;
gdrResult_t gdrCommRegister(gdrComm_t comm, void* buffer, size_t size, gdrRegHandle_t* handle);
/* Drops the registration (and any cached NIC registration overlapping it);
 * the handle is invalid afterwards. */
gdrResult_t gdrCommDeregister(gdrComm_t comm, gdrRegHandle_t handle);
/* Allocates size bytes: device memory (cudaMalloc, on this thread's current
 * device) when a CUDA device is visible, page-aligned host memory otherwise. Such buffers keep their NIC
 * registrations cached until gdrMemFree, which drops them. */
gdrResult_t gdrMemAlloc(void** ptr, size_t size);
gdrResult_t gdrMemFree(void* ptr);

/* ---- windows: buffers the peers' kernels reach directly ---- */

/* A window is a buffer every rank of the communicator registers together
 * (every rank calls it with the same flags, in the same order as its other
 * window registrations, each with a buffer of its own: collective with
 * GDR_WIN_SYMMETRIC, as NCCL's ncclCommWindowRegister is). It is registered
 * as gdrCommRegister registers. With GDR_WIN_SYMMETRIC, and
 * where the ranks share a host and the buffers are device memory that CUDA
 * IPC can export (cudaMalloc, not pools or managed memory), every rank maps
 * every other rank's buffer, and an all-reduce whose input and output lie in
 * windows at the same offset on every rank (NCCL's symmetric contract; every
 * rank's buffers, or none) reads and writes the peers' buffers directly
 * instead of copying through staging. Results never change. */
typedef struct gdrWindow* gdrWindow_t;
#define GDR_WIN_DEFAULT 0x0
#define GDR_WIN_SYMMETRIC 0x1
gdrResult_t gdrCommWindowRegister(gdrComm_t comm, void* buffer, size_t size, int flags,
                                  gdrWindow_t* win);
/* Every rank deregisters its window (the same ones, in the same order, once
 * the work that used them has finished; then the buffer may be freed). A
 * window deregistered twice, or another communicator's, is an error. */
gdrResult_t gdrCommWindowDeregister(gdrComm_t comm, gdrWindow_t win);

#ifdef __cplusplus
}
#endif
#endif /* GDRCOLL_H_ */
