// What a schedule runs over (../shared/DESIGN.md, "Collectives"): an
// endpoint per peer, the wait loop that progresses them, and where a rank
// reports the step it is at. The communicator implements it; the executor
// knows nothing else of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/fault.h"
#include "core/function_ref.h"
#include "core/op_sig.h"
#include "transport/transport.h"

namespace gdr::coll {

class Links {
 public:
  virtual int rank() const = 0;
  // The endpoint to `peer` (a rank of the links; never this rank's own).
  virtual transport::Endpoint* endpoint(int peer) const = 0;
  // Progresses every endpoint until done() holds. Throws TimeoutError after
  // the deadline (its text names `what()`), or the error a peer reported.
  virtual void progressUntil(FunctionRef<bool()> done, FunctionRef<std::string()> what) = 0;
  // GDR_FAULT, and the deadline a stall outlasts.
  virtual const FaultSpec& fault() const = 0;
  virtual int64_t timeoutMs() const = 0;
  // Whether every rank of this rank's host has a core of its own (the
  // single-copy threshold depends on it: core/call.h singleCopyFromOf).
  virtual bool ownCores() const = 0;
  // Progress reports (the status board): an operation of `steps` steps
  // began; it is at step `idx` (`steps`: waiting for its last sends) with
  // `peer` (-1: a local step), of StepKind `kind`; it ended.
  virtual void opBegan(const OpSig& sig, size_t steps) noexcept = 0;
  virtual void stepAt(size_t idx, int peer, uint8_t kind) noexcept = 0;
  virtual void opEnded(bool ok) noexcept = 0;

 protected:
  ~Links() = default;
};

}  // namespace gdr::coll
