// ncclGroupSimulateEnd against the model it claims to use: two communicators
// of one process (ncclCommInitAll), groups of collectives simulated, each
// estimate compared with gdr::sim::predict (p2pUs, rootedUs) on the same
// cluster. Nothing may run: the buffers stay as they were.
//
//   gdr-nccl-sim-test
#include <nccl.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "sim/p2p.h"
#include "sim/predict.h"
#include "sim/sim_report.h"

namespace {

int gFailures = 0;

#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (!(cond)) {                                         \
      std::fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
      std::fprintf(stderr, __VA_ARGS__);                   \
      std::fprintf(stderr, "\n");                          \
      ++gFailures;                                         \
    }                                                      \
  } while (0)

double predicted(const char* cluster, gdr::CollKind kind, size_t bytes) {
  gdr::sim::Query q;
  q.kind = kind;
  q.bytes = bytes;
  q.elemBytes = 4;
  return gdr::sim::predict(gdr::sim::makeCluster(cluster, "", "", 2), q).timeUs;
}

bool near(double got, double want) {
  return want > 0 && std::fabs(got - want) <= 1e-4 * want + 1e-3;
}

float simulate(ncclResult_t* rc) {
  ncclSimInfo_t info = NCCL_SIM_INFO_INITIALIZER;
  *rc = ncclGroupSimulateEnd(&info);
  return info.estimatedTime;
}

}  // namespace

