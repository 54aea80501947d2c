// Communicators of the NCCL-compatible API: creation (blocking, non-blocking,
// several per process, split), teardown, queries, and the error ladder.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "compat/nccl/nccl_compat.h"
#include "compat/nccl/nccl_group.h"
#include "core/datatype.h"
#include "core/lib_thread.h"
#include "core/log.h"
#include "core/params.h"

#if GDR_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace gdr::nccl {

namespace {

thread_local std::string tLastError;

// NCCL_DEBUG_SUBSYS names -> GDR_DEBUG_SUBSYS names (unknown ones dropped).
std::string mapSubsys(const std::string& s) {
  static const struct {
    const char* nccl;
    const char* gdr;
  } kMap[] = {{"INIT", "INIT"},   {"BOOTSTRAP", "BOOT"}, {"NET", "NET"}, {"SHM", "SHM"},
              {"GRAPH", "TOPO"},  {"COLL", "COLL"},      {"P2P", "P2P"}, {"ALL", "ALL"},
              {"ENV", "INIT"},    {"ALLOC", "INIT"}};
  std::string out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    std::string tok = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (!tok.empty() && tok[0] == '^') tok.erase(0, 1);  // NCCL's exclusion syntax: treat as ALL
    for (auto& m : kMap)
      if (!strcasecmp(tok.c_str(), m.nccl) && out.find(m.gdr) == std::string::npos)
        out += (out.empty() ? "" : ",") + std::string(m.gdr);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out.empty() ? "ALL" : out;
}

// NCCL_DEBUG levels -> GDR_DEBUG levels. VERSION prints the banner only.
const char* mapLevel(const std::string& s) {
  if (!strcasecmp(s.c_str(), "INFO")) return "INFO";
  if (!strcasecmp(s.c_str(), "TRACE")) return "TRACE";
  if (!strcasecmp(s.c_str(), "NONE")) return "NONE";
  return "WARN";  // WARN, VERSION, ABORT and anything else
}

void mapEnvironment() {
  const std::string level = param::getString("NCCL_DEBUG");
  const std::string subsys = param::getString("NCCL_DEBUG_SUBSYS");
  const std::string file = param::getString("NCCL_DEBUG_FILE");
  log::setDefaults(level.empty() ? "" : mapLevel(level), subsys.empty() ? "" : mapSubsys(subsys), file);
  int gdrVersion = 0;
  gdrGetVersion(&gdrVersion);
  if (!strcasecmp(level.c_str(), "VERSION"))
    std::fprintf(stderr, "gdrcoll %d.%d.%d providing the NCCL %d.%d.%d API\n", gdrVersion / 10000,
                 gdrVersion / 100 % 100, gdrVersion % 100, NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
  GDR_INFO(kInit, "this is gdrcoll %d.%d.%d providing the NCCL %d.%d.%d API (libnccl.so.2 compat), not NVIDIA NCCL",
           gdrVersion / 10000, gdrVersion / 100 % 100, gdrVersion % 100, NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
}

int currentDevice() {
#if GDR_HAVE_CUDA
  int n = 0, d = -1;
  if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0 && cudaGetDevice(&d) == cudaSuccess) return d;
  cudaGetLastError();
#endif
  return -1;
}

// Reads the options gdrcoll honours from a config of any size (a program
// built against an older or newer header passes its own layout).
void applyConfig(Comm& c, const ncclConfig_t* config) {
  if (!config) return;
  GDR_CHECK_ARG(config->magic == 0xcafebeef,
                "ncclConfig_t was not initialized with NCCL_CONFIG_INITIALIZER (magic 0x%x)", config->magic);
  auto covers = [&](size_t end) { return config->size >= end; };
  if (covers(offsetof(ncclConfig_t, blocking) + sizeof(int)) && config->blocking != NCCL_CONFIG_UNDEF_INT)
    c.blocking = config->blocking != 0;
  if (covers(offsetof(ncclConfig_t, commName) + sizeof(char*)) && config->commName)
    c.name = config->commName;
}

// The init itself: the gdr communicator, then the record of who we are.
void runInit(Comm* c, gdrUniqueId id) {
  log::setContext(c->rank, c->cudaDev);
#if GDR_HAVE_CUDA
  if (c->cudaDev >= 0) cudaSetDevice(c->cudaDev);
#endif
  gdrComm_t g = nullptr;
  gdrResult_t r = gdrCommInitRank(&g, c->nranks, id, c->rank);
  std::lock_guard<std::mutex> lk(c->mu);
  if (r != gdrSuccess) c->lastError = std::string("ncclCommInitRank: ") + gdrGetLastError(nullptr);
  c->gdr = g;
  c->initState = fromGdr(r);
  GDR_INFO(kInit, "NCCL comm %p%s%s rank %d of %d (device %d) %s", static_cast<void*>(c),
           c->name.empty() ? "" : " ", c->name.c_str(), c->rank, c->nranks, c->cudaDev,
           r == gdrSuccess ? "ready" : "failed");
}

}  // namespace

void compatInit() {
  static std::once_flag once;
  std::call_once(once, mapEnvironment);
}

void setThreadLastError(const std::string& s) { tLastError = s; }
const char* threadLastError() { return tLastError.c_str(); }

ncclResult_t recordError(const char* fn, ncclComm_t comm, ncclResult_t code, const std::string& text,
                         bool alreadyLogged) {
  std::string msg = text.rfind(fn, 0) == 0 ? text : std::string(fn) + ": " + text;
  if (!alreadyLogged) GDR_WARN(kInit, "%s", msg.c_str());
  setThreadLastError(msg);
  if (comm && comm->magic == kCommMagic) {
    std::lock_guard<std::mutex> lk(comm->mu);
    comm->lastError = msg;
  }
  return code;
}

Comm& checkComm(ncclComm_t c) {
  GDR_CHECK_ARG(c, "comm is NULL");
  GDR_CHECK_ARG(c->magic == kCommMagic, "comm %p is not a live NCCL communicator (destroyed?)", static_cast<void*>(c));
  return *c;
}

Comm& readyComm(ncclComm_t c) {
  Comm& comm = checkComm(c);
  if (!comm.initJoined.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lk(comm.threadMu);
    if (comm.initThread.joinable()) comm.initThread.join();
    comm.initJoined.store(true, std::memory_order_release);
  }
  const int st = comm.initState.load();
  if (st != ncclSuccess) {
    std::lock_guard<std::mutex> lk(comm.mu);
    throw InvalidUsage("the communicator's initialization failed: " + comm.lastError);
  }
  return comm;
}

ncclResult_t fromGdr(gdrResult_t r) {
  switch (r) {
    case gdrSuccess: return ncclSuccess;
    case gdrInvalidArgument: return ncclInvalidArgument;
    case gdrInvalidUsage: return ncclInvalidUsage;
    case gdrSystemError: return ncclSystemError;
    case gdrRemoteError: return ncclRemoteError;
    case gdrTimeout: return ncclRemoteError;  // a peer that never answered
    case gdrNotSupported: return ncclInvalidUsage;
    case gdrCudaError: return ncclUnhandledCudaError;
    case gdrInProgress: return ncclInProgress;
    default: return ncclInternalError;
  }
}

gdrResult_t toGdr(ncclResult_t r) {
  switch (r) {
    case ncclSuccess:
      return gdrSuccess;
    case ncclInvalidArgument:
      return gdrInvalidArgument;
    case ncclInvalidUsage:
      return gdrInvalidUsage;
    case ncclSystemError:
      return gdrSystemError;
    case ncclRemoteError:
      return gdrRemoteError;
    case ncclUnhandledCudaError:
      return gdrCudaError;
    case ncclInProgress:
      return gdrInProgress;
    default:
      return gdrInternalError;
  }
}

void checkGdr(gdrResult_t r, gdrComm_t g) {
  if (r != gdrSuccess) throw GdrCallError(r, gdrGetLastError(g));
}

gdrDataType_t toGdrType(ncclDataType_t t) {
  int v;
  std::memcpy(&v, &t, sizeof(v));  // any int may arrive: do not load it as the enum
  switch (v) {
    case ncclInt8: return gdrInt8;
    case ncclUint8: return gdrUint8;
    case ncclInt32: return gdrInt32;
    case ncclUint32: return gdrUint32;
    case ncclInt64: return gdrInt64;
    case ncclUint64: return gdrUint64;
    case ncclFloat16: return gdrFloat16;
    case ncclFloat32: return gdrFloat32;
    case ncclFloat64: return gdrFloat64;
    case ncclBfloat16: return gdrBfloat16;
    case ncclFloat8e4m3: return gdrFloat8e4m3;
    case ncclFloat8e5m2: return gdrFloat8e5m2;
    default: throw InvalidArgument(strprintf("datatype %d is not an ncclDataType_t", v));
  }
}

size_t typeBytes(ncclDataType_t t) { return gdr::typeSize(toGdrType(t)); }

}  // namespace gdr::nccl

