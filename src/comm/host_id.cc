#include "comm/host_id.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "core/params.h"

namespace gdr {

std::string hostIdentity() {
  std::string forced = param::getString("GDR_HOST_ID");
  if (!forced.empty()) return forced;
  char host[64] = {0};
  gethostname(host, sizeof(host) - 1);
  std::string boot;
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  std::getline(f, boot);
  struct stat st {};
  // Processes in different PID (or IPC) namespaces cannot use each other's
  // shared memory names or pids, even on one kernel.
  stat("/proc/self/ns/pid", &st);
  unsigned long pidns = st.st_ino;
  stat("/proc/self/ns/ipc", &st);
  unsigned long ipcns = st.st_ino;
  // A network namespace stands for a separate host in our multi-host tests.
  stat("/proc/self/ns/net", &st);
  unsigned long netns = st.st_ino;
  return std::string(host) + "/" + boot.substr(0, 36) + "/" + std::to_string(pidns) + "/" +
         std::to_string(ipcns) + "/" + std::to_string(netns);
}

}  // namespace gdr
