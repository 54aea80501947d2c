// Whether a process of this host still runs. A killed process that its
// parent has not reaped yet is a zombie: it counts as dead.
#pragma once

#include <sys/types.h>

namespace gdr::transport {
bool processAlive(pid_t pid);
}
