#include "core/log.h"

#include <strings.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "core/params.h"

namespace gdr::log {

namespace {

struct State {
  std::atomic<uint32_t> mask{0};
  std::mutex mu;
  FILE* out = stderr;
  char host[64] = {0};
  std::string level, subsys, file;  // setDefaults(): where GDR_DEBUG* are unset
};

State& state() {
  static State s;
  return s;
}

thread_local int tRank = -1;
thread_local int tDevice = -1;

uint32_t parseMask(const std::string& s) {
  static const struct {
    const char* name;
    uint32_t bit;
  } kNames[] = {{"INIT", kInit}, {"BOOT", kBoot}, {"NET", kNet}, {"SHM", kShm},
                {"TOPO", kTopo}, {"COLL", kColl}, {"P2P", kP2P}, {"ALL", kAll}};
  uint32_t mask = 0;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    std::string tok = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    for (auto& n : kNames)
      if (!strcasecmp(tok.c_str(), n.name)) mask |= n.bit;
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return mask ? mask : kAll;
}

Level parseLevel(const std::string& s) {
  if (!strcasecmp(s.c_str(), "NONE")) return Level::None;
  if (!strcasecmp(s.c_str(), "INFO")) return Level::Info;
  if (!strcasecmp(s.c_str(), "TRACE")) return Level::Trace;
  return Level::Warn;
}

// The variable's value; the default setDefaults() gave where it is unset.
std::string valueOr(const char* name, const std::string& fallback) {
  return !param::isSet(name) && !fallback.empty() ? fallback : param::getString(name);
}

void load() {
  State& st = state();
  std::lock_guard<std::mutex> g(st.mu);
  gethostname(st.host, sizeof(st.host) - 1);
  st.mask = parseMask(valueOr("GDR_DEBUG_SUBSYS", st.subsys));
  std::string file = valueOr("GDR_DEBUG_FILE", st.file);
  if (!file.empty() && st.out == stderr) {
    std::string path;
    for (size_t i = 0; i < file.size(); ++i) {
      if (file[i] == '%' && i + 1 < file.size() && file[i + 1] == 'h') {
        path += st.host;
        ++i;
      } else if (file[i] == '%' && i + 1 < file.size() && file[i + 1] == 'p') {
        path += std::to_string(getpid());
        ++i;
      } else {
        path += file[i];
      }
    }
    if (FILE* f = std::fopen(path.c_str(), "a")) st.out = f;
  }
  gLevel.store(static_cast<int>(parseLevel(valueOr("GDR_DEBUG", st.level))), std::memory_order_relaxed);
}

}  // namespace

std::atomic<int> gLevel{-1};

bool enabledSlow(Level level, uint32_t subsys) {
  if (gLevel.load(std::memory_order_relaxed) < 0) load();
  return static_cast<int>(level) <= gLevel.load(std::memory_order_relaxed) &&
         (state().mask.load(std::memory_order_relaxed) & subsys);
}

void reload() {
  gLevel.store(-1, std::memory_order_relaxed);
  load();
}

void setDefaults(const std::string& level, const std::string& subsys, const std::string& file) {
  {
    State& st = state();
    std::lock_guard<std::mutex> g(st.mu);
    st.level = level;
    st.subsys = subsys;
    st.file = file;
  }
  reload();
}

void setContext(int rank, int device) {
  tRank = rank;
  tDevice = device;
}

void write(Level level, uint32_t, const char* file, int line, const char* fmt, ...) {
  State& st = state();
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  const char* base = std::strrchr(file, '/');
  base = base ? base + 1 : file;
  const char* lv = level == Level::Warn ? "WARN" : level == Level::Info ? "INFO" : "TRACE";
  std::lock_guard<std::mutex> g(st.mu);
  std::fprintf(st.out, "%s:%d:r%d:d%d gdrcoll %s %s (%s:%d)\n", st.host, (int)getpid(), tRank,
               tDevice, lv, msg, base, line);
  std::fflush(st.out);
}

}  // namespace gdr::log
