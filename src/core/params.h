// The one typed registry of GDR_* environment variables. Every variable the
// library reads is a row of the table in params.cc; reading an unregistered
// name is a bug and throws. gdr-info and the README list the table.
#pragma once

#include <cstdint>
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
// The raw current value as text (for gdr-info).
std::string current(const Info& info);

}  // namespace gdr::param
