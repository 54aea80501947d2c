#include "core/fault.h"

#include <cstdlib>
#include <vector>

#include "core/error.h"

namespace gdr {

size_t FaultSpec::stepIndex(size_t steps) const {
  if (steps == 0) return 0;
  switch (step) {
    case kFirst:
      return 0;
    case kMiddle:
      return steps / 2;
    case kLast:
      return steps - 1;
    default:
      return static_cast<size_t>(step - 1);
  }
}

const char* faultKindName(FaultKind k) {
  switch (k) {
    case FaultKind::None:
      return "none";
    case FaultKind::Kill:
      return "kill";
    case FaultKind::Stall:
      return "stall";
    case FaultKind::Close:
      return "close";
    case FaultKind::Corrupt:
      return "corrupt";
  }
  return "?";
}

FaultSpec parseFault(const std::string& spec) {
  FaultSpec f;
  if (spec.empty()) return f;
  std::vector<std::string> part;
  size_t pos = 0;
  for (;;) {
    size_t end = spec.find(':', pos);
    part.push_back(spec.substr(pos, end == std::string::npos ? std::string::npos : end - pos));
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  const char* usage =
      "GDR_FAULT=%s is not rank:op:step:kind (e.g. 1:3:last:kill; step 1-based or first, middle, "
      "last; kind kill, stall, close or corrupt)";
  GDR_CHECK_ARG(part.size() == 4, usage, spec.c_str());
  auto number = [&](const std::string& s, long long lo) {
    char* end = nullptr;
    long long v = std::strtoll(s.c_str(), &end, 10);
    GDR_CHECK_ARG(!s.empty() && end && !*end && v >= lo, usage, spec.c_str());
    return v;
  };
  f.rank = static_cast<int>(number(part[0], 0));
  f.op = static_cast<uint64_t>(number(part[1], 1));
  if (part[2] == "first")
    f.step = FaultSpec::kFirst;
  else if (part[2] == "middle")
    f.step = FaultSpec::kMiddle;
  else if (part[2] == "last")
    f.step = FaultSpec::kLast;
  else
    f.step = number(part[2], 1);
  const std::string& k = part[3];
  if (k == "kill")
    f.kind = FaultKind::Kill;
  else if (k == "stall")
    f.kind = FaultKind::Stall;
  else if (k == "close")
    f.kind = FaultKind::Close;
  else if (k == "corrupt")
    f.kind = FaultKind::Corrupt;
  else
    GDR_CHECK_ARG(false, usage, spec.c_str());
  return f;
}

}  // namespace gdr
