#include "core/op_sig.h"

#include "core/call.h"
#include "core/datatype.h"
#include "core/error.h"

namespace gdr {

std::string describe(const OpSig& s) {
  static const char* kOps[] = {"sum", "prod", "max", "min", "avg"};
  // A peer's bytes: range-check before the value becomes an enum (loading an
  // out-of-range enum is undefined; the fuzzer found it).
  const char* type =
      s.dtype < gdrNumTypes ? gdr::typeName(static_cast<gdrDataType_t>(s.dtype)) : "unknown type";
  if (s.kind == kP2PKind)
    return strprintf("send/recv of %llu %s", (unsigned long long)s.count, type);
  // traitsOf names an out-of-range kind "unknown" (a peer's byte, as above).
  const auto kind = static_cast<CollKind>(s.kind);
  const CollTraits& t = traitsOf(kind);
  std::string out = strprintf("%s #%llu (%s", t.name, (unsigned long long)s.seq, type);
  if (t.reduces) out += strprintf(", %s", s.op < 5 ? kOps[s.op] : "?");
  const bool known = s.kind < kNumCollKinds;
  if (!known || (t.layout != Layout::Vectors && t.layout != Layout::None))
    out += strprintf(", count %llu", (unsigned long long)s.count);
  if (t.rooted) out += strprintf(", root %d", s.root);
  return out + ")";
}

}  // namespace gdr
