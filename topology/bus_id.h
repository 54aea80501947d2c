// PCI bus id spellings: CUDA prints "0000:1B:00.0", NVML "00000000:1B:00.0",
// lspci "1b:00.0". Everything in topology/ compares the canonical form.
#pragma once

#include <string>

namespace gdr::topo {

// "dddd:bb:dd.f" in lower case; empty if `text` is not a PCI address.
std::string canonicalBusId(const std::string& text);
std::string formatBusId(unsigned domain, unsigned bus, unsigned dev, unsigned func);

}  // namespace gdr::topo
