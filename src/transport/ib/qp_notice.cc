#include "transport/ib/qp_notice.h"

#include <cstring>

namespace gdr::transport::ib {

namespace {

// The wire form: a tag, a version, then the fields, little-endian on every
// host this runs on (both ends are one build).
struct Wire {
  char tag[2];  // "QD"
  uint8_t version;
  uint8_t qp;
  int32_t status;
};
static_assert(sizeof(Wire) == 8, "QP-down notice layout");
constexpr uint8_t kVersion = 1;

}  // namespace

std::string encodeQpDown(const QpDownNotice& n) {
  Wire w{{'Q', 'D'}, kVersion, static_cast<uint8_t>(n.qp), n.status};
  return std::string(reinterpret_cast<const char*>(&w), sizeof(w));
}

bool decodeQpDown(const std::string& bytes, int nQps, QpDownNotice* out) {
  Wire w;
  if (bytes.size() != sizeof(w)) return false;
  std::memcpy(&w, bytes.data(), sizeof(w));
  if (w.tag[0] != 'Q' || w.tag[1] != 'D' || w.version != kVersion || w.qp >= nQps) return false;
  *out = QpDownNotice{w.qp, w.status};
  return true;
}

}  // namespace gdr::transport::ib