using namespace gdr::nccl;
using gdr::InvalidArgument;
using gdr::InvalidUsage;
using gdr::strprintf;

namespace {

// Creates the wrapper; the gdr communicator comes from runInit, now or (for
// a non-blocking config, or inside a group) on a thread of its own.
ncclResult_t initRank(ncclComm_t* out, int nranks, ncclUniqueId commId, int rank, const ncclConfig_t* config,
                      int device) {
  GDR_CHECK_ARG(out, "comm (the output pointer) is NULL");
  *out = nullptr;
  GDR_CHECK_ARG(nranks > 0, "nranks must be positive, got %d", nranks);
  GDR_CHECK_ARG(rank >= 0 && rank < nranks, "rank %d is outside [0, %d)", rank, nranks);
  auto c = std::make_unique<Comm>();
  c->rank = rank;
  c->nranks = nranks;
  c->cudaDev = device >= -1 ? device : currentDevice();
  applyConfig(*c, config);
  gdrUniqueId id;
  static_assert(sizeof(id.internal) == sizeof(commId.internal), "unique ids differ in size");
  std::memcpy(id.internal, commId.internal, sizeof(id.internal));
  Comm* comm = c.release();
  *out = comm;
  if (comm->blocking && !groupActive()) {
    runInit(comm, id);
    if (comm->initState != ncclSuccess) {
      std::string text = comm->lastError;
      ncclResult_t code = static_cast<ncclResult_t>(comm->initState.load());
      comm->magic = 0;
      delete comm;
      *out = nullptr;
      return recordError("ncclCommInitRank", nullptr, code, text, true);
    }
    return ncclSuccess;
  }
  // Non-blocking, or several communicators created by one thread inside a
  // group: the rendezvous must not wait for ranks this thread has yet to create.
  comm->initState = ncclInProgress;
  comm->initThread = gdr::libThread("nccl-init", [comm, id] { runInit(comm, id); });
  if (groupActive()) groupNoteInit(comm);
  return comm->blocking ? ncclSuccess : ncclInProgress;
}

}  // namespace

