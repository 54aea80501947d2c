// Logging with a level and a subsystem mask (GDR_DEBUG, GDR_DEBUG_SUBSYS).
// Every line carries host, pid, rank and device. Log an error once, where it
// is first detected.
#pragma once

#include <atomic>

#include <cstdint>
#include <string>

namespace gdr::log {

enum class Level : int { None = 0, Warn = 1, Info = 2, Trace = 3 };

enum Subsys : uint32_t {
  kInit = 1u << 0,
  kBoot = 1u << 1,
  kNet = 1u << 2,
  kShm = 1u << 3,
  kTopo = 1u << 4,
  kColl = 1u << 5,
  kP2P = 1u << 6,
  kAll = ~0u,
};

// The level set by GDR_DEBUG (-1 until the environment is read): the inline
// test that keeps a disabled GDR_TRACE to a load and a compare.
extern std::atomic<int> gLevel;
bool enabledSlow(Level level, uint32_t subsys);
inline bool enabled(Level level, uint32_t subsys) {
  const int l = gLevel.load(std::memory_order_relaxed);
  if (l >= 0 && static_cast<int>(level) > l) return false;
  return enabledSlow(level, subsys);
}
void write(Level level, uint32_t subsys, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 5, 6)));
// The rank and device shown on this thread's lines (-1: unknown).
void setContext(int rank, int device);
// Re-reads GDR_DEBUG* (tests change them).
void reload();
// Values for GDR_DEBUG, GDR_DEBUG_SUBSYS and GDR_DEBUG_FILE where the
// environment leaves them unset (empty: the parameter's default); the NCCL
// API maps NCCL_DEBUG* through this, never through setenv. Reloads.
void setDefaults(const std::string& level, const std::string& subsys, const std::string& file);

}  // namespace gdr::log

#define GDR_LOG(level, subsys, ...)                                                     \
  do {                                                                                  \
    if (::gdr::log::enabled(::gdr::log::Level::level, ::gdr::log::subsys))              \
      ::gdr::log::write(::gdr::log::Level::level, ::gdr::log::subsys, __FILE__, __LINE__, \
                        __VA_ARGS__);                                                   \
  } while (0)
#define GDR_WARN(subsys, ...) GDR_LOG(Warn, subsys, __VA_ARGS__)
#define GDR_INFO(subsys, ...) GDR_LOG(Info, subsys, __VA_ARGS__)
#define GDR_TRACE(subsys, ...) GDR_LOG(Trace, subsys, __VA_ARGS__)
