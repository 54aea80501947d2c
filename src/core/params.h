// The one typed registry of GDR_* environment variables. Every variable the
// library reads is a row of the table in params.cc; reading an unregistered
// name is a bug and throws. gdr-info and the README list the table.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gdr::param {

enum class Type { Int, Bool, String };

struct Info {
  const char* name;
  Type type;
  const char* defaultValue;
  const char* description;
};

const std::vector<Info>& all();
const Info& find(const char* name);  // throws InternalError for unknown names
const char* typeName(Type t);

// Current value: the environment's if set, else the default. A malformed value
// throws InvalidArgument naming the variable.
int64_t getInt(const char* name);
bool getBool(const char* name);
std::string getString(const char* name);
// Whether the environment (or this thread's snapshot) sets the variable.
bool isSet(const char* name);
// The raw current value as text (for gdr-info).
std::string current(const Info& info);

// The library's own threads never read the environment: a program's
// setenv on another thread may free the array a getenv walks (glibc moves
// environ when it grows). A thread the library starts reads every
// parameter as the thread that started it saw them (core/lib_thread.h).
struct Snapshot;
std::shared_ptr<const Snapshot> snapshot();  // this thread's view, taken now
// Makes this thread read `s` until the object goes (nested uses restore).
class UseSnapshot {
 public:
  explicit UseSnapshot(std::shared_ptr<const Snapshot> s);
  ~UseSnapshot();
  UseSnapshot(const UseSnapshot&) = delete;
  UseSnapshot& operator=(const UseSnapshot&) = delete;

 private:
  std::shared_ptr<const Snapshot> mine_;
  const Snapshot* before_;
};

}  // namespace gdr::param
