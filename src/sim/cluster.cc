#include "sim/cluster.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>

#include "core/error.h"

namespace gdr::sim {
namespace {

const char* kClassNames[] = {"shm", "shm_cma", "nvlink", "nic", "socket"};

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

bool toDouble(const std::string& v, double* out) {
  char* end = nullptr;
  *out = std::strtod(v.c_str(), &end);
  return end && *end == '\0' && !v.empty();
}

// Byte counts take k/m/g suffixes (binary).
bool toBytes(const std::string& v, size_t* out) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (!end || end == v.c_str() || x < 0) return false;
  double mul = 1;
  std::string suf = end;
  if (suf == "k" || suf == "K")
    mul = 1024.0;
  else if (suf == "m" || suf == "M")
    mul = 1024.0 * 1024;
  else if (suf == "g" || suf == "G")
    mul = 1024.0 * 1024 * 1024;
  else if (!suf.empty())
    return false;
  *out = static_cast<size_t>(x * mul);
  return true;
}

struct Key {
  std::string name;
  std::function<bool(Cluster&, const std::string&)> set;
  std::function<std::string(const Cluster&)> get;
};

template <typename T>
Key intKey(const char* name, T Cluster::*field) {
  return {name,
          [field](Cluster& c, const std::string& v) {
            double d;
            if (!toDouble(v, &d) || d < 0) return false;
            c.*field = static_cast<T>(d);
            return true;
          },
          [field](const Cluster& c) { return std::to_string(c.*field); }};
}

Key numKey(const char* name, double Cluster::*field) {
  return {name, [field](Cluster& c, const std::string& v) { return toDouble(v, &(c.*field)); },
          [field](const Cluster& c) {
            std::ostringstream o;
            o << c.*field;
            return o.str();
          }};
}

Key bytesKey(const char* name, size_t Cluster::*field) {
  return {name, [field](Cluster& c, const std::string& v) { return toBytes(v, &(c.*field)); },
          [field](const Cluster& c) { return std::to_string(c.*field); }};
}

Key strKey(const char* name, std::string Cluster::*field) {
  return {name,
          [field](Cluster& c, const std::string& v) {
            c.*field = v;
            return true;
          },
          [field](const Cluster& c) { return c.*field; }};
}

Key boolKey(const char* name, bool Cluster::*field) {
  return {name,
          [field](Cluster& c, const std::string& v) {
            if (v != "0" && v != "1" && v != "true" && v != "false") return false;
            c.*field = v == "1" || v == "true";
            return true;
          },
          [field](const Cluster& c) { return std::string(c.*field ? "1" : "0"); }};
}

// link.<class>.latency_us / link.<class>.gbps
Key linkKey(LinkClass cls, bool latency) {
  const int i = static_cast<int>(cls);
  return {std::string("link.") + linkClassName(cls) + (latency ? ".latency_us" : ".gbps"),
          [i, latency](Cluster& c, const std::string& v) {
            return toDouble(v, latency ? &c.link[i].latencyUs : &c.link[i].gbps);
          },
          [i, latency](const Cluster& c) {
            std::ostringstream o;
            o << (latency ? c.link[i].latencyUs : c.link[i].gbps);
            return o.str();
          }};
}

const std::vector<Key>& keys() {
  static const std::vector<Key> k = [] {
    std::vector<Key> v = {
        strKey("name", &Cluster::name),
        intKey("hosts", &Cluster::hosts),
        intKey("ranks_per_host", &Cluster::ranksPerHost),
        boolKey("device", &Cluster::device),
        intKey("cores_per_host", &Cluster::coresPerHost),
        intKey("nics_per_host", &Cluster::nicsPerHost),
        intKey("tree_levels", &Cluster::treeLevels),
        intKey("leaf_ports", &Cluster::leafPorts),
        intKey("pod_leaves", &Cluster::podLeaves),
        numKey("oversubscription", &Cluster::oversubscription),
        boolKey("rail_optimised", &Cluster::railOptimised),
        strKey("host_transport", &Cluster::hostTransport),
        strKey("net_transport", &Cluster::netTransport),
        bytesKey("cma_threshold", &Cluster::cmaThreshold),
        bytesKey("cma_threshold_exchange", &Cluster::cmaThresholdExchange),
        bytesKey("cma_threshold_reduce", &Cluster::cmaThresholdReduce),
        bytesKey("cma_threshold_own_cores", &Cluster::cmaThresholdOwnCores),
        boolKey("cma_share", &Cluster::cmaShare),
        numKey("cma_share_gain", &Cluster::cmaShareGain),
        intKey("slots", &Cluster::slots),
        bytesKey("chunk_bytes", &Cluster::chunkBytes),
        bytesKey("slot_bytes", &Cluster::slotBytes),
        bytesKey("socket_buffer_bytes", &Cluster::socketBufferBytes),
        numKey("socket_shared_eff", &Cluster::socketSharedEff),
        intKey("bench_iters", &Cluster::benchIters),
        intKey("bench_warmup", &Cluster::benchWarmup),
        numKey("launch_us", &Cluster::launchUs),
        numKey("send_us", &Cluster::sendUs),
        numKey("short_send_us", &Cluster::shortSendUs),
        numKey("reduce_gbps", &Cluster::reduceGBps),
        numKey("copy_gbps", &Cluster::copyGBps),
        numKey("sched_us", &Cluster::schedUs),
        bytesKey("small_lane_bytes", &Cluster::smallLaneBytes),
        bytesKey("inline_bytes", &Cluster::inlineBytes),
        numKey("inline_us", &Cluster::inlineUs),
        numKey("spin_us", &Cluster::spinUs),
        numKey("yield_us", &Cluster::yieldUs),
        numKey("yield_growth", &Cluster::yieldGrowth),
        numKey("lane_us", &Cluster::laneUs),
        numKey("build_us", &Cluster::buildUs),
        numKey("cma_mem_gbps", &Cluster::cmaMemGBps),
        numKey("quantum_us", &Cluster::quantumUs),
        bytesKey("cache_bytes", &Cluster::cacheBytes),
        numKey("mem.shm_gbps", &Cluster::shmMemGBps),
        numKey("mem.shm_cma_gbps", &Cluster::shmCmaMemGBps),
        numKey("mem.copy_gbps", &Cluster::copyMemGBps),
        numKey("mem.reduce_gbps", &Cluster::reduceMemGBps),
        bytesKey("far_bytes", &Cluster::farBytes),
        numKey("far_factor", &Cluster::farFactor),
        numKey("kernel.launch_us", &Cluster::kernelLaunchUs),
        numKey("kernel.store_gbps", &Cluster::kernelStoreGBps),
        numKey("kernel.local_gbps", &Cluster::kernelLocalGBps),
        numKey("kernel.reduce_gbps", &Cluster::kernelReduceGBps),
    };
    for (int i = 0; i < static_cast<int>(LinkClass::kCount); ++i) {
      v.push_back(linkKey(static_cast<LinkClass>(i), true));
      v.push_back(linkKey(static_cast<LinkClass>(i), false));
    }
    return v;
  }();
  return k;
}

struct Preset {
  const char* name;
  const char* what;
  const char* assignments;
};

// Topology only: the rates come from the calibration file.
const Preset kPresets[] = {
    {"h200x2", "one host, 2 H200 joined by NVLink (the lent machine)",
     "hosts=1; ranks_per_host=2; device=1"},
    {"nvlink8", "one host, 8 GPUs on an NVLink switch", "hosts=1; ranks_per_host=8; device=1"},
    {"fattree2", "N hosts x 8 GPUs, 8 NICs each, rail-optimised two-level fat tree",
     "hosts=2048; ranks_per_host=8; device=1; nics_per_host=8; tree_levels=2; leaf_ports=32; "
     "rail_optimised=1"},
    {"fattree3",
     "N hosts x 8 GPUs, 8 NICs each, rail-optimised three-level fat tree, 2:1 at the pods",
     "hosts=2048; ranks_per_host=8; device=1; nics_per_host=8; tree_levels=3; leaf_ports=32; "
     "pod_leaves=16; oversubscription=2; rail_optimised=1"},
    {"fattree2-1nic", "N hosts x 8 GPUs, one NIC each, two-level fat tree, not rail-optimised",
     "hosts=2048; ranks_per_host=8; device=1; nics_per_host=1; tree_levels=2; leaf_ports=32; "
     "rail_optimised=0"},
    {"host-shm", "host processes over shm on one 2-core host (the development machine)",
     "hosts=1; ranks_per_host=2; device=0; cores_per_host=2; host_transport=shm"},
    {"socket", "hosts of one process each over TCP on links shaped to link.socket.gbps",
     "hosts=2; ranks_per_host=1; device=0; net_transport=socket; tree_levels=1"},
};

}  // namespace

