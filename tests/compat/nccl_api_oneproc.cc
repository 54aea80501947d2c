// The NCCL-API test's one-process cases: the version and error strings,
// ncclCommInitAll, non-blocking init, calls on communicators still being
// made, several unique ids, ncclMemAlloc.
#include <algorithm>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "nccl_api_check.h"

namespace nccltest {

namespace {

// ---- one process, several ranks ----

// ncclCommInitAll, then collectives on every communicator from this one
// thread inside a group (NCCL's one-process multi-GPU pattern).
void testInitAll(int ndev) {
  std::vector<ncclComm_t> comms(ndev);
  std::vector<int> devs(ndev);
  for (int i = 0; i < ndev; ++i) devs[i] = i;
  // Where the process sees fewer GPUs than ranks, devices that do not exist
  // are refused and the ranks share device 0 instead (gdrcoll allows that).
  const ncclResult_t init = ncclCommInitAll(comms.data(), ndev, devs.data());
  if (init == ncclInvalidArgument) {
    CHECK(std::strstr(ncclGetLastError(nullptr), "not a CUDA device") != nullptr, "initall refusal: %s",
          ncclGetLastError(nullptr));
    std::fill(devs.begin(), devs.end(), 0);
    NCCLOK(ncclCommInitAll(comms.data(), ndev, devs.data()));
  } else {
    NCCLOK(init);
  }
  const size_t count = 5000;
  std::vector<std::vector<int32_t>> bufs(ndev, std::vector<int32_t>(count));
  for (int d = 0; d < ndev; ++d)
    for (size_t i = 0; i < count; ++i) bufs[d][i] = static_cast<int32_t>(input(d, i, ncclSum));
  NCCLOK(ncclGroupStart());
  for (int d = 0; d < ndev; ++d)
    NCCLOK(ncclAllReduce(bufs[d].data(), bufs[d].data(), count, ncclInt32, ncclSum, comms[d], nullptr));
  NCCLOK(ncclGroupEnd());
  for (int d = 0; d < ndev; ++d) {
    int dev = -1, rank = -1;
    NCCLOK(ncclCommCuDevice(comms[d], &dev));
    NCCLOK(ncclCommUserRank(comms[d], &rank));
    CHECK(dev == devs[d] && rank == d, "initall comm %d: device %d rank %d", d, dev, rank);
    for (size_t i = 0; i < count; ++i)
      if (bufs[d][i] != reduced(ndev, i, ncclSum)) { CHECK(false, "initall allreduce dev %d [%zu]", d, i); break; }
  }
  // A ring of sends and receives among the communicators, from this thread.
  std::vector<std::vector<int32_t>> got(ndev, std::vector<int32_t>(count, -1));
  NCCLOK(ncclGroupStart());
  for (int d = 0; d < ndev; ++d) {
    NCCLOK(ncclSend(bufs[d].data(), count, ncclInt32, (d + 1) % ndev, comms[d], nullptr));
    NCCLOK(ncclRecv(got[d].data(), count, ncclInt32, (d + ndev - 1) % ndev, comms[d], nullptr));
  }
  NCCLOK(ncclGroupEnd());
  for (int d = 0; d < ndev; ++d) CHECK(got[d] == bufs[(d + ndev - 1) % ndev], "initall ring at %d", d);
  for (ncclComm_t c : comms) NCCLOK(ncclCommDestroy(c));
}

// Non-blocking init: ncclInProgress, then ncclCommGetAsyncError reports
// progress until the communicator is ready.
void testNonBlocking(int n) {
  ncclUniqueId id;
  NCCLOK(ncclGetUniqueId(&id));
  std::vector<ncclComm_t> comms(n);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  config.commName = "nonblocking-test";
  for (int r = 0; r < n; ++r) {
    ncclResult_t res = ncclCommInitRankConfig(&comms[r], n, id, r, &config);
    CHECK(res == ncclInProgress || res == ncclSuccess, "non-blocking init returned %d", res);
  }
  for (int r = 0; r < n; ++r) {
    ncclResult_t state = ncclInProgress;
    for (int spin = 0; state == ncclInProgress && spin < 60000; ++spin) {
      NCCLOK(ncclCommGetAsyncError(comms[r], &state));
      if (state == ncclInProgress) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    CHECK(state == ncclSuccess, "non-blocking init of rank %d ended in %d", r, state);
  }
  std::vector<std::thread> ts;
  std::vector<int64_t> out(n, 0);
  for (int r = 0; r < n; ++r)
    ts.emplace_back([&, r] {
      int64_t v = 10 + r;
      ncclAllReduce(&v, &out[r], 1, ncclInt64, ncclSum, comms[r], nullptr);
    });
  for (auto& t : ts) t.join();
  for (int r = 0; r < n; ++r) CHECK(out[r] == 10 * n + n * (n - 1) / 2, "non-blocking comm allreduce %lld", (long long)out[r]);
  for (ncclComm_t c : comms) NCCLOK(ncclCommDestroy(c));
}

// Calls on communicators whose init still runs, from this one thread inside
// a group: blocking inits made in the same group, then non-blocking ones
// made just before it. The group's end waits for each init, then runs its
// calls.
void testCallsDuringInit(int n) {
  for (int blocking = 1; blocking >= 0; --blocking) {
    ncclUniqueId id;
    NCCLOK(ncclGetUniqueId(&id));
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = blocking;
    std::vector<ncclComm_t> comms(n, nullptr);
    std::vector<int64_t> in(n), out(n, 0);
    if (blocking) NCCLOK(ncclGroupStart());
    for (int r = 0; r < n; ++r) {
      const ncclResult_t res = ncclCommInitRankConfig(&comms[r], n, id, r, &config);
      CHECK(res == ncclSuccess || (!blocking && res == ncclInProgress),
            "init (blocking %d) returned %d", blocking, res);
    }
    if (!blocking) NCCLOK(ncclGroupStart());
    for (int r = 0; r < n; ++r) {
      in[r] = 1000 + r;
      NCCLOK(ncclAllReduce(&in[r], &out[r], 1, ncclInt64, ncclSum, comms[r], nullptr));
    }
    const ncclResult_t end = ncclGroupEnd();
    CHECK(end == ncclSuccess, "group end (blocking %d): %d %s", blocking, end,
          ncclGetLastError(nullptr));
    for (int r = 0; r < n; ++r) {
      ncclResult_t state = ncclInternalError;
      NCCLOK(ncclCommGetAsyncError(comms[r], &state));
      CHECK(state == ncclSuccess, "comm %d after the group (blocking %d): %d", r, blocking, state);
      CHECK(out[r] == 1000 * n + n * (n - 1) / 2,
            "allreduce during init (blocking %d) rank %d: %lld", blocking, r, (long long)out[r]);
    }
    for (ncclComm_t c : comms) NCCLOK(ncclCommDestroy(c));
  }
}

// Several unique ids (what PyTorch passes from 129 ranks on): every rank
// gets all of them, in the same order; ranks as threads of this process.
void testScalable(int n) {
  std::vector<ncclUniqueId> ids(2);
  for (auto& id : ids) NCCLOK(ncclGetUniqueId(&id));
  std::vector<ncclComm_t> comms(n, nullptr);
  std::vector<int64_t> out(n, 0);
  std::vector<ncclResult_t> rcs(n, ncclInternalError);
  std::vector<std::thread> ts;
  for (int r = 0; r < n; ++r)
    ts.emplace_back([&, r] {
      rcs[r] = ncclCommInitRankScalable(&comms[r], n, r, 2, ids.data(), nullptr);
      int64_t v = 100 + r;
      if (rcs[r] == ncclSuccess)
        rcs[r] = ncclAllReduce(&v, &out[r], 1, ncclInt64, ncclSum, comms[r], nullptr);
    });
  for (auto& t : ts) t.join();
  for (int r = 0; r < n; ++r) {
    CHECK(rcs[r] == ncclSuccess, "scalable init rank %d: %d", r, rcs[r]);
    CHECK(out[r] == 100 * n + n * (n - 1) / 2, "scalable comm allreduce %lld", (long long)out[r]);
  }
  for (ncclComm_t c : comms)
    if (c) NCCLOK(ncclCommDestroy(c));
}

}  // namespace

void testProcessLocal() {
  int version = 0;
  NCCLOK(ncclGetVersion(&version));
  CHECK(version == NCCL_VERSION(2, 28, 9) || version >= NCCL_VERSION(2, 28, 0), "version %d", version);
  CHECK(NCCL_VERSION(2, 28, 9) == 22809 && NCCL_VERSION(2, 8, 4) == 2804, "NCCL_VERSION encoding");
  CHECK(std::strcmp(ncclGetErrorString(ncclSuccess), "no error") == 0, "ncclGetErrorString(ncclSuccess)");
  ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
  // A simulated group ends without running anything; an empty one costs
  // nothing (nccl_sim_test checks the estimates of real calls).
  CHECK(ncclGroupStart() == ncclSuccess, "group start");
  CHECK(ncclGroupSimulateEnd(&sim) == ncclSuccess, "ncclGroupSimulateEnd: %s",
        ncclGetLastError(nullptr));
  CHECK(sim.estimatedTime == 0.0f, "simulated time %f", sim.estimatedTime);
  CHECK(ncclGroupEnd() == ncclInvalidUsage, "the simulation left the group open");
  CHECK(ncclCommInitRank(nullptr, 2, ncclUniqueId{}, 0) == ncclInvalidArgument, "NULL comm pointer accepted");
  void* mem = nullptr;
  NCCLOK(ncclMemAlloc(&mem, 1 << 20));
  CHECK(mem != nullptr, "ncclMemAlloc gave NULL");
  NCCLOK(ncclMemFree(mem));
  testInitAll(3);
  testNonBlocking(3);
  testCallsDuringInit(3);
  testScalable(3);
}

}  // namespace nccltest
