// gdrCommInitFromEnv: a communicator over the whole job, its bootstrap
// chosen from the launcher's environment (bootstrap/env_select.h).
#include "api/guard.h"
#include "bootstrap/bootstrap.h"
#include "core/cuda.h"
#include "dispatch/group.h"
#include "gdrcoll.h"

extern "C" gdrResult_t gdrCommInitFromEnv(gdrComm_t* comm) {
  return gdr::api::guarded("gdrCommInitFromEnv", nullptr, [&] {
    GDR_CHECK_ARG(comm, "comm (the output pointer) is NULL");
    *comm = nullptr;
    if (gdr::dispatch::inGroup())
      throw gdr::InvalidUsage(
          "gdrCommInitFromEnv makes the one communicator of this process's rank: call it "
          "outside gdrGroupStart/gdrGroupEnd");
    const int device = gdr::currentCudaDevice();
    auto c = new gdrComm(gdr::boot::makeEnvBootstrap());
    c->setDevice(device);
    gdr::api::registerComm(c);
    *comm = c;
  });
}