extern "C" {

ncclResult_t ncclGetVersion(int* version) {
  return guard("ncclGetVersion", nullptr, [&] {
    GDR_CHECK_ARG(version, "version is NULL");
    *version = NCCL_VERSION_CODE;
    return ncclSuccess;
  });
}

const char* ncclGetErrorString(ncclResult_t result) {
  switch (static_cast<int>(result)) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError: return "internal error in gdrcoll - please report this issue";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
  }
}

const char* ncclGetLastError(ncclComm_t comm) {
  thread_local std::string text;
  if (comm && comm->magic == kCommMagic) {
    std::lock_guard<std::mutex> lk(comm->mu);
    text = comm->lastError;
    return text.c_str();
  }
  return threadLastError();
}

ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  return guard("ncclGetUniqueId", nullptr, [&] {
    GDR_CHECK_ARG(uniqueId, "uniqueId is NULL");
    gdrUniqueId id;
    // NCCL_COMM_ID=host:port: the id names that address and rank 0 serves the
    // rendezvous there (only the user's ids: split communicators keep their own).
    const std::string at = gdr::param::getString("NCCL_COMM_ID");
    if (!at.empty())
      gdr::boot::addressUniqueId(at, false, 0, &id);
    else
      checkGdr(gdrGetUniqueId(&id), nullptr);
    std::memcpy(uniqueId->internal, id.internal, sizeof(id.internal));
    return ncclSuccess;
  });
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  return guard("ncclCommInitRank", nullptr, [&] { return initRank(comm, nranks, commId, rank, nullptr, -2); });
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                    ncclConfig_t* config) {
  return guard("ncclCommInitRankConfig", nullptr,
               [&] { return initRank(comm, nranks, commId, rank, config, -2); });
}

