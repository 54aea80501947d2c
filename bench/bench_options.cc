#include "bench_options.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <strings.h>

namespace bench {

namespace {

const char* kUsage =
    "usage: gdr-bench "
    "<allreduce|allgather|reducescatter|bcast|reduce|alltoall|alltoallv|sendrecv|barrier> "
    "[options]\n"
    "  --min BYTES        smallest message (default 4; k/m/g suffixes allowed)\n"
    "  --max BYTES        largest message (default 64m)\n"
    "  --iters N          timed iterations per size up to 1 MiB (default 200; a tenth above)\n"
    "  --warmup N         untimed iterations first (default 20)\n"
    "  --reps N           blocks of --iters per size up to 1 MiB, gdrcoll and --compare's peer\n"
    "                     alternating; each reports its median block (default 5; 1 above)\n"
    "  --mem host|cuda    buffer memory (default host)\n"
    "  --type T           int8 uint8 int32 uint32 int64 uint64 float16 bfloat16 float32 float64\n"
    "                     float8e4m3 float8e5m2 (fp8: no --compare mpi, MPI has no fp8)\n"
    "  --op O             sum prod max min avg (default sum)\n"
    "  --root R           root of bcast/reduce (default 0)\n"
    "  --check            validate every size's result against a host reference\n"
    "  --compare mpi      also time the system MPI on the same buffers; print the ratio\n"
    "  --compare nccl     (with --mem cuda) also time the system NCCL on the same buffers and "
    "stream\n"
    "  --graph            (with --mem cuda) capture the timed iterations in a CUDA graph, time its "
    "replay\n"
    "  --window           (with --mem cuda) register the buffers as symmetric windows: "
    "gdrCommWindowRegister\n"
    "                     (GDR_WIN_SYMMETRIC); with --compare nccl, NCCL's own buffers from "
    "ncclMemAlloc\n"
    "                     registered with ncclCommWindowRegister (NCCL_WIN_COLL_SYMMETRIC)\n"
    "  --csv FILE         also write the table as CSV (rank 0)\n"
    "  --launcher L       auto (default), mpi, pmix or env: how ranks find each other. pmix and "
    "env make\n"
    "                     no MPI call (gdrCommInitFromEnv; no --compare); auto takes mpi under "
    "mpirun,\n"
    "                     pmix under another PMIx server (srun --mpi=pmix), env under torchrun, "
    "Slurm\n"
    "                     or GDR_COMM_ID variables, and mpi when nothing launched the process\n"
    "  --json FILE        also write it as JSON (rank 0; scripts/sim/plot.py draws it)\n"
    "Sizes follow nccl-tests: the total buffer in bytes (allgather: the output; reducescatter and\n"
    "alltoall(v): the input; alltoallv with equal blocks). busbw uses nccl-tests' factors.\n";

const char* kTypes[] = {"int8",    "uint8",   "int32",   "uint32",     "int64",     "uint64",
                        "float16", "bfloat16", "float32", "float64", "float8e4m3", "float8e5m2"};
static_assert(sizeof(kTypes) / sizeof(kTypes[0]) == gdrNumTypes, "a name per gdrDataType_t");
const char* kOps[] = {"sum", "prod", "max", "min", "avg"};

[[noreturn]] void fail(int rank, const char* fmt, const char* arg) {
  if (rank == 0) {
    std::fprintf(stderr, "gdr-bench: ");
    std::fprintf(stderr, fmt, arg);
    std::fprintf(stderr, "\n%s", kUsage);
  }
  std::exit(2);
}

size_t parseBytes(const char* s, int rank) {
  char* end = nullptr;
  double v = std::strtod(s, &end);
  if (end == s || v < 0) fail(rank, "not a size: '%s'", s);
  if (*end == 'k' || *end == 'K') v *= 1024, ++end;
  else if (*end == 'm' || *end == 'M') v *= 1024 * 1024, ++end;
  else if (*end == 'g' || *end == 'G') v *= 1024.0 * 1024 * 1024, ++end;
  if (*end) fail(rank, "not a size: '%s'", s);
  return static_cast<size_t>(v);
}

int parseInt(const char* s, int rank) {
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (end == s || *end || v < 0 || v > 100000000) fail(rank, "not a non-negative integer: '%s'", s);
  return static_cast<int>(v);
}

}  // namespace

const char* typeName(gdrDataType_t t) { return kTypes[t]; }
size_t typeSize(gdrDataType_t t) {
  static const size_t s[] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8, 1, 1};
  static_assert(sizeof(s) / sizeof(s[0]) == gdrNumTypes, "a size per gdrDataType_t");
  return s[t];
}