const char* linkClassName(LinkClass c) {
  const int i = static_cast<int>(c);
  return i >= 0 && i < static_cast<int>(LinkClass::kCount) ? kClassNames[i] : "?";
}

double Cluster::oversub() const {
  if (device || coresPerHost <= 0 || ranksPerHost <= coresPerHost) return 1.0;
  return static_cast<double>(ranksPerHost) / coresPerHost;
}

std::vector<std::string> presetNames() {
  std::vector<std::string> v;
  for (const Preset& p : kPresets) v.push_back(std::string(p.name) + ": " + p.what);
  return v;
}

bool preset(const std::string& name, Cluster* out) {
  for (const Preset& p : kPresets) {
    if (name != p.name) continue;
    Cluster c;
    c.name = p.name;
    apply(c, p.assignments);
    *out = c;
    return true;
  }
  return false;
}

bool set(Cluster& c, const std::string& key, const std::string& value, std::string* err) {
  for (const Key& k : keys()) {
    if (key != k.name) continue;
    if (k.set(c, value)) return true;
    *err = "bad value '" + value + "' for " + key;
    return false;
  }
  *err = "unknown key '" + key + "'";
  return false;
}

void apply(Cluster& c, const std::string& assignments) {
  std::stringstream in(assignments);
  std::string item;
  while (std::getline(in, item, ';')) {
    item = trim(item);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    GDR_CHECK_ARG(eq != std::string::npos, "cluster: '%s' is not key=value", item.c_str());
    std::string err;
    GDR_CHECK_ARG(set(c, trim(item.substr(0, eq)), trim(item.substr(eq + 1)), &err), "cluster: %s",
                  err.c_str());
  }
}

