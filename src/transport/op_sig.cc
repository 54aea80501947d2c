#include "collectives/schedule.h"
#include "core/datatype.h"
#include "core/error.h"
#include "transport/transport.h"

namespace gdr::transport {

bool operator==(const OpSig& a, const OpSig& b) {
  return a.kind == b.kind && a.dtype == b.dtype && a.op == b.op && a.flags == b.flags &&
         a.root == b.root && a.count == b.count && a.seq == b.seq;
}

std::string describe(const OpSig& s) {
  static const char* kOps[] = {"sum", "prod", "max", "min", "avg"};
  // A peer's bytes: range-check before the value becomes an enum (loading an
  // out-of-range enum is undefined; the fuzzer found it).
  const char* type =
      s.dtype < gdrNumTypes ? gdr::typeName(static_cast<gdrDataType_t>(s.dtype)) : "unknown type";
  if (s.kind == kP2PKind)
    return strprintf("send/recv of %llu %s", (unsigned long long)s.count, type);
  auto kind = static_cast<coll::CollKind>(s.kind);
  std::string out = strprintf("%s #%llu (%s", coll::collName(kind), (unsigned long long)s.seq, type);
  if (kind == coll::CollKind::AllReduce || kind == coll::CollKind::Reduce ||
      kind == coll::CollKind::ReduceScatter)
    out += strprintf(", %s", s.op < 5 ? kOps[s.op] : "?");
  if (kind != coll::CollKind::AllToAllv && kind != coll::CollKind::Barrier)
    out += strprintf(", count %llu", (unsigned long long)s.count);
  if (kind == coll::CollKind::Broadcast || kind == coll::CollKind::Reduce)
    out += strprintf(", root %d", s.root);
  return out + ")";
}

}  // namespace gdr::transport
