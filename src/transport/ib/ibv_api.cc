#include "transport/ib/ibv_api.h"

#include <dlfcn.h>

#include <cstring>
#include <mutex>

#include "core/error.h"
#include "core/log.h"
#include "core/params.h"
#include "transport/ib/softnic.h"

namespace gdr::transport::ib {

namespace {

struct Loaded {
  IbvApi api{};
  bool ok = false;
  std::string why;
};

template <typename F>
bool bind(void* lib, const char* sym, F* out, std::string* why) {
  *out = reinterpret_cast<F>(dlsym(lib, sym));
  if (!*out && why) *why = strprintf("symbol %s missing from libibverbs", sym);
  return *out != nullptr;
}

Loaded load() {
  Loaded L;
  std::string path = param::getString("GDR_IBV_LIB");
  const char* names[] = {"libibverbs.so.1", "libibverbs.so"};
  void* lib = nullptr;
  if (!path.empty()) {
    lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  } else {
    for (const char* n : names)
      if ((lib = dlopen(n, RTLD_NOW | RTLD_LOCAL))) break;
  }
  if (!lib) {
    const char* e = dlerror();
    L.why = strprintf("cannot load %s: %s", path.empty() ? "libibverbs.so.1" : path.c_str(),
                      e ? e : "?");
    return L;
  }
  IbvApi& a = L.api;
  bool ok = bind(lib, "ibv_get_device_list", &a.get_device_list, &L.why) &&
            bind(lib, "ibv_free_device_list", &a.free_device_list, &L.why) &&
            bind(lib, "ibv_get_device_name", &a.get_device_name, &L.why) &&
            bind(lib, "ibv_open_device", &a.open_device, &L.why) &&
            bind(lib, "ibv_close_device", &a.close_device, &L.why) &&
            bind(lib, "ibv_query_device", &a.query_device, &L.why) &&
            bind(lib, "ibv_query_port", &a.query_port_compat, &L.why) &&
            bind(lib, "ibv_query_gid", &a.query_gid, &L.why) &&
            bind(lib, "ibv_alloc_pd", &a.alloc_pd, &L.why) &&
            bind(lib, "ibv_dealloc_pd", &a.dealloc_pd, &L.why) &&
            bind(lib, "ibv_reg_mr", &a.reg_mr, &L.why) &&
            bind(lib, "ibv_dereg_mr", &a.dereg_mr, &L.why) &&
            bind(lib, "ibv_create_cq", &a.create_cq, &L.why) &&
            bind(lib, "ibv_destroy_cq", &a.destroy_cq, &L.why) &&
            bind(lib, "ibv_create_qp", &a.create_qp, &L.why) &&
            bind(lib, "ibv_modify_qp", &a.modify_qp, &L.why) &&
            bind(lib, "ibv_destroy_qp", &a.destroy_qp, &L.why) &&
            bind(lib, "ibv_wc_status_str", &a.wc_status_str, &L.why) &&
            bind(lib, "ibv_get_async_event", &a.get_async_event, &L.why) &&
            bind(lib, "ibv_ack_async_event", &a.ack_async_event, &L.why) &&
            bind(lib, "ibv_event_type_str", &a.event_type_str, &L.why);
  // Optional: dma-buf registration appeared in rdma-core 34.
  bind(lib, "ibv_reg_dmabuf_mr", &a.reg_dmabuf_mr, nullptr);
  L.ok = ok;
  if (ok)
    GDR_INFO(kNet, "loaded libibverbs (%s); dma-buf registration %s",
             path.empty() ? "default path" : path.c_str(),
             a.reg_dmabuf_mr ? "available" : "not available");
  return L;
}

}  // namespace

int IbvApi::queryPort(ibv_context* ctx, uint8_t port, ibv_port_attr* attr) const {
  std::memset(attr, 0, sizeof(*attr));
  verbs_context* vctx = verbs_get_ctx_op(ctx, query_port);
  if (vctx) return vctx->query_port(ctx, port, attr, sizeof(*attr));
  return query_port_compat(ctx, port, reinterpret_cast<_compat_ibv_port_attr*>(attr));
}

const IbvApi* ibvApi(std::string* why) {
  const std::string provider = param::getString("GDR_IB_PROVIDER");
  if (provider == "softnic") return softnic::api();
  if (!provider.empty() && provider != "verbs") {
    if (why) *why = "GDR_IB_PROVIDER=" + provider + " is neither verbs nor softnic";
    return nullptr;
  }
  static Loaded loaded = load();
  if (!loaded.ok && why) *why = loaded.why;
  return loaded.ok ? &loaded.api : nullptr;
}

}  // namespace gdr::transport::ib
