// Runs each collective once on fresh reference inputs with poisoned outputs
// and checks every element (inside a forked rank; failures go through
// CHILD_CHECK). Shared by the multi-process collective tests.
#pragma once

#include <cstddef>

#include "gdrcoll.h"

namespace gdrtest {

struct CollCase {
  gdrDataType_t type;
  gdrRedOp_t op;
  size_t count;
  bool inPlace;
  int root;
  unsigned seed;
};

void checkAllReduce(gdrComm_t comm, int rank, int n, const CollCase& c);
void checkReduce(gdrComm_t comm, int rank, int n, const CollCase& c);
void checkReduceScatter(gdrComm_t comm, int rank, int n, const CollCase& c);
void checkBroadcast(gdrComm_t comm, int rank, int n, const CollCase& c);
void checkAllGather(gdrComm_t comm, int rank, int n, const CollCase& c);
void checkAllToAll(gdrComm_t comm, int rank, int n, const CollCase& c);
void checkAllToAllv(gdrComm_t comm, int rank, int n, const CollCase& c);
void checkSendRecvRing(gdrComm_t comm, int rank, int n, const CollCase& c);

}  // namespace gdrtest
