#include "paths/progress_thread.h"

#include <string>
#include <utility>

#include "core/thread_affinity.h"

namespace gdr::paths {

progress::EngineConfig progressThreadConfig(Communicator& comm, size_t ringSlots, const char* who,
                                            std::function<void()> alsoAtStart) {
  progress::EngineConfig cfg;
  cfg.timeoutMs = comm.config().timeoutMs;
  cfg.ringSlots = ringSlots;
  cfg.onError = [&comm](gdrResult_t code, const std::string& text) {
    comm.driverFailed(code, text);
  };
  cfg.asyncError = [&comm] { return comm.stopCode(); };
  cfg.onThreadStart = [who, then = std::move(alsoAtStart)] {
    widenHelperAffinity(who);
    if (then) then();
  };
  return cfg;
}

}  // namespace gdr::paths
