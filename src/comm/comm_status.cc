// The communicator's status board joins the process's reports once it is
// connected (comm/status_report.h), named by the job id every rank shares.
#include "comm/comm.h"
#include "core/error.h"

namespace gdr {

void Communicator::registerStatus() {
  if (!status::enabled()) return;
  const auto& id = boot_->jobSecret().jobId;
  std::string hex;
  for (size_t i = 0; i < 8 && i < sizeof(id); ++i) hex += strprintf("%02x", id[i]);
  status_.identify(rank_, size_, hex);
  status::registerBoard(&status_);
  statusRegistered_ = true;
}

}  // namespace gdr
