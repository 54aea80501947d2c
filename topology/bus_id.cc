#include "topology/bus_id.h"

#include <cstdio>

#include "core/error.h"

namespace gdr::topo {

std::string formatBusId(unsigned domain, unsigned bus, unsigned dev, unsigned func) {
  return strprintf("%04x:%02x:%02x.%x", domain & 0xffff, bus & 0xff, dev & 0x1f, func & 0x7);
}

std::string canonicalBusId(const std::string& text) {
  unsigned domain = 0, bus = 0, dev = 0, func = 0;
  int used = 0;
  // With a domain (any width: NVML pads it to 8 digits), then without one.
  if (std::sscanf(text.c_str(), "%x:%x:%x.%x%n", &domain, &bus, &dev, &func, &used) == 4 &&
      used == static_cast<int>(text.size()))
    return domain <= 0xffff && bus <= 0xff && dev <= 0x1f && func <= 7
               ? formatBusId(domain, bus, dev, func)
               : std::string();
  used = 0;
  domain = 0;
  if (std::sscanf(text.c_str(), "%x:%x.%x%n", &bus, &dev, &func, &used) == 3 &&
      used == static_cast<int>(text.size()))
    return bus <= 0xff && dev <= 0x1f && func <= 7 ? formatBusId(0, bus, dev, func) : std::string();
  return std::string();
}

}  // namespace gdr::topo