void load(Cluster& c, const std::string& path) {
  std::ifstream f(path);
  GDR_CHECK_ARG(f.good(), "cluster: cannot read %s", path.c_str());
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  std::string line;
  int lineNo = 0;
  while (std::getline(f, line)) {
    ++lineNo;
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    line = trim(line);
    if (line.empty()) continue;
    const size_t eq = line.find('=');
    GDR_CHECK_ARG(eq != std::string::npos, "%s:%d: '%s' is not key = value", path.c_str(), lineNo,
                  line.c_str());
    const std::string key = trim(line.substr(0, eq)), value = trim(line.substr(eq + 1));
    if (key == "preset") {
      // The preset's topology on top of what is read so far: the
      // calibration's rates stay.
      const Preset* p = nullptr;
      for (const Preset& q : kPresets)
        if (value == q.name) p = &q;
      GDR_CHECK_ARG(p, "%s:%d: unknown preset '%s'", path.c_str(), lineNo, value.c_str());
      apply(c, p->assignments);
      c.name = p->name;
      continue;
    }
    if (key == "calibration") {
      load(c, !value.empty() && value[0] == '/' ? value : dir + value);
      continue;
    }
    std::string err;
    GDR_CHECK_ARG(set(c, key, value, &err), "%s:%d: %s", path.c_str(), lineNo, err.c_str());
  }
}

std::string dump(const Cluster& c) {
  std::string s;
  for (const Key& k : keys()) s += k.name + " = " + k.get(c) + "\n";
  return s;
}

