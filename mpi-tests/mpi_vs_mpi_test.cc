// gdrcoll against the system MPI: each collective x type x op x size x
// in-place runs through both on the same fresh random inputs (seeded by rank
// 0 each run), outputs poisoned first, compared element by element. Integer
// types must match exactly; floats within a tolerance per type (summation
// order differs). fp16/bf16 and avg, which MPI lacks, are computed by MPI in
// double from the same inputs. Exits non-zero on any mismatch, and ends with
// "N passed, N failed".
#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gdrcoll_mpi.h"
#include "reference.h"

namespace {

int gRank = 0, gSize = 1;
long gPassed = 0, gFailed = 0;

size_t tsize(gdrDataType_t t) {
  static const size_t s[] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8};
  return s[t];
}
const char* tname(gdrDataType_t t) {
  static const char* n[] = {"int8", "uint8", "int32", "uint32", "int64", "uint64", "fp16", "bf16", "fp32", "fp64"};
  return n[t];
}

// fp16/bf16 have no MPI type: their reference runs in double. Avg runs as
// MPI's sum, divided afterwards.
MPI_Datatype mpiType(gdrDataType_t t) {
  MPI_Datatype m = gdrTypeToMPI(t);
  return m == MPI_DATATYPE_NULL ? MPI_DOUBLE : m;
}
MPI_Op mpiOp(gdrRedOp_t op) { return op == gdrAvg ? MPI_SUM : gdrOpToMPI(op); }

// Random inputs: integers over their whole range (wrapping must agree with
// MPI's), floats in [-1, 1] (prod: [0.5, 1.5] to stay in range).
std::vector<char> randomInput(gdrDataType_t t, gdrRedOp_t op, size_t n, std::mt19937_64& rng) {
  std::vector<char> b(n * tsize(t) + 1);
  std::uniform_real_distribution<double> real(op == gdrProd ? 0.5 : -1.0, op == gdrProd ? 1.5 : 1.0);
  for (size_t i = 0; i < n; ++i) {
    if (gdrref::isInteger(t)) {
      uint64_t v = rng();
      std::memcpy(b.data() + i * tsize(t), &v, tsize(t));
    } else {
      gdrref::store(t, b.data(), i, real(rng));
    }
  }
  return b;
}

// What MPI computes for a reduction of `in` (per-rank inputs of n
// elements), as doubles (floats) or as raw bytes of the type (integers,
// compared exactly). 8-bit integers reduce widened to int64 and are wrapped
// back: Debian 12's Open MPI 4.1.4 saturates 8-bit MPI_SUM in its AVX
// component once a call has 32 or more elements (127 for 3 x 100 as int8),
// where MPI (and gdrcoll) wrap. fp16/bf16 reduce in double from the same
// rounded inputs. Avg is MPI's sum divided by the rank count afterwards.
struct Want {
  std::vector<double> real;
  std::vector<char> raw;
};

template <typename T>
void divideRaw(std::vector<char>& raw, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
    v = static_cast<T>(v / static_cast<T>(gSize));
    std::memcpy(raw.data() + i * sizeof(T), &v, sizeof(T));
  }
}