Options parse(int argc, char** argv, int rank) {
  Options o;
  if (argc < 2) fail(rank, "%s", "missing collective");
  if (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    if (rank == 0) std::printf("%s", kUsage);
    std::exit(0);
  }
  static const struct {
    const char* name;
    Coll c;
  } kColls[] = {{"allreduce", Coll::AllReduce}, {"allgather", Coll::AllGather}, {"reducescatter", Coll::ReduceScatter},
                {"bcast", Coll::Bcast},         {"reduce", Coll::Reduce},       {"alltoall", Coll::AllToAll},
                {"alltoallv", Coll::AllToAllv}, {"sendrecv", Coll::SendRecv},   {"barrier", Coll::Barrier}};
  bool found = false;
  for (auto& c : kColls)
    if (!std::strcmp(argv[1], c.name)) o.coll = c.c, o.collName = c.name, found = true;
  if (!found) fail(rank, "unknown collective '%s'", argv[1]);
  bool itersSet = false, warmupSet = false;
  for (int i = 2; i < argc; ++i) {
    const char* a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) fail(rank, "%s needs a value", a);
      return argv[++i];
    };
    if (!std::strcmp(a, "--min")) o.minBytes = parseBytes(value(), rank);
    else if (!std::strcmp(a, "--max")) o.maxBytes = parseBytes(value(), rank);
    else if (!std::strcmp(a, "--iters")) o.iters = parseInt(value(), rank), itersSet = true;
    else if (!std::strcmp(a, "--warmup")) o.warmup = parseInt(value(), rank), warmupSet = true;
    else if (!std::strcmp(a, "--reps")) o.reps = parseInt(value(), rank);
    else if (!std::strcmp(a, "--check")) o.check = true;
    else if (!std::strcmp(a, "--graph")) o.graph = true;
    else if (!std::strcmp(a, "--window"))
      o.window = true;
    else if (!std::strcmp(a, "--csv")) o.csv = value();
    else if (!std::strcmp(a, "--launcher")) {
      const char* v = value();  // acted on before parsing (bench_world.h)
      if (std::strcmp(v, "auto") && std::strcmp(v, "mpi") && std::strcmp(v, "pmix") &&
          std::strcmp(v, "env"))
        fail(rank, "--launcher must be auto, mpi, pmix or env, not '%s'", v);
    } else if (!std::strcmp(a, "--json"))
      o.json = value();
    else if (!std::strcmp(a, "--root"))
      o.root = parseInt(value(), rank);
    else if (!std::strcmp(a, "--mem")) {
      const char* v = value();
      if (!std::strcmp(v, "host")) o.cuda = false;
      else if (!std::strcmp(v, "cuda")) o.cuda = true;
      else fail(rank, "--mem must be host or cuda, not '%s'", v);
    } else if (!std::strcmp(a, "--compare")) {
      const char* v = value();
      if (!std::strcmp(v, "mpi")) o.compareMpi = true;
      else if (!std::strcmp(v, "nccl")) o.compareNccl = true;  // with --mem cuda
      else fail(rank, "--compare supports 'mpi' or 'nccl', not '%s'", v);
    } else if (!std::strcmp(a, "--type")) {
      const char* v = value();
      bool ok = false;
      for (int t = 0; t < gdrNumTypes; ++t)
        if (!strcasecmp(v, kTypes[t])) o.type = static_cast<gdrDataType_t>(t), ok = true;
      if (!ok) fail(rank, "unknown type '%s'", v);
    } else if (!std::strcmp(a, "--op")) {
      const char* v = value();
      bool ok = false;
      for (int p = 0; p < gdrNumOps; ++p)
        if (!strcasecmp(v, kOps[p])) o.op = static_cast<gdrRedOp_t>(p), ok = true;
      if (!ok) fail(rank, "unknown op '%s'", v);
    } else {
      fail(rank, "unknown option '%s'", a);
    }
  }
  if (o.minBytes > o.maxBytes) fail(rank, "%s", "--min is larger than --max");
  if (o.reps < 1) fail(rank, "%s", "--reps must be at least 1");
  if (itersSet) o.itersLarge = o.iters > 10 ? o.iters / 10 : o.iters;
  if (warmupSet) o.warmupLarge = o.warmup > 5 ? o.warmup / 5 : o.warmup;
  return o;
}

}  // namespace bench
