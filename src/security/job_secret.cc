#include "security/job_secret.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/params.h"

namespace gdr::security {

JobSecret generateJobSecret() {
  JobSecret s;
  randomBytes(s.key, sizeof(s.key));
  randomBytes(s.jobId, sizeof(s.jobId));
  return s;
}

bool keyFromFile(uint8_t key[kKeyBytes]) {
  std::string path = param::getString("GDR_AUTH_KEY_FILE");
  if (path.empty()) return false;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw SystemError("GDR_AUTH_KEY_FILE=" + path + ": cannot open", errno);
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    throw InvalidArgument("GDR_AUTH_KEY_FILE=" + path + " is not a regular file");
  }
  if (st.st_mode & (S_IRWXG | S_IRWXO)) {
    close(fd);
    throw InvalidArgument("GDR_AUTH_KEY_FILE=" + path +
                          " is accessible by group or others; chmod 600 it (it is the job's secret)");
  }
  std::vector<uint8_t> bytes;
  uint8_t buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      close(fd);
      throw SystemError("GDR_AUTH_KEY_FILE=" + path + ": read", e);
    }
    if (n == 0) break;
    bytes.insert(bytes.end(), buf, buf + n);
    if (bytes.size() > (1u << 20)) {
      close(fd);
      throw InvalidArgument("GDR_AUTH_KEY_FILE=" + path + " is larger than 1 MiB");
    }
  }
  close(fd);
  if (bytes.size() < 16)
    throw InvalidArgument("GDR_AUTH_KEY_FILE=" + path + " holds fewer than 16 bytes; use 32 random bytes");
  sha256(bytes.data(), bytes.size(), key);
  wipe(bytes.data(), bytes.size());
  wipe(buf, sizeof(buf));
  return true;
}

}  // namespace gdr::security