Want mpiReduce(gdrDataType_t t, gdrRedOp_t op, const std::vector<char>& in, size_t n) {
  Want w;
  const int cnt = static_cast<int>(n);
  if (gdrref::isInteger(t)) {
    w.raw.assign(n * tsize(t) + 1, 0);
    if (tsize(t) == 1) {
      std::vector<int64_t> wide(n), res(n);
      for (size_t i = 0; i < n; ++i)
        wide[i] = t == gdrInt8 ? static_cast<int8_t>(in[i]) : static_cast<uint8_t>(in[i]);
      MPI_Allreduce(wide.data(), res.data(), cnt, MPI_INT64_T, mpiOp(op), MPI_COMM_WORLD);
      for (size_t i = 0; i < n; ++i) w.raw[i] = static_cast<char>(res[i]);  // wraps mod 256
    } else {
      MPI_Allreduce(in.data(), w.raw.data(), cnt, mpiType(t), mpiOp(op), MPI_COMM_WORLD);
    }
    if (op == gdrAvg) {
      switch (t) {
        case gdrInt8: divideRaw<int8_t>(w.raw, n); break;
        case gdrUint8: divideRaw<uint8_t>(w.raw, n); break;
        case gdrInt32: divideRaw<int32_t>(w.raw, n); break;
        case gdrUint32: divideRaw<uint32_t>(w.raw, n); break;
        case gdrInt64: divideRaw<int64_t>(w.raw, n); break;
        default: divideRaw<uint64_t>(w.raw, n); break;
      }
    }
    return w;
  }
  w.real.assign(n, 0);
  if (t == gdrFloat32 || t == gdrFloat64) {
    std::vector<char> res(n * tsize(t) + 1);
    MPI_Allreduce(in.data(), res.data(), cnt, mpiType(t), mpiOp(op), MPI_COMM_WORLD);
    for (size_t i = 0; i < n; ++i) w.real[i] = gdrref::load(t, res.data(), i);
  } else {
    std::vector<double> d(n);
    for (size_t i = 0; i < n; ++i) d[i] = gdrref::load(t, in.data(), i);
    MPI_Allreduce(d.data(), w.real.data(), cnt, MPI_DOUBLE, mpiOp(op), MPI_COMM_WORLD);
  }
  if (op == gdrAvg)
    for (auto& v : w.real) v /= gSize;
  return w;
}

bool close(gdrDataType_t t, gdrRedOp_t op, double got, double want) {
  if (std::isinf(want) || std::isinf(got)) return got == want;
  // A sum of n values in [-1, 1] rounded in another order.
  double eps = t == gdrFloat16 ? 2e-3 : t == gdrBfloat16 ? 1.6e-2 : t == gdrFloat32 ? 2e-6 : 1e-14;
  double scale = std::max(std::fabs(want), op == gdrProd ? 1.0 : static_cast<double>(gSize));
  return std::fabs(got - want) <= eps * scale * 2;
}