Cluster effectiveRates(const Cluster& c, double footprint) {
  Cluster e = c;
  if (c.device) return e;
  double& shm = e.link[static_cast<int>(LinkClass::Shm)].gbps;
  double& cma = e.link[static_cast<int>(LinkClass::ShmCma)].gbps;
  // An eager message is a pipeline (the sender copies into a few slots
  // while the receiver on another core copies out of them): beyond cache
  // it runs at the slower of its rate in cache and a copy's from memory, not
  // at their harmonic sum. Where ranks take turns on the cores there is no
  // such pipeline: the receiver waits for its turn, nothing pulls the lines
  // from under the sender, and its copy into the slots is a plain copy.
  // mem.shm_gbps, where a file gives one, is a blend instead.
  const bool turns = c.oversub() > 1.0 && c.yieldUs > 0 && c.shmMemGBps <= 0;
  if (c.cacheBytes == 0 || footprint <= static_cast<double>(c.cacheBytes)) {
    if (turns) shm = c.copyGBps;
    return e;
  }
  const double inCache = static_cast<double>(c.cacheBytes) / footprint;
  const bool far =
      c.farBytes > c.cacheBytes && footprint > static_cast<double>(c.farBytes) && c.farFactor > 0;
  const double farShare = far ? 1.0 - static_cast<double>(c.farBytes) / footprint : 0.0;
  auto blend = [&](double cached, double mem) {
    if (cached <= 0 || mem <= 0) return cached;
    const double near = 1.0 - inCache - farShare;
    return 1.0 / (inCache / cached + near / mem + farShare / (mem * c.farFactor));
  };
  cma = blend(cma, c.shmCmaMemGBps);
  e.copyGBps = blend(c.copyGBps, c.copyMemGBps);
  e.reduceGBps = blend(c.reduceGBps, c.reduceMemGBps);
  if (c.shmMemGBps > 0)
    shm = blend(shm, c.shmMemGBps);
  else
    shm = turns ? e.copyGBps : std::min(shm, e.copyGBps);
  return e;
}

void validate(const Cluster& c) {
  GDR_CHECK_ARG(c.hosts >= 1 && c.ranksPerHost >= 1, "cluster %s: hosts %d, ranks per host %d",
                c.name.c_str(), c.hosts, c.ranksPerHost);
  GDR_CHECK_ARG(c.nicsPerHost >= 1 && c.treeLevels >= 1 && c.treeLevels <= 3 && c.leafPorts >= 1,
                "cluster %s: nics %d, tree levels %d (1-3), leaf ports %d", c.name.c_str(),
                c.nicsPerHost, c.treeLevels, c.leafPorts);
  GDR_CHECK_ARG(c.oversubscription >= 1.0, "cluster %s: oversubscription %.2f is below 1",
                c.name.c_str(), c.oversubscription);
  GDR_CHECK_ARG(c.yieldGrowth > 0, "cluster %s: yield_growth %g must be above 0", c.name.c_str(),
                c.yieldGrowth);
  auto need = [&](LinkClass cls) {
    GDR_CHECK_ARG(c.link[static_cast<int>(cls)].gbps > 0,
                  "cluster %s: link.%s.gbps is not calibrated (give a calibration file)",
                  c.name.c_str(), linkClassName(cls));
  };
  if (c.ranksPerHost > 1) {
    if (c.device)
      need(LinkClass::NvLink);
    else if (c.hostTransport == "socket")
      need(LinkClass::Socket);
    else {
      need(LinkClass::Shm);
      need(LinkClass::ShmCma);
      GDR_CHECK_ARG(c.copyGBps > 0, "cluster %s: copy_gbps is not calibrated", c.name.c_str());
    }
  }
  if (c.hosts > 1) need(c.netTransport == "socket" ? LinkClass::Socket : LinkClass::Nic);
  if (!c.device)
    GDR_CHECK_ARG(c.reduceGBps > 0, "cluster %s: reduce_gbps is not calibrated", c.name.c_str());
}

}  // namespace gdr::sim
