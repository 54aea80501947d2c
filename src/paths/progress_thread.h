// The progress engine's configuration for a path whose own thread drives
// the communicator while device work runs (the staged and the GPUDirect
// paths): the communicator's timeout; its first failure goes to the
// communicator (driverFailed: a revoke handed to this thread sends its
// notice from here, takeRevoke); a revoke or an abort requested elsewhere
// stops every wait of the thread at once (stopCode); the thread may run on
// every core the helpers may use. `alsoAtStart` runs on the thread after
// that (e.g. the device its CUDA copies use).
#pragma once

#include <cstddef>
#include <functional>

#include "comm/comm.h"
#include "progress/progress_engine.h"

namespace gdr::paths {

progress::EngineConfig progressThreadConfig(Communicator& comm, size_t ringSlots, const char* who,
                                            std::function<void()> alsoAtStart = nullptr);

}  // namespace gdr::paths
