// What the gdr-rdma-test modes share (rdma_driver.cc runs them; the
// GDR_ENCRYPT modes are in rdma_crypto_modes.cc).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

#include "gdrcoll.h"

namespace rdmatest {

extern int gRank, gSize;
extern int gFailures;  // checks failed so far
extern uint64_t gSeed;  // agreed by every rank at start (a broadcast)

int envInt(const char* name, int dflt);
// A 64-bit mixer (splitmix64's finaliser): deterministic test data.
uint64_t mix(uint64_t x);
// What a receive buffer holds before the data (so "untouched" is checkable).
template <typename T>
T poison() {
  return static_cast<T>(std::is_floating_point<T>::value ? -12345 : 0x5A);
}
// Per-peer verbs statistics, and the checks they allow (GDR_ENCRYPT reached
// the chunks, every QP carried some, a fixed chunk size held).
void reportIb(gdrComm_t comm);

// The GDR_ENCRYPT=1 modes: tamper and presealed return the rank's exit
// status; arbw prints the all-reduce bandwidth table rows.
int runTamper(gdrComm_t comm);
// rdma_coll_modes.cc: fail unless every peer uses GDR_TEST_EXPECT_TRANSPORT;
// the colls and zcopy modes.
void checkTransport(gdrComm_t comm);
void runColls(gdrComm_t comm);
void runZcopy(gdrComm_t comm);
int runPreSealed(gdrComm_t comm);
void runAllReduceBw(gdrComm_t comm);

}  // namespace rdmatest

// Exits the rank (status 2) when a call on `comm` fails.
#define CHECK_OK(call)                                                                           \
  do {                                                                                           \
    gdrResult_t r_ = (call);                                                                     \
    if (r_ != gdrSuccess) {                                                                      \
      std::fprintf(stderr, "[rank %d] %s failed: %s: %s\n", rdmatest::gRank, #call,              \
                   gdrGetErrorString(r_), gdrGetLastError(comm));                                \
      std::exit(2);                                                                              \
    }                                                                                            \
  } while (0)
