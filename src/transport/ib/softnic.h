// The software NIC: a test device behind the same IbvApi table the verbs
// transport loads, chosen only when asked for (GDR_IB_PROVIDER=softnic, and
// named "softnic0", "softnic1", ... in every log line about a device). It carries out RDMA
// WRITE and RDMA WRITE WITH IMMEDIATE between registered ranges: within a
// process, host memory by memcpy and device memory (either side) by
// CUDA copies in CUDA builds (gpu_copy.h), so the GPUDirect data path runs
// without an RDMA NIC; between processes of one machine, host memory through
// shared-memory QP segments and process_vm_writev, device memory through the
// CUDA IPC handle each device registration publishes (softnic_shm.h): a copy
// that has returned before the completion is posted, so received data is
// visible to the GPU once the completion is seen (no flush needed). Keys and ranges are checked
// like a NIC does (a write outside its MR or without REMOTE_WRITE completes with
// IBV_WC_REM_ACCESS_ERR and moves the QP to the error state; the requests behind it flush). Each
// QP's writes are carried out, and their immediates and completions delivered, in posting order;
// separate QPs are independent, so completions of different QPs interleave as on hardware (and a
// held QP makes them arrive out of order on purpose).
//
// Faults on request (tests, or GDR_SOFTNIC_FAIL_WRITE=N: the N-th write of
// the process fails; GDR_SOFTNIC_DELAY_US=D: every write waits D us before it
// is carried out): see the functions below.
//
// Not here: atomics, reads,
// SENDs with a payload, SRQs, completion channels, and the fault knobs act
// only on the writes of the process that sets them.
#pragma once

#include <cstdint>

#include "transport/ib/ibv_api.h"

namespace gdr::transport::ib::softnic {

// The verbs table of the software NIC.
const IbvApi* api();

// Devices: GDR_SOFTNIC_DEVICES of them (1-4, softnic0 ...), each with its own
// PDs, CQs, keys and ports, as separate HCAs are: a key works only on QPs of
// the device that registered it (a write naming another device's key fails
// like a bad key). Ports: GDR_SOFTNIC_PORTS per device (1-8), all active, each
// QP bound to the one its INIT transition names. GDR_SOFTNIC_PORT_DOWN=P:N
// takes port P of softnic0 down at the process's N-th RDMA write, softnicD:P:N
// port P of softnicD, as portDown() does. GDR_SOFTNIC_PORT_MBPS
// limits each port's sending rate (its writes are carried out one after
// another at that rate), so a two-port aggregate can be measured.
//
// Fault injection, for tests. The n-th RDMA write posted from now on
// (1 = the next one) completes with `status` instead of moving data; 0
// cancels. With IBV_WC_REM_INV_REQ_ERR (the responder rejected the request:
// what rxe answers to a malformed retransmission) the responder's QP, when
// it is in this process, goes to the error state too and its receives flush,
// as rxe's does.
void failWrite(uint64_t n, ibv_wc_status status = IBV_WC_REM_OP_ERR);
// The n-th RDMA write posted from now on (1 = the next one; 0 cancels) is
// carried out, data and immediate, but completes with retries exceeded and
// moves its QP to the error state: a write whose ACKs were lost, which the
// writer cannot tell from one that never landed.
void loseAck(uint64_t n);
// While held, the writes posted on QP `qpn` wait (they are carried out, in
// order, once released): completions of other QPs overtake them.
void holdQp(uint32_t qpn, bool hold);
// Port `port` goes down: its QPs move to the error state, their queued
// writes complete in error (the oldest with `first`: retries exceeded, or
// as rxe reports a link gone down, local QP operation error; the others
// flushed) and their receives flush; writes of other processes to them stop
// being answered (retries exceeded after their QP's timeout).
void portDown(uint8_t port, int device = 0, ibv_wc_status first = IBV_WC_RETRY_EXC_ERR);
// Tests: the port is active again for QPs made from now on (those it took
// down stay in error, as on hardware).
void portUp(uint8_t port, int device = 0);
// Writes carried out so far by this process's software NIC, and the bytes.
uint64_t writesDone();
uint64_t bytesMoved();

}  // namespace gdr::transport::ib::softnic
