// libpmix, loaded at run time (dlopen of libpmix.so.2, or GDR_PMIX_LIB), so
// the library loads on hosts without PMIx; only the PMIx bootstrap needs it.
// The header is used for types only: every call goes through these pointers.
#pragma once

#include <pmix.h>

namespace gdr::boot {

struct PmixApi {
  pmix_status_t (*init)(pmix_proc_t*, pmix_info_t*, size_t);
  pmix_status_t (*finalize)(const pmix_info_t*, size_t);
  pmix_status_t (*put)(pmix_scope_t, const char*, pmix_value_t*);
  pmix_status_t (*commit)();
  pmix_status_t (*fence)(const pmix_proc_t*, size_t, const pmix_info_t*, size_t);
  pmix_status_t (*get)(const pmix_proc_t*, const char*, const pmix_info_t*, size_t, pmix_value_t**);
  const char* (*errorString)(pmix_status_t);
  void (*valueDestruct)(pmix_value_t*);
};

// Loaded once per process; throws NotSupported saying why it cannot be.
const PmixApi& pmixApi();

}  // namespace gdr::boot
