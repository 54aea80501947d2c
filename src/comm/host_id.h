// Identity of the host (and PID namespace) this process runs in: ranks with
// equal ids can share memory and see each other's processes.
#pragma once

#include <string>

namespace gdr {
std::string hostIdentity();
}
