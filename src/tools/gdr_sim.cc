// gdr-sim: predicts what a collective costs on a described cluster, with the
// library's own schedules and selector (src/sim/, docs/simulator.md).
//
//   gdr-sim allreduce --cluster host-shm --ranks 4 --min 4 --max 64m
//   gdr-sim allreduce --cluster fattree2 --set hosts=2048 --min 256m --max 256m --algo ring
//   gdr-sim --list
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "collectives/schedule.h"
#include "core/error.h"
#include "sim/cluster.h"
#include "sim/predict.h"
#include "sim/sim_report.h"
#include "sim/tuning_writer.h"

using namespace gdr;

namespace {

[[noreturn]] void usage(int rc) {
  std::fprintf(
      rc ? stderr : stdout,
      "usage: gdr-sim COLL [options]   (COLL: allreduce allgather reducescatter bcast reduce "
      "alltoall "
      "alltoallv barrier)\n"
      "  --cluster NAME|FILE   preset or description file (default host-shm; --list shows "
      "presets)\n"
      "  --calibration FILE    link parameters (default: $GDR_SIM_CALIBRATION, else the repo's\n"
      "                        bench/results/sim/calibration.txt)\n"
      "  --set 'k=v; k=v'      override description keys (e.g. hosts=512; oversubscription=2)\n"
      "  --ranks N             rank count (one host: ranks on it; else hosts = N / "
      "ranks_per_host)\n"
      "  --min B --max B       sizes, doubling (k/m/g suffixes; default 4 .. 64m)\n"
      "  --algo NAME           force an algorithm (ring, rd, dbtree, rhd, binomial, chain, "
      "pairwise, direct)\n"
      "  --walker W            auto, events or symmetric\n"
      "  --type-size N         element bytes (default 4, float32)\n"
      "  --format F            text (default), csv or json;  --out FILE writes there\n"
      "  --dump                print the cluster's every key and exit\n"
      "  --tuning-out FILE     write the selector's table (GDR_TUNING_FILE) for this cluster over\n"
      "                        --min..--max from every algorithm's prediction, and exit\n");
  std::exit(rc);
}

size_t parseBytes(const char* s) {
  char* end = nullptr;
  double v = std::strtod(s, &end);
  if (end == s) usage(2);
  if (*end == 'k' || *end == 'K')
    v *= 1024;
  else if (*end == 'm' || *end == 'M')
    v *= 1024.0 * 1024;
  else if (*end == 'g' || *end == 'G')
    v *= 1024.0 * 1024 * 1024;
  return static_cast<size_t>(v);
}

bool parseColl(const std::string& s, coll::CollKind* k) {
  const char* names[] = {"allreduce",     "bcast",    "reduce",    "allgather",
                         "reducescatter", "alltoall", "alltoallv", "barrier"};
  for (int i = 0; i < 8; ++i)
    if (s == names[i] || (s == "broadcast" && i == 1)) {
      *k = static_cast<coll::CollKind>(i);
      return true;
    }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) usage(2);
  if (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) usage(0);
  if (!std::strcmp(argv[1], "--list")) {
    for (const std::string& p : sim::presetNames()) std::printf("%s\n", p.c_str());
    return 0;
  }
  try {
    sim::Query q;
    if (!parseColl(argv[1], &q.kind)) {
      std::fprintf(stderr, "gdr-sim: unknown collective '%s'\n", argv[1]);
      usage(2);
    }
    std::string clusterName = "host-shm", calib, overrides, format = "text", outPath, algo, tuningOut;
    int ranks = 0;
    size_t minB = 4, maxB = 64u << 20;
    bool dumpOnly = false;
    for (int i = 2; i < argc; ++i) {
      const char* a = argv[i];
      auto value = [&]() -> const char* {
        if (i + 1 >= argc) usage(2);
        return argv[++i];
      };
      if (!std::strcmp(a, "--cluster"))
        clusterName = value();
      else if (!std::strcmp(a, "--calibration"))
        calib = value();
      else if (!std::strcmp(a, "--set"))
        overrides += std::string(value()) + ";";
      else if (!std::strcmp(a, "--ranks"))
        ranks = std::atoi(value());
      else if (!std::strcmp(a, "--min"))
        minB = parseBytes(value());
      else if (!std::strcmp(a, "--max"))
        maxB = parseBytes(value());
      else if (!std::strcmp(a, "--algo"))
        algo = value();
      else if (!std::strcmp(a, "--walker"))
        q.walker = value();
      else if (!std::strcmp(a, "--type-size"))
        q.elemBytes = static_cast<size_t>(std::atoi(value()));
      else if (!std::strcmp(a, "--format"))
        format = value();
      else if (!std::strcmp(a, "--out"))
        outPath = value();
      else if (!std::strcmp(a, "--dump"))
        dumpOnly = true;
      else if (!std::strcmp(a, "--tuning-out"))
        tuningOut = value();
      else {
        std::fprintf(stderr, "gdr-sim: unknown option '%s'\n", a);
        usage(2);
      }
    }
    if (!algo.empty()) {
      q.forced = true;
      GDR_CHECK_ARG(coll::parseAlgo(algo, &q.algo), "unknown algorithm '%s'", algo.c_str());
    }
    const sim::Cluster c = sim::makeCluster(clusterName, calib, overrides, ranks);
    if (dumpOnly) {
      std::printf("%s", sim::dump(c).c_str());
      return 0;
    }
    if (!tuningOut.empty()) {
      FILE* f = std::fopen(tuningOut.c_str(), "w");
      GDR_CHECK_ARG(f != nullptr, "cannot write %s", tuningOut.c_str());
      std::fputs(sim::tuningTable(c, minB, maxB, q.elemBytes).c_str(), f);
      std::fclose(f);
      return 0;
    }
    std::vector<sim::Prediction> rows;
    if (q.kind == coll::CollKind::Barrier) minB = maxB = 0;
    for (size_t b = minB; b <= maxB; b = b ? b * 2 : 1) {
      q.bytes = b;
      if (b == 0) {
        rows.push_back(sim::predict(c, q));
        break;
      }
      const sim::Prediction p = sim::predict(c, q);
      if (p.count > 0) rows.push_back(p);  // gdr-bench skips sizes below one element per rank too
    }
    FILE* out = outPath.empty() ? stdout : std::fopen(outPath.c_str(), "w");
    GDR_CHECK_ARG(out != nullptr, "cannot write %s", outPath.c_str());
    sim::writeReport(out, format, c, q.kind, rows);
    if (out != stdout) std::fclose(out);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gdr-sim: %s\n", e.what());
    return 2;
  }
  return 0;
}
