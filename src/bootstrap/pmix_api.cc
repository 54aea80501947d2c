#include "bootstrap/pmix_api.h"

#include <dlfcn.h>

#include <string>

#include "core/error.h"
#include "core/log.h"
#include "core/params.h"

namespace gdr::boot {

namespace {

struct Loaded {
  PmixApi api{};
  std::string why;  // empty when loaded
};

template <typename F>
bool bind(void* lib, const char* sym, F* out, std::string* why) {
  *out = reinterpret_cast<F>(dlsym(lib, sym));
  if (!*out) *why = strprintf("symbol %s missing from libpmix", sym);
  return *out != nullptr;
}

Loaded load() {
  Loaded L;
  std::string path = param::getString("GDR_PMIX_LIB");
  const char* name = path.empty() ? "libpmix.so.2" : path.c_str();
  // RTLD_GLOBAL: libpmix loads its own plugins, which resolve against it.
  void* lib = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
  if (!lib) {
    const char* e = dlerror();
    L.why = strprintf("cannot load %s (Debian: libpmix2): %s", name, e ? e : "?");
    return L;
  }
  PmixApi& a = L.api;
  bool ok = bind(lib, "PMIx_Init", &a.init, &L.why) &&
            bind(lib, "PMIx_Finalize", &a.finalize, &L.why) &&
            bind(lib, "PMIx_Put", &a.put, &L.why) && bind(lib, "PMIx_Commit", &a.commit, &L.why) &&
            bind(lib, "PMIx_Fence", &a.fence, &L.why) && bind(lib, "PMIx_Get", &a.get, &L.why) &&
            bind(lib, "PMIx_Error_string", &a.errorString, &L.why) &&
            bind(lib, "PMIx_Value_destruct", &a.valueDestruct, &L.why);
  if (ok) GDR_INFO(kBoot, "loaded %s", name);
  return L;
}

}  // namespace

const PmixApi& pmixApi() {
  static const Loaded loaded = load();
  if (!loaded.why.empty()) throw NotSupported("PMIx bootstrap: " + loaded.why);
  return loaded.api;
}

}  // namespace gdr::boot
