// The bootstrap a launcher's environment asks for (bootstrap/env_select.h):
// PMIx through the PMIx adapter, the others through the TCP rendezvous at
// the address they name, rank 0 serving it.
#include <cstdlib>

#include "bootstrap/bootstrap.h"
#include "bootstrap/env_select.h"
#include "core/log.h"
#include "core/params.h"

namespace gdr::boot {

std::unique_ptr<Bootstrap> makeEnvBootstrap() {
  EnvChoice c = chooseBootstrap([](const char* name) { return std::getenv(name); },
                                param::getString("GDR_BOOTSTRAP"));
  GDR_INFO(kBoot, "bootstrap %s: %s", launcherName(c.launcher), c.why.c_str());
  if (c.launcher == Launcher::Pmix) return makePmixBootstrap();
  gdrUniqueId id;
  addressUniqueId(c.address, true, c.size, &id);
  return makeTcpBootstrap(id, c.rank, c.size, c.localRank);
}

}  // namespace gdr::boot
