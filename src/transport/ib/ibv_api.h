// libibverbs, loaded at run time (dlopen) so one build runs on hosts with and
// without RDMA (GDR_IB_PROVIDER=softnic: the software NIC of softnic.h
// instead, a test device). Only the entry points that are real library symbols are
// looked up here; the data-path calls (ibv_post_send, ibv_post_recv,
// ibv_poll_cq) are inline in verbs.h and go through the provider's context
// ops, so they need no symbol. GDR_IBV_LIB overrides the library path.
#pragma once

#include <infiniband/verbs.h>

#include <string>

namespace gdr::transport::ib {

struct IbvApi {
  ibv_device** (*get_device_list)(int*);
  void (*free_device_list)(ibv_device**);
  const char* (*get_device_name)(ibv_device*);
  ibv_context* (*open_device)(ibv_device*);
  int (*close_device)(ibv_context*);
  int (*query_device)(ibv_context*, ibv_device_attr*);
  int (*query_port_compat)(ibv_context*, uint8_t, struct _compat_ibv_port_attr*);
  int (*query_gid)(ibv_context*, uint8_t, int, ibv_gid*);
  ibv_pd* (*alloc_pd)(ibv_context*);
  int (*dealloc_pd)(ibv_pd*);
  ibv_mr* (*reg_mr)(ibv_pd*, void*, size_t, int);
  ibv_mr* (*reg_dmabuf_mr)(ibv_pd*, uint64_t, size_t, uint64_t, int, int);  // may be null
  int (*dereg_mr)(ibv_mr*);
  ibv_cq* (*create_cq)(ibv_context*, int, void*, ibv_comp_channel*, int);
  int (*destroy_cq)(ibv_cq*);
  ibv_qp* (*create_qp)(ibv_pd*, ibv_qp_init_attr*);
  int (*modify_qp)(ibv_qp*, ibv_qp_attr*, int);
  int (*destroy_qp)(ibv_qp*);
  const char* (*wc_status_str)(ibv_wc_status);
  int (*get_async_event)(ibv_context*, ibv_async_event*);
  void (*ack_async_event)(ibv_async_event*);
  const char* (*event_type_str)(ibv_event_type);

  // Port query that works with old and new providers (verbs.h's inline does
  // the same, but would need the symbol at link time).
  int queryPort(ibv_context* ctx, uint8_t port, ibv_port_attr* attr) const;
};

// The loaded table, or null with `why` set (no library, missing symbol).
// Loaded once per process; thread-safe.
const IbvApi* ibvApi(std::string* why = nullptr);

}  // namespace gdr::transport::ib
