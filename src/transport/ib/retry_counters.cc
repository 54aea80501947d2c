#include "transport/ib/retry_counters.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

namespace gdr::transport::ib {

namespace {
const char* const kNames[] = {"completer_retry_err", "rcvd_seq_err", "local_ack_timeout_err",
                              "packet_seq_err"};

bool readCounter(const std::string& path, uint64_t* v) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[32];
  ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = 0;
  *v = std::strtoull(buf, nullptr, 10);
  return true;
}
}  // namespace

RetryCounters::RetryCounters(const std::vector<std::string>& dirs) {
  for (const std::string& dir : dirs) {
    if (dir.empty()) continue;
    for (const char* n : kNames) {
      uint64_t v;
      std::string f = dir + "/" + n;
      if (readCounter(f, &v)) {
        files_.push_back(f);
        names_.push_back(n);
      }
    }
  }
  last_ = total();
}

std::string RetryCounters::portDir(const std::string& device, int port) {
  return "/sys/class/infiniband/" + device + "/ports/" + std::to_string(port) + "/hw_counters";
}

uint64_t RetryCounters::total() const {
  uint64_t sum = 0, v;
  for (const auto& f : files_)
    if (readCounter(f, &v)) sum += v;
  return sum;
}

uint64_t RetryCounters::poll(double nowUs) {
  if (files_.empty() || (lastUs_ >= 0 && nowUs - lastUs_ < kPeriodUs)) return 0;
  lastUs_ = nowUs;
  const uint64_t now = total();
  const uint64_t d = now >= last_ ? now - last_ : 0;
  last_ = now;
  return d;
}

}  // namespace gdr::transport::ib
