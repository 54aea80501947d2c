// The software NIC: a test device behind the same IbvApi table the verbs
// transport loads, chosen only when asked for (GDR_IB_PROVIDER=softnic, and
// named "softnic0" in every log line about the device). It carries out RDMA
// WRITE and RDMA WRITE WITH IMMEDIATE between registered ranges: within a
// process, host memory by memcpy and device memory (either side) by
// cudaMemcpy in CUDA builds, so the GPUDirect data path runs without an RDMA
// NIC; between processes of one machine, host memory through shared-memory
// QP segments and process_vm_writev (softnic_shm.h). Keys and ranges are checked like a NIC does (a
// write outside its MR or without REMOTE_WRITE completes with IBV_WC_REM_ACCESS_ERR and moves the
// QP to the error state; the requests behind it flush). Each QP's writes are carried out, and their
// immediates and completions delivered, in posting order; separate QPs are independent, so
// completions of different QPs interleave as on hardware (and a held QP makes them arrive out of
// order on purpose).
//
// Faults on request (tests, or GDR_SOFTNIC_FAIL_WRITE=N: the N-th write of
// the process fails; GDR_SOFTNIC_DELAY_US=D: every write waits D us before it
// is carried out): see the functions below.
//
// Not here: device memory of another process (CUDA IPC), atomics, reads,
// SENDs with a payload, SRQs, completion channels, and the fault knobs act
// only on the writes of the process that sets them.
#pragma once

#include <cstdint>

#include "transport/ib/ibv_api.h"

namespace gdr::transport::ib::softnic {

// The verbs table of the software NIC.
const IbvApi* api();

// Fault injection, for tests. The n-th RDMA write posted from now on
// (1 = the next one) completes with IBV_WC_REM_OP_ERR instead of moving data;
// 0 cancels.
void failWrite(uint64_t n);
// While held, the writes posted on QP `qpn` wait (they are carried out, in
// order, once released): completions of other QPs overtake them.
void holdQp(uint32_t qpn, bool hold);
// Writes carried out so far by this process's software NIC, and the bytes.
uint64_t writesDone();
uint64_t bytesMoved();

}  // namespace gdr::transport::ib::softnic
