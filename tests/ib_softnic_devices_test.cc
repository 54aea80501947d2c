// The software NIC with several devices (GDR_SOFTNIC_DEVICES): each is its
// own HCA, so a key is good only on QPs of the device that registered it,
// and a port going down is one device's port.
#if GDR_HAVE_IB
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "transport/ib/softnic.h"

namespace gdr::transport::ib {
namespace {

struct Devices {
  const IbvApi* api = softnic::api();
  std::vector<ibv_context*> ctx;
  std::vector<ibv_pd*> pd;
  std::vector<ibv_cq*> cq;
  std::vector<ibv_qp*> qps;
  std::vector<ibv_mr*> mrs;

  Devices() {
    setenv("GDR_SOFTNIC_DEVICES", "2", 1);
    int n = 0;
    ibv_device** list = api->get_device_list(&n);
    unsetenv("GDR_SOFTNIC_DEVICES");
    for (int i = 0; i < n; ++i) {
      ctx.push_back(api->open_device(list[i]));
      pd.push_back(api->alloc_pd(ctx.back()));
      cq.push_back(api->create_cq(ctx.back(), 64, nullptr, nullptr, 0));
    }
    api->free_device_list(list);
  }
  ~Devices() {
    for (ibv_qp* q : qps) api->destroy_qp(q);
    for (ibv_mr* m : mrs) api->dereg_mr(m);
    for (size_t d = 0; d < ctx.size(); ++d) {
      api->destroy_cq(cq[d]);
      api->dealloc_pd(pd[d]);
      api->close_device(ctx[d]);
    }
  }
  ibv_mr* reg(int d, void* p, size_t n) {
    mrs.push_back(api->reg_mr(pd[d], p, n, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
    return mrs.back();
  }
  // src and dst registered on both devices: [device] of each.
  struct Both {
    ibv_mr* src[2];
    ibv_mr* dst[2];
  };
  Both regBoth(std::vector<char>& src, std::vector<char>& dst) {
    Both b{};
    for (int d = 0; d < 2; ++d) {
      b.src[d] = reg(d, src.data(), src.size());
      b.dst[d] = reg(d, dst.data(), dst.size());
    }
    return b;
  }
  // A QP on device d, port 1, in INIT.
  ibv_qp* qp(int d) {
    ibv_qp_init_attr ia{};
    ia.send_cq = ia.recv_cq = cq[d];
    ia.qp_type = IBV_QPT_RC;
    ia.cap.max_send_wr = ia.cap.max_recv_wr = 16;
    qps.push_back(api->create_qp(pd[d], &ia));
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.port_num = 1;
    api->modify_qp(qps.back(), &a, IBV_QP_STATE | IBV_QP_PORT);
    return qps.back();
  }
  void toRts(ibv_qp* q, ibv_qp* to) {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_RTR;
    a.dest_qp_num = to->qp_num;
    api->modify_qp(q, &a, IBV_QP_STATE | IBV_QP_DEST_QPN);
    a.qp_state = IBV_QPS_RTS;
    a.timeout = 1;
    a.retry_cnt = 0;
    api->modify_qp(q, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT);
  }
  // Two connected QPs of device d; returns the one that writes.
  ibv_qp* pair(int d) {
    ibv_qp* a = qp(d);
    ibv_qp* b = qp(d);
    toRts(a, b);
    toRts(b, a);
    return a;
  }
  // One RDMA write of `src` (lkey) to raddr/rkey on q; its completion status.
  ibv_wc_status write(ibv_qp* q, int d, void* src, uint32_t lkey, size_t n, void* dst,
                      uint32_t rkey) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(src), static_cast<uint32_t>(n), lkey};
    ibv_send_wr wr{};
    ibv_send_wr* bad = nullptr;
    wr.wr_id = 7;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(dst);
    wr.wr.rdma.rkey = rkey;
    if (ibv_post_send(q, &wr, &bad) != 0) return IBV_WC_GENERAL_ERR;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    ibv_wc wc{};
    while (ibv_poll_cq(cq[d], 1, &wc) == 0)
      if (std::chrono::steady_clock::now() > end) return IBV_WC_GENERAL_ERR;
    return wc.status;
  }
  ibv_port_state portState(int d) {
    ibv_port_attr pa{};
    api->queryPort(ctx[d], 1, &pa);
    return pa.state;
  }
};

TEST(SoftNicDevices, ListsTheAskedNumberByName) {
  Devices x;
  ASSERT_EQ(x.ctx.size(), 2u);
  EXPECT_STREQ(x.api->get_device_name(x.ctx[0]->device), "softnic0");
  EXPECT_STREQ(x.api->get_device_name(x.ctx[1]->device), "softnic1");
  int n = 0;
  x.api->free_device_list(x.api->get_device_list(&n));
  EXPECT_EQ(n, 1);  // without GDR_SOFTNIC_DEVICES: one, as before
}

TEST(SoftNicDevices, AKeyWorksOnlyOnItsOwnDevice) {
  Devices x;
  ASSERT_EQ(x.ctx.size(), 2u);
  std::vector<char> src(4096, 'x'), dst(4096, 0);
  const Devices::Both m = x.regBoth(src, dst);
  // softnic1 -> softnic1: the target's key must be softnic1's.
  ibv_qp* a = x.pair(1);
  EXPECT_EQ(x.write(a, 1, src.data(), m.src[1]->lkey, 64, dst.data(), m.dst[0]->rkey),
            IBV_WC_REM_ACCESS_ERR);
  EXPECT_EQ(dst[0], 0);
  ibv_qp* c = x.pair(1);
  // A local key of the other device is refused too.
  EXPECT_EQ(x.write(c, 1, src.data(), m.src[0]->lkey, 64, dst.data(), m.dst[1]->rkey),
            IBV_WC_LOC_PROT_ERR);
  ibv_qp* f = x.pair(1);
  EXPECT_EQ(x.write(f, 1, src.data(), m.src[1]->lkey, 64, dst.data(), m.dst[1]->rkey),
            IBV_WC_SUCCESS);
  EXPECT_EQ(dst[63], 'x');
}

TEST(SoftNicDevices, APortDownIsOneDevicesPort) {
  Devices x;
  ASSERT_EQ(x.ctx.size(), 2u);
  std::vector<char> src(4096, 'y'), dst(4096, 0);
  const Devices::Both m = x.regBoth(src, dst);
  ibv_qp* a0 = x.pair(0);
  ibv_qp* a1 = x.pair(1);
  softnic::portDown(1, 1);
  EXPECT_EQ(x.portState(1), IBV_PORT_DOWN);
  EXPECT_EQ(x.portState(0), IBV_PORT_ACTIVE);
  EXPECT_NE(x.write(a1, 1, src.data(), m.src[1]->lkey, 64, dst.data(), m.dst[1]->rkey),
            IBV_WC_SUCCESS);
  EXPECT_EQ(x.write(a0, 0, src.data(), m.src[0]->lkey, 64, dst.data(), m.dst[0]->rkey),
            IBV_WC_SUCCESS);
  EXPECT_EQ(dst[0], 'y');
  softnic::portUp(1, 1);  // for later tests of this process
  EXPECT_EQ(x.portState(1), IBV_PORT_ACTIVE);
}

}  // namespace
}  // namespace gdr::transport::ib
#endif
