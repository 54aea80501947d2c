// gdr-status: one answer from the status reports of a stuck job's ranks
// (src/comm/status_report.h). It asks every live gdrcoll process through
// its socket in GDR_STATUS_DIR (default /tmp) for a fresh report, reads the
// report files of the others (written at a timeout or on SIGUSR1), groups
// them by communicator and says, for each, which rank waits where and for
// whom, and whom the chain of waits ends at. A rank with no host operation
// in flight but device work in flight (a fused kernel, a staged operation)
// is at its oldest device operation, waiting for the peer its kernel
// waits for.
//
//   gdr-status [--dir DIR] [--files-only] [REPORT.txt ...]
#include <dirent.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Fields = std::map<std::string, std::string>;

struct Op {
  Fields f;
  std::string get(const char* k) const {
    auto it = f.find(k);
    return it == f.end() ? "?" : it->second;
  }
  long num(const char* k, long dflt = -1) const {
    auto it = f.find(k);
    return it == f.end() ? dflt : std::strtol(it->second.c_str(), nullptr, 10);
  }
  double real(const char* k) const {
    auto it = f.find(k);
    return it == f.end() ? -1 : std::strtod(it->second.c_str(), nullptr);
  }
  bool device() const { return f.count("path") != 0; }
  std::string name() const { return (device() ? "device " : "") + get("coll") + " #" + get("seq"); }
};

struct RankReport {
  std::string id, source;
  int rank = -1, size = 0;
  bool inFlight = false;
  Op cur;
  std::vector<Op> done;  // newest first
  std::vector<Op> devInFlight;  // oldest first
  std::vector<Op> devDone;      // newest first
};

// A rank whose host side is idle is at its oldest device operation in flight.
void settle(RankReport* r) {
  if (!r->inFlight && !r->devInFlight.empty()) {
    r->inFlight = true;
    r->cur = r->devInFlight.front();
  }
}

Fields parseFields(std::istringstream& in) {
  Fields f;
  std::string tok;
  while (in >> tok) {
    auto eq = tok.find('=');
    if (eq != std::string::npos) f[tok.substr(0, eq)] = tok.substr(eq + 1);
  }
  return f;
}

// One process's text report (several communicators); false if it is not one.
bool parseReport(const std::string& text, const std::string& source, std::vector<RankReport>* out,
                 int* pid) {
  std::istringstream lines(text);
  std::string line;
  if (!std::getline(lines, line) || line.rfind("gdr-status 1 ", 0) != 0) return false;
  {
    std::istringstream h(line.substr(13));
    Fields f = parseFields(h);
    *pid = std::atoi(f["pid"].c_str());
  }
  bool complete = false;
  while (std::getline(lines, line)) {
    std::istringstream in(line);
    std::string what;
    in >> what;
    if (what == "end") {
      complete = true;
      break;
    }
    if (what == "comm") {
      if (!out->empty()) settle(&out->back());
      Fields f = parseFields(in);
      RankReport r;
      r.id = f["id"];
      r.rank = std::atoi(f["rank"].c_str());
      r.size = std::atoi(f["size"].c_str());
      r.source = source;
      out->push_back(r);
    } else if (!out->empty() && what == "inflight") {
      out->back().inFlight = true;
      out->back().cur.f = parseFields(in);
    } else if (!out->empty() && what == "done") {
      Op o;
      o.f = parseFields(in);
      out->back().done.push_back(o);
    } else if (!out->empty() && (what == "device-inflight" || what == "device-done")) {
      Op o;
      o.f = parseFields(in);
      (what == "device-done" ? out->back().devDone : out->back().devInFlight).push_back(o);
    }
  }
  if (!out->empty()) settle(&out->back());
  return complete;
}

// A fresh report through a process's socket; "" if it does not answer.
std::string ask(const std::string& path) {
  sockaddr_un a{};
  if (path.size() >= sizeof(a.sun_path)) return "";
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "";
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    close(fd);
    return "";
  }
  std::string text;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  char buf[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return text;
}

std::vector<std::string> listDir(const std::string& dir, const char* suffix) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  const size_t sl = std::strlen(suffix);
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n.rfind("gdr-status-", 0) == 0 && n.size() > sl &&
        n.compare(n.size() - sl, sl, suffix) == 0)
      out.push_back(dir + "/" + n);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// A lone send or receive has one step: the operation says it all.
bool loneP2P(const Op& o) { return o.get("coll") == "send" || o.get("coll") == "recv"; }

// Where in an operation a rank is ("at step 3 of 8 (recv) of allreduce #17",
// "in recv #2").
std::string stepText(const Op& o) {
  const long step = o.num("step"), steps = o.num("steps");
  if (o.device()) {
    const std::string waits = o.get("waits");
    if (waits.rfind("stream:", 0) == 0)
      return "in " + o.name() + " (" + o.get("path") +
             ": its progress thread waits for the caller's stream to copy segment " +
             waits.substr(7) + " to the host)";
    return "in " + o.name() + " (" + o.get("path") + ")";
  }
  if (loneP2P(o)) return "in " + o.name();
  if (o.get("kind") == "sends") return "at the end (its sends) of " + o.name();
  return "at step " + std::to_string(step) + " of " + std::to_string(steps) + " (" + o.get("kind") +
         ") of " + o.name();
}

bool waitsForPeer(const RankReport& r) {
  return r.inFlight && r.cur.real("waiting_ms") >= 0 && r.cur.num("peer") >= 0;
}

