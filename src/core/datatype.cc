#include "core/datatype.h"

#include "core/error.h"

namespace gdr {

void throwUnknownType(gdrDataType_t t) { throw InvalidArgument(strprintf("unknown datatype %d", (int)t)); }

const char* typeName(gdrDataType_t t) {
  static const char* kNames[] = {"int8",    "uint8",   "int32",      "uint32",
                                 "int64",   "uint64",  "float16",    "bfloat16",
                                 "float32", "float64", "float8e4m3", "float8e5m2"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == gdrNumTypes, "a name per gdrDataType_t");
  return static_cast<unsigned>(t) < gdrNumTypes ? kNames[t] : "unknown";
}

const char* opName(gdrRedOp_t op) {
  static const char* kNames[] = {"sum", "prod", "max", "min", "avg"};
  return static_cast<unsigned>(op) < gdrNumOps ? kNames[op] : "unknown";
}

}  // namespace gdr
