#include "paths/direct/choose.h"

#include <cstring>

#include "core/error.h"

namespace gdr::paths::direct {

bool usableHere(const Communicator& comm, std::string* why) {
  if (!GDR_HAVE_CUDA) {
    *why = "this build has no CUDA support";
    return false;
  }
  if (comm.size() < 2) {
    *why = "one rank";
    return false;
  }
  for (int r = 0; r < comm.size(); ++r) {
    if (r == comm.rank()) continue;
    const char* t = comm.transportTo(r);
    if (std::strcmp(t, "ib") != 0) {
      *why = strprintf("rank %d is reached over %s, not verbs", r, t);
      return false;
    }
    if (!(comm.endpoint(r)->capabilities() & transport::kCapDeviceMemory)) {
      *why = strprintf(
          "the verbs endpoint to rank %d does not take device memory (no GPUDirect: see the "
          "\"GPU memory over\" line; or GDR_ENCRYPT=1)",
          r);
      return false;
    }
  }
  *why = strprintf("verbs to all %d peers, GPU memory registered with the NIC", comm.size() - 1);
  return true;
}

}  // namespace gdr::paths::direct
