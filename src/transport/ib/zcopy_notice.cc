#include "transport/ib/zcopy_notice.h"

#include <cstring>

namespace gdr::transport::ib {

namespace {

// Every frame: a two-letter tag, a version, the QP, then its own fields,
// little-endian on every host this runs on (both ends are one build).
struct Head {
  char tag[2];
  uint8_t version;
  uint8_t qp;
  uint32_t count;
};
static_assert(sizeof(Head) == 8, "frame head layout");
constexpr uint8_t kVersion = 1;

struct WireRef {
  uint64_t ticket;
  uint32_t idx;
  uint32_t pad;
};
static_assert(sizeof(WireRef) == 16, "chunk reference layout");
static_assert(sizeof(Head) + kMaxZQuery * (sizeof(WireRef) + 1) <= Endpoint::kMaxNotice,
              "the largest answer fits in a notice");
static_assert(sizeof(Head) + sizeof(ZcopyCts) <= Endpoint::kMaxNotice, "a copy fits in a notice");

std::string head(const char* tag, int qp, uint32_t count, size_t body) {
  Head h{{tag[0], tag[1]}, kVersion, static_cast<uint8_t>(qp), count};
  std::string s(sizeof(h) + body, '\0');
  std::memcpy(&s[0], &h, sizeof(h));
  return s;
}

// The head of `bytes` if it is a `tag` frame of this version for a QP
// below nQps.
bool readHead(const std::string& bytes, const char* tag, int nQps, Head* h) {
  if (bytes.size() < sizeof(Head)) return false;
  std::memcpy(h, bytes.data(), sizeof(Head));
  return h->tag[0] == tag[0] && h->tag[1] == tag[1] && h->version == kVersion && h->qp < nQps;
}

void putRefs(std::string& s, const std::vector<ZChunkRef>& refs) {
  for (size_t i = 0; i < refs.size(); ++i) {
    WireRef r{refs[i].ticket, refs[i].idx, 0};
    std::memcpy(&s[sizeof(Head) + i * sizeof(r)], &r, sizeof(r));
  }
}

void getRefs(const std::string& s, uint32_t n, std::vector<ZChunkRef>* refs) {
  refs->resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    WireRef r;
    std::memcpy(&r, s.data() + sizeof(Head) + i * sizeof(r), sizeof(r));
    (*refs)[i] = ZChunkRef{r.ticket, r.idx};
  }
}

}  // namespace

std::string encodeZQuery(const ZQuery& q) {
  std::string s = head("ZQ", q.qp, static_cast<uint32_t>(q.chunks.size()),
                       q.chunks.size() * sizeof(WireRef));
  putRefs(s, q.chunks);
  return s;
}

std::string encodeZAnswer(const ZAnswer& a) {
  const size_t n = a.chunks.size();
  std::string s = head("ZA", a.qp, static_cast<uint32_t>(n), n * (sizeof(WireRef) + 1));
  putRefs(s, a.chunks);
  for (size_t i = 0; i < n; ++i) s[sizeof(Head) + n * sizeof(WireRef) + i] = i < a.landed.size() && a.landed[i];
  return s;
}

std::string encodeCtsCopy(const CtsCopy& c) {
  std::string s = head("ZC", c.qp, 1, sizeof(ZcopyCts));
  std::memcpy(&s[sizeof(Head)], &c.cts, sizeof(ZcopyCts));
  return s;
}

bool decodeZQuery(const std::string& bytes, int nQps, ZQuery* out) {
  Head h;
  if (!readHead(bytes, "ZQ", nQps, &h) || h.count > kMaxZQuery ||
      bytes.size() != sizeof(Head) + h.count * sizeof(WireRef))
    return false;
  out->qp = h.qp;
  getRefs(bytes, h.count, &out->chunks);
  return true;
}

bool decodeZAnswer(const std::string& bytes, int nQps, ZAnswer* out) {
  Head h;
  if (!readHead(bytes, "ZA", nQps, &h) || h.count > kMaxZQuery ||
      bytes.size() != sizeof(Head) + h.count * (sizeof(WireRef) + 1))
    return false;
  out->qp = h.qp;
  getRefs(bytes, h.count, &out->chunks);
  out->landed.assign(bytes.begin() + static_cast<long>(sizeof(Head) + h.count * sizeof(WireRef)),
                     bytes.end());
  for (uint8_t v : out->landed)
    if (v > 1) return false;
  return true;
}

bool decodeCtsCopy(const std::string& bytes, int nQps, CtsCopy* out) {
  Head h;
  if (!readHead(bytes, "ZC", nQps, &h) || h.count != 1 ||
      bytes.size() != sizeof(Head) + sizeof(ZcopyCts))
    return false;
  out->qp = h.qp;
  std::memcpy(&out->cts, bytes.data() + sizeof(Head), sizeof(ZcopyCts));
  return true;
}

}  // namespace gdr::transport::ib