// Where a rank is, as a clause ("is at ...", "is idle after ...").
std::string whereIs(const RankReport* r) {
  if (!r) return "has no report (dead, or not reachable from here)";
  if (r->inFlight) {
    std::string s = "is " + stepText(r->cur);
    if (!r->cur.device() && !r->devInFlight.empty())
      s += " (for " + r->devInFlight.front().name() + ", " + r->devInFlight.front().get("path") +
           ")";
    if (waitsForPeer(*r))
      s += ", waiting for rank " + r->cur.get("peer");
    else
      s += ", not waiting for a peer (computing, or stopped)";
    return s;
  }
  const std::string dev = r->devDone.empty() ? "" : r->devDone.front().name();
  if (r->done.empty())
    return dev.empty() ? "is idle, before its first operation" : "is idle after " + dev;
  return "is idle after " + r->done.front().name() +
         (r->done.front().get("result") == "ok" ? "" : " (which failed)") +
         (dev.empty() ? "" : " (device work: after " + dev + ")");
}

void explain(const std::string& id, const std::map<int, RankReport>& ranks) {
  int size = 0;
  for (auto& kv : ranks) size = std::max(size, kv.second.size);
  std::printf("communicator %s: %zu of %d ranks reported\n", id.c_str(), ranks.size(), size);
  auto find = [&](int r) -> const RankReport* {
    auto it = ranks.find(r);
    return it == ranks.end() ? nullptr : &it->second;
  };
  for (int r = 0; r < size; ++r) {
    const RankReport* rep = find(r);
    std::string line = "  rank " + std::to_string(r) + " " + whereIs(rep);
    if (rep && rep->inFlight) {
      char t[96];
      std::snprintf(t, sizeof(t), " (in the call %.0f ms", rep->cur.real("elapsed_ms"));
      line += t;
      if (rep->cur.real("waiting_ms") >= 0) {
        std::snprintf(t, sizeof(t), ", waiting %.0f ms", rep->cur.real("waiting_ms"));
        line += t;
      }
      line += ")";
    }
    std::printf("%s\n", line.c_str());
  }
  // Each wait, and where the waited-for rank is.
  int longest = -1;
  double longestMs = -1;
  for (auto& kv : ranks) {
    const RankReport& r = kv.second;
    if (!waitsForPeer(r)) continue;
    const int peer = static_cast<int>(r.cur.num("peer"));
    std::printf("rank %d waits %s for rank %d; rank %d %s\n", r.rank, stepText(r.cur).c_str(), peer,
                peer, whereIs(find(peer)).c_str());
    if (r.cur.real("waiting_ms") > longestMs) {
      longestMs = r.cur.real("waiting_ms");
      longest = r.rank;
    }
  }
  if (longest < 0) {
    std::printf("no rank waits for a peer\n");
    return;
  }
  // Follow the chain of waits from the longest waiter to where it ends.
  std::set<int> seen;
  int at = longest;
  std::string chain = "rank " + std::to_string(at);
  for (;;) {
    seen.insert(at);
    const RankReport* r = find(at);
    if (!r || !waitsForPeer(*r)) break;
    const int next = static_cast<int>(r->cur.num("peer"));
    chain += " -> rank " + std::to_string(next);
    if (seen.count(next)) {
      std::printf("chain of waits: %s (a cycle: ranks wait for each other)\n", chain.c_str());
      return;
    }
    at = next;
  }
  std::printf("chain of waits: %s\nlikely culprit: rank %d, which %s\n", chain.c_str(), at,
              whereIs(find(at)).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const char* envDir = std::getenv("GDR_STATUS_DIR");
  std::string dir = envDir && *envDir ? envDir : "/tmp";
  bool filesOnly = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else if (a == "--files-only") {
      filesOnly = true;
    } else if (a == "-h" || a == "--help") {
      std::printf("usage: gdr-status [--dir DIR] [--files-only] [REPORT.txt ...]\n");
      return 0;
    } else {
      files.push_back(a);
    }
  }
  std::vector<RankReport> all;
  std::set<int> live;
  int reports = 0;
  if (files.empty() && !filesOnly)
    for (const auto& sock : listDir(dir, ".sock")) {
      std::string text = ask(sock);
      std::vector<RankReport> got;
      int pid = 0;
      if (text.empty() || !parseReport(text, sock, &got, &pid)) continue;
      live.insert(pid);
      all.insert(all.end(), got.begin(), got.end());
      ++reports;
    }
  if (files.empty()) files = listDir(dir, ".txt");
  for (const auto& f : files) {
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    std::vector<RankReport> got;
    int pid = 0;
    if (!parseReport(ss.str(), f, &got, &pid)) {
      std::fprintf(stderr, "gdr-status: %s is not a complete report; skipped\n", f.c_str());
      continue;
    }
    if (live.count(pid)) continue;  // its fresh answer is in already
    all.insert(all.end(), got.begin(), got.end());
    ++reports;
  }
  if (!reports) {
    std::printf("no gdrcoll status reports in %s (GDR_STATUS_DIR)\n", dir.c_str());
    return 1;
  }
  std::map<std::string, std::map<int, RankReport>> byComm;
  for (auto& r : all) byComm[r.id][r.rank] = r;
  for (auto& kv : byComm) explain(kv.first, kv.second);
  return 0;
}