// One process, ndev ranks: every rank's rendezvous runs on its own thread.
// Without a GPU the devices are recorded (ncclCommCuDevice) and the
// communicators work on host buffers.
ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  return guard("ncclCommInitAll", nullptr, [&] {
    GDR_CHECK_ARG(comms, "comms is NULL");
    GDR_CHECK_ARG(ndev > 0, "ndev must be positive, got %d", ndev);
#if GDR_HAVE_CUDA
    // Where the process sees GPUs, every rank's device must be one of them;
    // without a GPU the devices are only recorded.
    int visible = 0;
    if (cudaGetDeviceCount(&visible) != cudaSuccess) cudaGetLastError(), visible = 0;
    for (int i = 0; visible > 0 && i < ndev; ++i) {
      const int dev = devlist ? devlist[i] : i;
      GDR_CHECK_ARG(dev >= 0 && dev < visible, "devlist[%d] = %d is not a CUDA device (this process sees %d)",
                    i, dev, visible);
    }
#endif
    ncclUniqueId id;
    gdrUniqueId gid;
    checkGdr(gdrGetUniqueId(&gid), nullptr);
    std::memcpy(id.internal, gid.internal, sizeof(id.internal));
    for (int i = 0; i < ndev; ++i) comms[i] = nullptr;
    std::string failed;
    groupStart();
    try {
      for (int i = 0; i < ndev; ++i)
        initRank(&comms[i], ndev, id, i, nullptr, devlist ? devlist[i] : i);
      groupEnd();
    } catch (...) {
      groupDiscard();  // only where initRank threw: groupEnd has closed the group
      failed = gdr::reportCurrentException().text;
    }
    if (!failed.empty()) {
      for (int i = 0; i < ndev; ++i)
        if (comms[i]) ncclCommAbort(comms[i]), comms[i] = nullptr;
      throw InvalidUsage("creating the communicators failed: " + failed);
    }
    return ncclSuccess;
  });
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) {
  return guard("ncclCommSplit", comm, [&]() -> ncclResult_t {
    GDR_CHECK_ARG(newcomm, "newcomm is NULL");
    GDR_CHECK_ARG(color >= 0 || color == NCCL_SPLIT_NOCOLOR, "color %d is negative (and not NCCL_SPLIT_NOCOLOR)", color);
    Comm& parent = checkComm(comm);
    *newcomm = nullptr;
    if (groupActive()) {
      // A step of the group: it runs at its place in the parent's order,
      // outside any group (its all-gathers run at once).
      ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
      if (config) std::memcpy(&cfg, config, std::min(sizeof(cfg), config->size));
      auto split = [comm, color, key, newcomm, cfg]() mutable {
        const ncclResult_t r = ncclCommSplit(comm, color, key, newcomm, &cfg);
        if (r != ncclSuccess) throw GdrCallError(toGdr(r), threadLastError());
      };
      if (!groupDefer(parent, [comm, split] { groupStep(readyComm(comm), split); }))
        groupStep(readyComm(comm), split);
      return ncclSuccess;
    }
    readyComm(comm);
    // Every rank learns every (color, key); each color's first member in
    // (key, parent rank) order makes a unique id, and one all-gather hands
    // every rank its group's id (one call, however many colors).
    std::vector<int32_t> mine{color, key}, all(2 * static_cast<size_t>(parent.nranks));
    checkGdr(gdrAllGather(mine.data(), 2, all.data(), gdrInt32, parent.gdr, nullptr), parent.gdr);
    std::vector<int> members;
    for (int r = 0; r < parent.nranks; ++r)
      if (color != NCCL_SPLIT_NOCOLOR && all[2 * r] == color) members.push_back(r);
    std::stable_sort(members.begin(), members.end(), [&](int a, int b) { return all[2 * a + 1] < all[2 * b + 1]; });
    const int newRank = static_cast<int>(std::find(members.begin(), members.end(), parent.rank) - members.begin());
    ncclUniqueId myId{};
    if (color != NCCL_SPLIT_NOCOLOR && newRank == 0) {
      gdrUniqueId gid;
      checkGdr(gdrGetUniqueId(&gid), nullptr);
      std::memcpy(myId.internal, gid.internal, sizeof(gid.internal));
    }
    std::vector<ncclUniqueId> ids(parent.nranks);
    checkGdr(gdrAllGather(myId.internal, sizeof(myId.internal), ids.data(), gdrUint8, parent.gdr, nullptr),
             parent.gdr);
    if (color == NCCL_SPLIT_NOCOLOR) return ncclSuccess;
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = parent.blocking ? 1 : 0;
    if (config) std::memcpy(&cfg, config, std::min(sizeof(cfg), config->size));
    return initRank(newcomm, static_cast<int>(members.size()), ids[members[0]], newRank, &cfg, parent.cudaDev);
  });
}