int main() {
  unsetenv("GDR_SIM_CLUSTER");
  std::vector<ncclComm_t> comms(2);
  int devs[2] = {0, 1};
  if (ncclCommInitAll(comms.data(), 2, devs) != ncclSuccess) {
    devs[1] = 0;  // one GPU or none: both ranks on device 0
    if (ncclCommInitAll(comms.data(), 2, devs) != ncclSuccess) {
      std::fprintf(stderr, "ncclCommInitAll: %s\n", ncclGetLastError(nullptr));
      return 2;
    }
  }
  const size_t count = 1 << 18;  // 1 MiB of float32
  std::vector<float> a(count * 2, 1.0f), b(count * 2, 5.0f);
  ncclResult_t rc;

  // An empty group costs nothing.
  ncclGroupStart();
  float us = simulate(&rc);
  CHECK(rc == ncclSuccess && us == 0.0f, "empty group: rc %d, %g us", rc, us);

  // One all-reduce per communicator: they run side by side, so one call's time.
  const double ar = predicted("h200x2", gdr::CollKind::AllReduce, count * 4);
  ncclGroupStart();
  for (ncclComm_t c : comms)
    ncclAllReduce(a.data(), b.data(), count, ncclFloat32, ncclSum, c, nullptr);
  us = simulate(&rc);
  CHECK(rc == ncclSuccess && near(us, ar), "all-reduce pair: rc %d, %g us, model %g us", rc, us,
        ar);
  CHECK(ncclGroupEnd() == ncclInvalidUsage, "the simulation left the group open");
  CHECK(b[0] == 5.0f && a[0] == 1.0f, "a simulated call ran");

  // Calls on one communicator add up; the group costs its slowest communicator.
  const double ag = predicted("h200x2", gdr::CollKind::AllGather, count * 4 * 2);
  ncclGroupStart();
  ncclAllReduce(a.data(), b.data(), count, ncclFloat32, ncclSum, comms[0], nullptr);
  ncclAllGather(a.data(), b.data(), count, ncclFloat32, comms[0], nullptr);
  ncclBroadcast(a.data(), b.data(), 16, ncclFloat32, 0, comms[1], nullptr);
  us = simulate(&rc);
  CHECK(rc == ncclSuccess && near(us, ar + ag), "all-reduce + all-gather: %g us, model %g us", us,
        ar + ag);

  // A communicator's sends and receives are one exchange, its peers doing the
  // mirror; gather and scatter are the all-to-all-v the library runs.
  const gdr::sim::Cluster h200 = gdr::sim::makeCluster("h200x2", "", "", 2);
  const double p2p = gdr::sim::p2pUs(h200, 0, {{true, 1, count * 4}, {false, 1, count * 4}});
  const double p2pTwice =
      gdr::sim::p2pUs(h200, 0, {{true, 1, count * 4}, {true, 1, count * 4}, {false, 1, count * 4}});
  ncclGroupStart();
  ncclSend(a.data(), count, ncclFloat32, 1, comms[0], nullptr);
  ncclRecv(b.data(), count, ncclFloat32, 1, comms[0], nullptr);
  ncclSend(a.data(), count, ncclFloat32, 0, comms[0], nullptr);  // to itself: a local copy
  ncclRecv(b.data(), count, ncclFloat32, 0, comms[0], nullptr);
  ncclSend(a.data(), count, ncclFloat32, 0, comms[1], nullptr);
  ncclRecv(b.data(), count, ncclFloat32, 0, comms[1], nullptr);
  us = simulate(&rc);
  std::printf("1 MiB send + recv: %.1f us; two sends + a recv: %.1f us\n", p2p, p2pTwice);
  CHECK(rc == ncclSuccess && near(us, p2p), "send/recv pair: rc %d, %g us, model %g us", rc, us,
        p2p);
  ncclGroupStart();
  ncclSend(a.data(), count, ncclFloat32, 1, comms[0], nullptr);
  ncclSend(a.data(), count, ncclFloat32, 1, comms[0], nullptr);
  ncclRecv(b.data(), count, ncclFloat32, 1, comms[0], nullptr);
  us = simulate(&rc);
  CHECK(rc == ncclSuccess && near(us, p2pTwice) && p2pTwice > p2p,
        "two sends: %g us, model %g (one: %g) us", us, p2pTwice, p2p);
  for (bool gather : {true, false}) {
    const double rooted = gdr::sim::rootedUs(h200, gather, 1, count, 4);
    ncclGroupStart();
    for (ncclComm_t c : comms)
      (gather ? ncclGather : ncclScatter)(a.data(), b.data(), count, ncclFloat32, 1, c, nullptr);
    us = simulate(&rc);
    std::printf("1 MiB per rank %s: %.1f us\n", gather ? "gather" : "scatter", rooted);
    CHECK(rc == ncclSuccess && near(us, rooted), "%s: %g us, model %g us",
          gather ? "gather" : "scatter", us, rooted);
  }
  CHECK(b[0] == 5.0f && a[0] == 1.0f, "a simulated call ran");

  // GDR_SIM_CLUSTER picks the cluster; a bad one is the caller's error and
  // still closes the group.
  setenv("GDR_SIM_CLUSTER", "host-shm", 1);
  const double host = predicted("host-shm", gdr::CollKind::AllReduce, count * 4);
  ncclGroupStart();
  ncclAllReduce(a.data(), b.data(), count, ncclFloat32, ncclSum, comms[0], nullptr);
  us = simulate(&rc);
  CHECK(rc == ncclSuccess && near(us, host) && !near(us, ar), "host-shm: %g us, model %g us", us,
        host);
  setenv("GDR_SIM_CLUSTER", "/no/such/cluster", 1);
  ncclGroupStart();
  ncclAllReduce(a.data(), b.data(), count, ncclFloat32, ncclSum, comms[0], nullptr);
  us = simulate(&rc);
  CHECK(rc == ncclInvalidArgument && std::strstr(ncclGetLastError(nullptr), "/no/such/cluster"),
        "bad GDR_SIM_CLUSTER: rc %d (%s)", rc, ncclGetLastError(nullptr));
  CHECK(ncclGroupEnd() == ncclInvalidUsage, "a failed simulation left the group open");
  unsetenv("GDR_SIM_CLUSTER");

  // A group that runs after simulated ones still works and sees none of their calls.
  CHECK(b[0] == 5.0f, "a simulated call ran");
  std::vector<float> out0(count, 0.0f), out1(count, 0.0f);
  ncclGroupStart();
  ncclAllReduce(a.data(), out0.data(), count, ncclFloat32, ncclSum, comms[0], nullptr);
  ncclAllReduce(a.data(), out1.data(), count, ncclFloat32, ncclSum, comms[1], nullptr);
  CHECK(ncclGroupEnd() == ncclSuccess, "group end: %s", ncclGetLastError(nullptr));
  CHECK(out0[0] == 2.0f && out1[count - 1] == 2.0f, "all-reduce result %g", out0[0]);
  for (ncclComm_t c : comms) ncclCommDestroy(c);
  if (gFailures)
    std::fprintf(stderr, "FAIL: %d checks\n", gFailures);
  else
    std::printf("ncclGroupSimulateEnd: every estimate is the model's\n");
  return gFailures ? 1 : 0;
}
