// The NIC's own count of retransmissions, as a congestion signal: RC hides
// them from the verbs consumer, but the device's port counters (sysfs
// hw_counters) show them. Which names exist depends on the driver: rxe has
// completer_retry_err (a timeout or NAK made the requester resend) and
// rcvd_seq_err (a sequence NAK arrived); mlx5 has local_ack_timeout_err and
// packet_seq_err. The counters are per port, so every connection on the
// port sees every retransmission: a coarse signal, read at most every
// kPeriodUs so the clean path pays nothing measurable. One reader sums the
// ports it is given: a connection keeps one per device, over the ports of
// that device its QPs use (peer_cc.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gdr::transport::ib {

class RetryCounters {
 public:
  static constexpr double kPeriodUs = 2000;

  // `dirs`: the ports' hw_counters folders, e.g.
  // /sys/class/infiniband/rxe0/ports/1/hw_counters. Missing names are
  // skipped; with none in any folder the reader is inert.
  explicit RetryCounters(const std::vector<std::string>& dirs);
  explicit RetryCounters(const std::string& dir) : RetryCounters(std::vector<std::string>{dir}) {}
  static std::string portDir(const std::string& device, int port);

  bool available() const { return !files_.empty(); }
  // The counter names found, one per file read (a name repeats per port).
  const std::vector<std::string>& names() const { return names_; }
  // Retransmissions since the previous call that read (0 when called again
  // within kPeriodUs of it).
  uint64_t poll(double nowUs);
  // The current sum, read now (for reports).
  uint64_t total() const;

 private:
  std::vector<std::string> files_, names_;
  uint64_t last_ = 0;
  double lastUs_ = -1;
};

}  // namespace gdr::transport::ib
