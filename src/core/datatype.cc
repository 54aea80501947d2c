#include "core/datatype.h"

#include "core/error.h"

namespace gdr {

size_t typeSize(gdrDataType_t t) {
  static const size_t kSizes[] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8, 1, 1};
  static_assert(sizeof(kSizes) / sizeof(kSizes[0]) == gdrNumTypes, "a size per gdrDataType_t");
  if (static_cast<unsigned>(t) >= gdrNumTypes)
    throw InvalidArgument(strprintf("unknown datatype %d", (int)t));
  return kSizes[t];
}

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
