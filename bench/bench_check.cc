// Result validation for gdr-bench --check. Inputs are small integers (or
// ones and twos for prod), so every reduction is exact in every type and the
// check can demand equality; avg is compared with a per-type tolerance.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "bench_ops.h"

namespace bench {

namespace {

int64_t valueOf(const Options& o, int rank, size_t i, unsigned seed) {
  uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull ^ (static_cast<uint64_t>(rank) + 1) * 0xC2B2AE3D27D4EB4Full ^ seed;
  h ^= h >> 29;
  if (o.op == gdrProd) return 1 + static_cast<int64_t>(h % 2);
  bool isUnsigned = o.type == gdrUint8 || o.type == gdrUint32 || o.type == gdrUint64;
  return isUnsigned ? static_cast<int64_t>(h % 9) : static_cast<int64_t>(h % 9) - 4;
}

uint16_t toHalf(double v) {  // exact for the small integers used here
  if (v == 0) return 0;
  uint16_t sign = v < 0 ? 0x8000 : 0;
  double a = std::fabs(v);
  int e;
  double m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  uint16_t exp = static_cast<uint16_t>(e - 1 + 15);
  uint16_t man = static_cast<uint16_t>((m * 2 - 1) * 1024 + 0.5);
  return sign | static_cast<uint16_t>(exp << 10) | man;
}

double fromHalf(uint16_t h) {
  int exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  double v = exp == 0 ? std::ldexp(man, -24) : exp == 31 ? INFINITY : std::ldexp(1024 + man, exp - 25);
  return (h & 0x8000) ? -v : v;
}

uint16_t toBf16(double v) {
  float f = static_cast<float>(v);
  uint32_t x;
  std::memcpy(&x, &f, 4);
  return static_cast<uint16_t>(x >> 16);
}

double fromBf16(uint16_t b) {
  uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

void store(gdrDataType_t t, void* buf, size_t i, double v) {
  switch (t) {
    case gdrInt8: static_cast<int8_t*>(buf)[i] = static_cast<int8_t>(v); break;
    case gdrUint8: static_cast<uint8_t*>(buf)[i] = static_cast<uint8_t>(v); break;
    case gdrInt32: static_cast<int32_t*>(buf)[i] = static_cast<int32_t>(v); break;
    case gdrUint32: static_cast<uint32_t*>(buf)[i] = static_cast<uint32_t>(v); break;
    case gdrInt64: static_cast<int64_t*>(buf)[i] = static_cast<int64_t>(v); break;
    case gdrUint64: static_cast<uint64_t*>(buf)[i] = static_cast<uint64_t>(v); break;
    case gdrFloat16: static_cast<uint16_t*>(buf)[i] = toHalf(v); break;
    case gdrBfloat16: static_cast<uint16_t*>(buf)[i] = toBf16(v); break;
    case gdrFloat32: static_cast<float*>(buf)[i] = static_cast<float>(v); break;
    case gdrFloat64: static_cast<double*>(buf)[i] = v; break;
    default: break;
  }
}

double load(gdrDataType_t t, const void* buf, size_t i) {
  switch (t) {
    case gdrInt8: return static_cast<const int8_t*>(buf)[i];
    case gdrUint8: return static_cast<const uint8_t*>(buf)[i];
    case gdrInt32: return static_cast<const int32_t*>(buf)[i];
    case gdrUint32: return static_cast<const uint32_t*>(buf)[i];
    case gdrInt64: return static_cast<double>(static_cast<const int64_t*>(buf)[i]);
    case gdrUint64: return static_cast<double>(static_cast<const uint64_t*>(buf)[i]);
    case gdrFloat16: return fromHalf(static_cast<const uint16_t*>(buf)[i]);
    case gdrBfloat16: return fromBf16(static_cast<const uint16_t*>(buf)[i]);
    case gdrFloat32: return static_cast<const float*>(buf)[i];
    case gdrFloat64: return static_cast<const double*>(buf)[i];
    default: return 0;
  }
}

bool isInt(gdrDataType_t t) { return t <= gdrUint64; }

// The reduction over all ranks of element i, in the type's arithmetic
// (integers wrap as the library's do).
double expectedReduce(const Options& o, size_t i, int nranks, unsigned seed) {
  std::vector<double> vals(nranks);
  for (int r = 0; r < nranks; ++r) vals[r] = static_cast<double>(valueOf(o, r, i, seed));
  double acc = vals[0];
  for (int r = 1; r < nranks; ++r) {
    switch (o.op) {
      case gdrSum: case gdrAvg: acc += vals[r]; break;
      case gdrProd: acc *= vals[r]; break;
      case gdrMax: acc = std::max(acc, vals[r]); break;
      case gdrMin: acc = std::min(acc, vals[r]); break;
      default: break;
    }
  }
  // Wrap integers to the type's width.
  std::vector<char> one(8);
  store(o.type, one.data(), 0, acc);
  if (isInt(o.type)) acc = load(o.type, one.data(), 0);
  if (o.op == gdrAvg) acc = isInt(o.type) ? std::trunc(acc / nranks) : acc / nranks;
  return acc;
}

bool close(gdrDataType_t t, double got, double want) {
  double tol = t == gdrFloat16 ? 1e-3 : t == gdrBfloat16 ? 1e-2 : t == gdrFloat32 ? 1e-6 : 1e-12;
  if (isInt(t)) return got == want;
  return std::fabs(got - want) <= tol * std::max(1.0, std::fabs(want));
}

}  // namespace

void fillInputs(const Options& o, const Plan& p, const Bufs& b, int rank, int nranks, unsigned seed) {
  size_t ts = typeSize(o.type);
  if (o.coll == Coll::Bcast) {
    if (rank != o.root) std::memset(b.recv, 0x7b, p.recvBytes);
    else for (size_t i = 0; i < p.recvBytes / ts; ++i) store(o.type, b.recv, i, static_cast<double>(valueOf(o, o.root, i, seed)));
    return;
  }
  if (o.coll == Coll::AllToAll) {  // block d, element j: from (rank) to d
    for (int d = 0; d < nranks; ++d)
      for (size_t j = 0; j < p.count; ++j) store(o.type, b.send, d * p.count + j, valueOf(o, rank, d * p.count + j, seed));
    return;
  }
  for (size_t i = 0; i < p.sendBytes / ts; ++i) store(o.type, b.send, i, valueOf(o, rank, i, seed));
}

void poisonOutputs(const Plan& p, const Bufs& b) {
  if (b.recv && p.recvBytes) std::memset(b.recv, 0x7b, p.recvBytes);
}

size_t countErrors(const Options& o, const Plan& p, const Bufs& b, int rank, int nranks, unsigned seed) {
  size_t bad = 0;
  auto check = [&](size_t idx, double want) {
    if (!close(o.type, load(o.type, b.recv, idx), want)) ++bad;
  };
  switch (o.coll) {
    case Coll::AllReduce:
      for (size_t i = 0; i < p.count; ++i) check(i, expectedReduce(o, i, nranks, seed));
      break;
    case Coll::Reduce:
      if (rank == o.root)
        for (size_t i = 0; i < p.count; ++i) check(i, expectedReduce(o, i, nranks, seed));
      break;
    case Coll::ReduceScatter:
      for (size_t i = 0; i < p.count; ++i) check(i, expectedReduce(o, rank * p.count + i, nranks, seed));
      break;
    case Coll::AllGather:
      for (int r = 0; r < nranks; ++r)
        for (size_t i = 0; i < p.count; ++i) check(r * p.count + i, static_cast<double>(valueOf(o, r, i, seed)));
      break;
    case Coll::Bcast:
      for (size_t i = 0; i < p.count; ++i) check(i, static_cast<double>(valueOf(o, o.root, i, seed)));
      break;
    case Coll::AllToAll:
      for (int s = 0; s < nranks; ++s)
        for (size_t j = 0; j < p.count; ++j)
          check(s * p.count + j, static_cast<double>(valueOf(o, s, rank * p.count + j, seed)));
      break;
    case Coll::SendRecv: {
      int peer = rank ^ 1;
      if (peer < nranks)
        for (size_t i = 0; i < p.count; ++i) check(i, static_cast<double>(valueOf(o, peer, i, seed)));
      break;
    }
    case Coll::Barrier: break;
  }
  return bad;
}

}  // namespace bench
