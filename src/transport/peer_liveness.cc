#include "transport/peer_liveness.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

namespace gdr::transport {

bool processAlive(pid_t pid) {
  if (kill(pid, 0) != 0 && errno == ESRCH) return false;
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno != ENOENT;
  char buf[512];
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0) return true;
  buf[n] = '\0';
  // Format: "pid (comm) S ...": the state follows the last ')'.
  const char* p = std::strrchr(buf, ')');
  if (!p || p[1] == '\0' || p[2] == '\0') return true;
  char state = p[2];
  return state != 'Z' && state != 'X';
}

}  // namespace gdr::transport