void report(bool ok, const std::string& what) {
  int bad = ok ? 0 : 1, anyBad = 0;
  MPI_Allreduce(&bad, &anyBad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (anyBad) {
    ++gFailed;
    if (!ok) std::fprintf(stderr, "[rank %d] FAILED: %s\n", gRank, what.c_str());
  } else {
    ++gPassed;
  }
}

std::string label(const char* coll, gdrDataType_t t, gdrRedOp_t op, size_t n, bool ip) {
  char b[160];
  std::snprintf(b, sizeof(b), "%s type %s op %d count %zu inplace %d", coll, tname(t), op, n, ip);
  return b;
}

template <typename Want>
bool compare(gdrDataType_t t, gdrRedOp_t op, const void* got, size_t n, Want&& want, std::string* why) {
  for (size_t i = 0; i < n; ++i) {
    double g = gdrref::load(t, got, i), w = want(i);
    if (!close(t, op, g, w)) {
      char b[128];
      std::snprintf(b, sizeof(b), ": element %zu is %.17g, MPI says %.17g", i, g, w);
      *why += b;
      return false;
    }
  }
  return true;
}

// Element i of `got` against element `off + i` of the reference.
bool compareReduced(gdrDataType_t t, gdrRedOp_t op, const void* got, size_t n, const Want& w, size_t off,
                    std::string* why) {
  if (gdrref::isInteger(t)) {
    const size_t ts = tsize(t);
    for (size_t i = 0; i < n; ++i)
      if (std::memcmp(static_cast<const char*>(got) + i * ts, w.raw.data() + (off + i) * ts, ts)) {
        char b[128];
        std::snprintf(b, sizeof(b), ": element %zu is %.17g, MPI says %.17g", i, gdrref::load(t, got, i),
                      gdrref::load(t, w.raw.data(), off + i));
        *why += b;
        return false;
      }
    return true;
  }
  return compare(t, op, got, n, [&](size_t i) { return w.real[off + i]; }, why);
}

void check(gdrResult_t r, gdrComm_t comm, std::string* why) {
  if (r != gdrSuccess) *why += std::string(": gdrcoll returned ") + gdrGetLastError(comm);
}

void reductions(gdrComm_t comm, gdrDataType_t t, gdrRedOp_t op, size_t n, bool ip, std::mt19937_64& rng) {
  const size_t ts = tsize(t);
  // all-reduce
  {
    auto in = randomInput(t, op, n, rng);
    auto want = mpiReduce(t, op, in, n);
    std::vector<char> out(n * ts + 1, 0x5a);
    if (ip) out = in;
    std::string why = label("allreduce", t, op, n, ip);
    check(gdrAllReduce(ip ? GDR_IN_PLACE : in.data(), out.data(), n, t, op, comm, nullptr), comm, &why);
    report(compareReduced(t, op, out.data(), n, want, 0, &why), why);
  }
  // reduce to a root that moves with n
  {
    int root = static_cast<int>(n % gSize);
    auto in = randomInput(t, op, n, rng);
    auto want = mpiReduce(t, op, in, n);
    std::vector<char> out(n * ts + 1, 0x5a);
    bool rip = ip && gRank == root;
    if (rip) out = in;
    std::string why = label("reduce", t, op, n, ip);
    check(gdrReduce(rip ? GDR_IN_PLACE : in.data(), out.data(), n, t, op, root, comm, nullptr), comm, &why);
    bool ok = gRank != root || compareReduced(t, op, out.data(), n, want, 0, &why);
    report(ok, why);
  }
  // reduce-scatter: n elements per rank
  {
    auto in = randomInput(t, op, n * gSize, rng);
    auto want = mpiReduce(t, op, in, n * gSize);
    std::vector<char> out(ip ? in : std::vector<char>(n * ts + 1, 0x5a));
    std::string why = label("reducescatter", t, op, n, ip);
    check(gdrReduceScatter(ip ? GDR_IN_PLACE : in.data(), out.data(), n, t, op, comm, nullptr), comm, &why);
    report(compareReduced(t, op, out.data(), n, want, gRank * n, &why), why);
  }
}

void movement(gdrComm_t comm, gdrDataType_t t, size_t n, bool ip, std::mt19937_64& rng) {
  const size_t ts = tsize(t);
  MPI_Datatype bytes = MPI_BYTE;
  // broadcast from a root that moves with n
  {
    int root = static_cast<int>((n + 1) % gSize);
    auto buf = randomInput(t, gdrSum, n, rng);
    auto want = buf;
    MPI_Bcast(want.data(), static_cast<int>(n * ts), bytes, root, MPI_COMM_WORLD);
    if (gRank != root) std::memset(buf.data(), 0x5a, buf.size());
    std::string why = label("bcast", t, gdrSum, n, ip);
    check(gdrBroadcast(buf.data(), n, t, root, comm, nullptr), comm, &why);
    report(std::memcmp(buf.data(), want.data(), n * ts) == 0 || (why += ": differs", false), why);
  }
  // all-gather
  {
    auto in = randomInput(t, gdrSum, n, rng);
    std::vector<char> want(n * ts * gSize + 1), out(n * ts * gSize + 1, 0x5a);
    MPI_Allgather(in.data(), static_cast<int>(n * ts), bytes, want.data(), static_cast<int>(n * ts), bytes, MPI_COMM_WORLD);
    if (ip) std::memcpy(out.data() + gRank * n * ts, in.data(), n * ts);
    std::string why = label("allgather", t, gdrSum, n, ip);
    check(gdrAllGather(ip ? GDR_IN_PLACE : in.data(), n, out.data(), t, comm, nullptr), comm, &why);
    report(std::memcmp(out.data(), want.data(), n * ts * gSize) == 0 || (why += ": differs", false), why);
  }
  // all-to-all
  {
    auto in = randomInput(t, gdrSum, n * gSize, rng);
    std::vector<char> want(n * ts * gSize + 1), out(n * ts * gSize + 1, 0x5a);
    MPI_Alltoall(in.data(), static_cast<int>(n * ts), bytes, want.data(), static_cast<int>(n * ts), bytes, MPI_COMM_WORLD);
    if (ip) out = in;
    std::string why = label("alltoall", t, gdrSum, n, ip);
    check(gdrAllToAll(ip ? GDR_IN_PLACE : in.data(), n, out.data(), t, comm, nullptr), comm, &why);
    report(std::memcmp(out.data(), want.data(), n * ts * gSize) == 0 || (why += ": differs", false), why);
  }
  // all-to-all-v with uneven counts (zeros included)
  if (!ip) {
    std::vector<size_t> sc(gSize), sd(gSize), rc(gSize), rd(gSize);
    std::vector<int> isc(gSize), isd(gSize), irc(gSize), ird(gSize);
    size_t st = 0, rt = 0;
    for (int p = 0; p < gSize; ++p) {
      sc[p] = (gRank + 2 * p) % 3 * n, sd[p] = st, st += sc[p];
      rc[p] = (p + 2 * gRank) % 3 * n, rd[p] = rt, rt += rc[p];
      isc[p] = static_cast<int>(sc[p] * ts), isd[p] = static_cast<int>(sd[p] * ts);
      irc[p] = static_cast<int>(rc[p] * ts), ird[p] = static_cast<int>(rd[p] * ts);
    }
    auto in = randomInput(t, gdrSum, st, rng);
    std::vector<char> want(rt * ts + 1), out(rt * ts + 1, 0x5a);
    MPI_Alltoallv(in.data(), isc.data(), isd.data(), bytes, want.data(), irc.data(), ird.data(), bytes, MPI_COMM_WORLD);
    std::string why = label("alltoallv", t, gdrSum, n, ip);
    check(gdrAllToAllv(in.data(), sc.data(), sd.data(), out.data(), rc.data(), rd.data(), t, comm, nullptr), comm, &why);
    report(std::memcmp(out.data(), want.data(), rt * ts) == 0 || (why += ": differs", false), why);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &gRank);
  MPI_Comm_size(MPI_COMM_WORLD, &gSize);
  uint64_t seed = std::random_device{}();
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  std::mt19937_64 rng(seed * 1000003 + gRank);
  gdrComm_t comm = nullptr;
  if (gdrCommInitMPI(&comm, MPI_COMM_WORLD) != gdrSuccess) {
    std::fprintf(stderr, "gdrCommInitMPI failed: %s\n", gdrGetLastError(nullptr));
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const gdrDataType_t types[] = {gdrInt8, gdrUint8, gdrInt32, gdrUint32, gdrInt64,
                                 gdrUint64, gdrFloat16, gdrBfloat16, gdrFloat32, gdrFloat64};
  const gdrRedOp_t ops[] = {gdrSum, gdrProd, gdrMax, gdrMin, gdrAvg};
  const size_t sizes[] = {0, 1, 37, 100003};
  for (size_t n : sizes)
    for (bool ip : {false, true})
      for (gdrDataType_t t : types) {
        for (gdrRedOp_t op : ops) reductions(comm, t, op, n, ip, rng);
        movement(comm, t, n, ip, rng);
      }
  std::string why = "barrier";
  check(gdrBarrier(comm, nullptr), comm, &why);
  report(why == "barrier", why);
  gdrCommDestroy(comm);
  if (gRank == 0) {
    std::printf("seed %llu, %d ranks\n", static_cast<unsigned long long>(seed), gSize);
    std::printf("%ld passed, %ld failed\n", gPassed, gFailed);
  }
  MPI_Finalize();
  return gFailed ? 1 : 0;
}