// The survivors agree on who they are and get a new communicator
// (gdrCommShrink); the listed ranks are left out too. Both flags behave the
// same: gdrcoll's shrink always revokes the parent first, so operations
// still pending on it end (NCCL_SHRINK_ABORT's effect).
ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,
                            ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags) {
  return guard("ncclCommShrink", comm, [&]() -> ncclResult_t {
    GDR_CHECK_ARG(newcomm, "newcomm is NULL");
    *newcomm = nullptr;
    GDR_CHECK_ARG(shrinkFlags == NCCL_SHRINK_DEFAULT || shrinkFlags == NCCL_SHRINK_ABORT,
                  "shrinkFlags %d is neither NCCL_SHRINK_DEFAULT nor NCCL_SHRINK_ABORT",
                  shrinkFlags);
    if (groupActive())
      throw InvalidUsage("ncclCommShrink inside ncclGroupStart/ncclGroupEnd is not supported");
    Comm& parent = readyComm(comm);
    gdrComm_t g = nullptr;
    checkGdr(gdrCommShrink(parent.gdr, excludeRanksList, excludeRanksCount, &g), parent.gdr);
    auto c = std::make_unique<Comm>();
    c->gdr = g;
    gdrCommRank(g, &c->rank);
    gdrCommSize(g, &c->nranks);
    c->cudaDev = parent.cudaDev;
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = parent.blocking ? 1 : 0;
    if (config) std::memcpy(&cfg, config, std::min(sizeof(cfg), config->size));
    applyConfig(*c, &cfg);
    *newcomm = c.release();
    return ncclSuccess;
  });
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  return guard("ncclCommFinalize", comm, [&] {
    // Host operations complete before they return; device ones are ordered
    // on their streams, which the caller synchronizes.
    readyComm(comm);
    return ncclSuccess;
  });
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  return guard("ncclCommDestroy", nullptr, [&] {
    if (!comm) return ncclSuccess;  // NCCL accepts NULL
    Comm& c = checkComm(comm);
    groupForget(&c);
    {
      std::lock_guard<std::mutex> lk(c.threadMu);
      if (c.initThread.joinable()) c.initThread.join();
    }
    gdrResult_t r = c.gdr ? gdrCommDestroy(c.gdr) : gdrSuccess;
    std::string text = r == gdrSuccess ? "" : gdrGetLastError(nullptr);
    c.magic = 0;
    delete &c;
    if (r != gdrSuccess) throw GdrCallError(r, text);
    return ncclSuccess;
  });
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  return guard("ncclCommAbort", nullptr, [&] {
    if (!comm) return ncclSuccess;
    Comm& c = checkComm(comm);
    groupForget(&c);
    c.magic = 0;
    std::unique_lock<std::mutex> lk(c.threadMu);
    if (c.initThread.joinable() && c.initState.load() == ncclInProgress) {
      // Abort always returns: an init still waiting for peers finishes (or
      // times out) on its own thread, which then frees everything.
      std::thread t = std::move(c.initThread);
      lk.unlock();
      t.detach();
      gdr::libThread("nccl-abort", [&c] {
        while (c.initState.load() == ncclInProgress) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        { std::lock_guard<std::mutex> done(c.mu); }  // runInit has left its critical section
        if (c.gdr) gdrCommAbort(c.gdr);
        delete &c;
      }).detach();
      return ncclSuccess;
    }
    if (c.initThread.joinable()) c.initThread.join();
    lk.unlock();
    if (c.gdr) gdrCommAbort(c.gdr);
    delete &c;
    return ncclSuccess;
  });
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  return guard("ncclCommGetAsyncError", comm, [&] {
    GDR_CHECK_ARG(asyncError, "asyncError is NULL");
    Comm& c = checkComm(comm);
    const int st = c.initState.load();
    if (st != ncclSuccess) {
      *asyncError = static_cast<ncclResult_t>(st);
      return ncclSuccess;
    }
    {
      std::lock_guard<std::mutex> lk(c.threadMu);
      if (c.initThread.joinable()) c.initThread.join();  // finished: reap it
    }
    gdrResult_t e = gdrSuccess;
    checkGdr(gdrCommGetAsyncError(c.gdr, &e), c.gdr);
    *asyncError = fromGdr(e);
    return ncclSuccess;
  });
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  return guard("ncclCommCount", comm, [&] {
    GDR_CHECK_ARG(count, "count is NULL");
    *count = checkComm(comm).nranks;
    return ncclSuccess;
  });
}

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  return guard("ncclCommCuDevice", comm, [&] {
    GDR_CHECK_ARG(device, "device is NULL");
    *device = checkComm(comm).cudaDev;
    return ncclSuccess;
  });
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  return guard("ncclCommUserRank", comm, [&] {
    GDR_CHECK_ARG(rank, "rank is NULL");
    *rank = checkComm(comm).rank;
    return ncclSuccess;
  });
}

}  // extern "C"
