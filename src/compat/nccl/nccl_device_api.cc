// The host side of NCCL's device API (nccl_device.h) and the properties query
// that programs ask before using it. gdrcoll has no device communicators
// (kernels that reach peer memory through NCCL's structures), so creating one
// and the resource requirements that only serve one return ncclInvalidUsage;
// teams are plain arithmetic over the communicator, with each rank its own
// load/store-accessible (LSA) team, which is what deviceApiSupport = false
// promises.
#include <algorithm>
#include <cstddef>
#include <cstring>

#include "compat/nccl/nccl_compat.h"

namespace gdr::nccl {

namespace {

ncclResult_t noDeviceApi(const char* fn, ncclComm_t comm) {
  compatInit();
  return recordError(
      fn, comm, ncclInvalidUsage,
      strprintf(
          "%s: gdrcoll does not implement NCCL's device API (device communicators, LSA and "
          "GIN barriers, LL all-to-all); ncclCommQueryProperties reports deviceApiSupport = 0 "
          "(docs/compat.md)",
          fn),
      false);
}

ncclTeam_t team(int nRanks, int rank, int stride) { return ncclTeam_t{nRanks, rank, stride}; }

// A dead or foreign handle gives the empty team: these functions cannot
// return an error code.
bool live(ncclComm_t c) { return c && c->magic == kCommMagic; }

}  // namespace

}  // namespace gdr::nccl

using namespace gdr::nccl;

extern "C" {

ncclResult_t ncclCommQueryProperties(ncclComm_t comm, ncclCommProperties_t* props) {
  return guard("ncclCommQueryProperties", comm, [&] {
    Comm& c = checkComm(comm);
    GDR_CHECK_ARG(props, "props is NULL");
    GDR_CHECK_ARG(props->magic == 0xcafebeef,
                  "props was not initialized with NCCL_COMM_PROPERTIES_INITIALIZER (magic 0x%x)",
                  props->magic);
    // Only what the caller's struct holds is written: a program built
    // against a newer header passes a longer one.
    ncclCommProperties_t p;
    std::memset(&p, 0, sizeof(p));
    p.rank = c.rank;
    p.nRanks = c.nranks;
    p.cudaDev = c.cudaDev;
    p.nvmlDev = -1;  // gdrcoll does not use NVML
    p.deviceApiSupport = 0;
    p.multimemSupport = 0;
    p.ginType = NCCL_GIN_TYPE_NONE;
    p.nLsaTeams = c.nranks;
    p.hostRmaSupport = 0;
    p.railedGinType = NCCL_GIN_TYPE_NONE;
    const size_t head = offsetof(ncclCommProperties_t, rank);
    GDR_CHECK_ARG(props->size >= head, "props->size %zu is too small", props->size);
    const size_t n = std::min(props->size, sizeof(p)) - head;
    std::memcpy(reinterpret_cast<char*>(props) + head, reinterpret_cast<const char*>(&p) + head, n);
    return ncclSuccess;
  });
}

ncclResult_t ncclDevCommCreate(ncclComm_t comm, const ncclDevCommRequirements_t*, ncclDevComm_t*) {
  return noDeviceApi("ncclDevCommCreate", comm);
}

ncclResult_t ncclDevCommDestroy(ncclComm_t comm, const ncclDevComm_t*) {
  return noDeviceApi("ncclDevCommDestroy", comm);
}

ncclResult_t ncclGinBarrierCreateRequirement(ncclComm_t comm, ncclTeam_t, int,
                                             ncclGinBarrierHandle_t*,
                                             ncclDevResourceRequirements_t*) {
  return noDeviceApi("ncclGinBarrierCreateRequirement", comm);
}

ncclResult_t ncclLsaBarrierCreateRequirement(ncclTeam_t, int, ncclLsaBarrierHandle_t*,
                                             ncclDevResourceRequirements_t*) {
  return noDeviceApi("ncclLsaBarrierCreateRequirement", nullptr);
}

ncclResult_t ncclLLA2ACreateRequirement(int, int, ncclLLA2AHandle_t*,
                                        ncclDevResourceRequirements_t*) {
  return noDeviceApi("ncclLLA2ACreateRequirement", nullptr);
}

// Slots of eight bytes that maxElts elements of maxEltSize bytes take.
int ncclLLA2ACalcSlots(int maxElts, int maxEltSize) { return maxElts * ((maxEltSize + 7) / 8); }

ncclTeam_t ncclTeamWorld(ncclComm_t comm) {
  return live(comm) ? team(comm->nranks, comm->rank, 1) : team(0, 0, 1);
}

ncclTeam_t ncclTeamLsa(ncclComm_t comm) { return live(comm) ? team(1, 0, 1) : team(0, 0, 1); }

// The rail team is the world divided by the LSA team: here the world.
ncclTeam_t ncclTeamRail(ncclComm_t comm) { return ncclTeamWorld(comm); }

int ncclTeamRankToWorld(ncclComm_t comm, ncclTeam_t t, int rank) {
  return live(comm) ? comm->rank + (rank - t.rank) * t.stride : -1;
}

int ncclTeamRankToLsa(ncclComm_t comm, ncclTeam_t t, int rank) {
  // The LSA team holds this rank only, so the answer is 0 for this rank and
  // -1 for every other.
  return live(comm) && ncclTeamRankToWorld(comm, t, rank) == comm->rank ? 0 : -1;
}

}  // extern "C"
