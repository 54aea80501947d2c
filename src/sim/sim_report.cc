#include "sim/sim_report.h"

#include <cstdlib>

#include "core/error.h"

#ifndef GDR_SIM_DEFAULT_CALIBRATION
#define GDR_SIM_DEFAULT_CALIBRATION ""
#endif

namespace gdr::sim {

std::string defaultCalibration() {
  const char* env = std::getenv("GDR_SIM_CALIBRATION");
  return env && *env ? env : GDR_SIM_DEFAULT_CALIBRATION;
}

Cluster makeCluster(const std::string& name, const std::string& calibration,
                    const std::string& overrides, int ranks) {
  Cluster c;
  const bool isPreset = preset(name, &c);
  const std::string calib = calibration.empty() ? defaultCalibration() : calibration;
  if (!calib.empty()) load(c, calib);
  if (!isPreset)
    load(c, name);
  else
    c.name = name;
  apply(c, overrides);
  if (ranks > 0) {
    if (c.hosts == 1)
      c.ranksPerHost = ranks;
    else {
      GDR_CHECK_ARG(ranks % c.ranksPerHost == 0, "%d ranks is not a multiple of %d per host", ranks,
                    c.ranksPerHost);
      c.hosts = ranks / c.ranksPerHost;
    }
  }
  return c;
}

void writeReport(FILE* out, const std::string& format, const Cluster& c, coll::CollKind kind,
                 const std::vector<Prediction>& rows) {
  const char* coll = coll::collName(kind);
  if (format == "csv") {
    std::fprintf(out, "coll,ranks,cluster,size,count,avg_us,algbw,busbw,algo,walker\n");
    for (const Prediction& p : rows)
      std::fprintf(out, "%s,%d,%s,%zu,%zu,%.3f,%.4f,%.4f,%s,%s\n", coll, c.nranks(), c.name.c_str(),
                   p.bytes, p.count, p.timeUs, p.algbw, p.busbw, p.algo.c_str(), p.walker.c_str());
  } else if (format == "json") {
    std::fprintf(
        out,
        "{\"tool\": \"gdr-sim\", \"coll\": \"%s\", \"ranks\": %d, \"cluster\": \"%s\", \"rows\": [",
        coll, c.nranks(), c.name.c_str());
    for (size_t i = 0; i < rows.size(); ++i) {
      const Prediction& p = rows[i];
      std::fprintf(out,
                   "%s\n  {\"size\": %zu, \"count\": %zu, \"avg_us\": %.3f, \"algbw\": %.4f, "
                   "\"busbw\": %.4f, "
                   "\"algo\": \"%s\", \"walker\": \"%s\", \"yields_per_rank_call\": %.3f}",
                   i ? "," : "", p.bytes, p.count, p.timeUs, p.algbw, p.busbw, p.algo.c_str(),
                   p.walker.c_str(), p.yieldsPerCall);
    }
    std::fprintf(out, "\n]}\n");
  } else {
    GDR_CHECK_ARG(format == "text", "--format must be text, csv or json, not '%s'", format.c_str());
    std::fprintf(out, "# gdr-sim %s  ranks %d  cluster %s (predicted)\n", coll, c.nranks(),
                 c.name.c_str());
    std::fprintf(out, "# %10s %10s %10s %11s %11s  %-14s %s\n", "size(B)", "count", "avg(us)",
                 "algbw(GB/s)", "busbw(GB/s)", "algo", "walker");
    for (const Prediction& p : rows)
      std::fprintf(out, "  %10zu %10zu %10.2f %11.3f %11.3f  %-14s %s\n", p.bytes, p.count,
                   p.timeUs, p.algbw, p.busbw, p.algo.c_str(), p.walker.c_str());
  }
}

}  // namespace gdr::sim
