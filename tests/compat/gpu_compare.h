// Dumps of the device NCCL-API test and their comparison (real NCCL vs
// gdrcoll's libnccl.so.2). A dump is a sequence of records: a header and the
// output buffer's bytes. Tolerance (documented in docs/compat.md): integers,
// max/min and exact-input cases identical; other float results identical or
// within one unit in the last place of the type at the result's magnitude
// (at least 1): fp64 1e-14, fp32 1e-6, fp16 1e-3, bf16 1e-2, fp8 E4M3 0.125,
// fp8 E5M2 0.25, relative. The summary says how many were not identical.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "nccl_values.h"

namespace gpucmp {

struct Record {
  char name[64];
  int type;
  int op;
  int exact;
  int pad;
  unsigned long long bytes;
};

inline double tolerance(ncclDataType_t t) {
  switch (t) {
    case ncclFloat64: return 1e-14;
    case ncclFloat32: return 1e-6;
    case ncclFloat16: return 1e-3;
    case ncclBfloat16: return 1e-2;
    case ncclFloat8e4m3: return 0.125;
    case ncclFloat8e5m2: return 0.25;
    default: return 0;
  }
}

inline bool readRecord(FILE* f, Record* r, std::vector<unsigned char>* data) {
  if (std::fread(r, sizeof(*r), 1, f) != 1) return false;
  data->resize(r->bytes);
  return r->bytes == 0 || std::fread(data->data(), 1, r->bytes, f) == r->bytes;
}

// 0: same results (within tolerance); 1: different; 2: unreadable.
inline int compareDumps(const char* pathA, const char* pathB) {
  FILE* a = std::fopen(pathA, "rb");
  FILE* b = std::fopen(pathB, "rb");
  if (!a || !b) {
    std::fprintf(stderr, "cannot open %s or %s\n", pathA, pathB);
    return 2;
  }
  Record ra{}, rb{};
  std::vector<unsigned char> da, db;
  long records = 0, elements = 0, inexact = 0, bad = 0;
  double worst = 0;
  while (readRecord(a, &ra, &da)) {
    if (!readRecord(b, &rb, &db) || std::string(ra.name) != rb.name || ra.bytes != rb.bytes) {
      std::fprintf(stderr, "record %ld: %s vs %s: different cases or sizes\n", records, ra.name, rb.name);
      return 1;
    }
    ++records;
    const auto t = static_cast<ncclDataType_t>(ra.type);
    const bool mustBeIdentical = ncclval::isInteger(t) || ra.exact || ra.op == ncclMax || ra.op == ncclMin;
    const size_t n = ra.bytes / ncclval::sizeOf(t);
    for (size_t i = 0; i < n; ++i) {
      ++elements;
      const double x = ncclval::get(da.data(), i, t), y = ncclval::get(db.data(), i, t);
      if (x == y || (std::isnan(x) && std::isnan(y))) continue;
      ++inexact;
      const double scale = std::max(1.0, std::max(std::fabs(x), std::fabs(y)));
      const double rel = std::fabs(x - y) / scale;
      if (rel > worst) worst = rel;
      if (mustBeIdentical || !(rel <= tolerance(t))) {
        if (bad++ < 10) std::fprintf(stderr, "%s [%zu]: %.9g vs %.9g\n", ra.name, i, x, y);
      }
    }
  }
  if (readRecord(b, &rb, &db)) {
    std::fprintf(stderr, "%s has more records than %s\n", pathB, pathA);
    return 1;
  }
  std::printf("compared %ld cases, %ld elements: %ld not bit-identical (worst relative difference %.3g), %ld outside "
              "tolerance\n",
              records, elements, inexact, worst, bad);
  std::fclose(a);
  std::fclose(b);
  return bad ? 1 : 0;
}

}  // namespace gpucmp
