#include "transport/ib/ib_device.h"

#include <poll.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "core/error.h"
#include "core/log.h"
#include "core/params.h"
#include "transport/ib/ib_wire.h"

namespace gdr::transport::ib {

namespace {

bool isV4Mapped(const ibv_gid& g) {
  static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(g.raw, prefix, sizeof(prefix)) == 0;
}

std::string sysfsGidType(const std::string& dev, int port, int idx) {
  std::ifstream f("/sys/class/infiniband/" + dev + "/ports/" + std::to_string(port) +
                  "/gid_attrs/types/" + std::to_string(idx));
  std::string s;
  std::getline(f, s);
  return s;
}

// "a,b:2" -> {"a", "b:2"} (empty items dropped).
std::vector<std::string> splitNames(const std::string& s) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= s.size()) {
    size_t c = s.find(',', at);
    if (c == std::string::npos) c = s.size();
    if (c > at) out.push_back(s.substr(at, c - at));
    at = c + 1;
  }
  return out;
}

struct DeviceList {
  const IbvApi* api;
  ibv_device** list = nullptr;
  int n = 0;
  explicit DeviceList(const IbvApi* a) : api(a) { list = api->get_device_list(&n); }
  ~DeviceList() {
    if (list) api->free_device_list(list);
  }
};

}  // namespace

int pickRoceGid(int tableLen, const std::function<bool(int, ibv_gid*)>& query,
                const std::function<std::string(int)>& typeOf) {
  int fallback = -1;
  for (int i = 0; i < tableLen; ++i) {
    ibv_gid g{};
    if (!query(i, &g) || !isV4Mapped(g)) continue;
    std::string t = typeOf(i);
    if (t == "RoCE v2") return i;
    if (t.empty() && fallback < 0)
      fallback = i;  // type unknown: IPv4-mapped is still RoCEv2-shaped
  }
  return fallback;
}

bool IbDevice::usable(std::string* why) {
  try {
    open();
    return true;
  } catch (const Error& e) {
    if (why) *why = e.what();
    return false;
  }
}

std::shared_ptr<IbDevice> IbDevice::open(const std::string& preferred) {
  return openAll(preferred).front();
}

std::vector<std::shared_ptr<IbDevice>> IbDevice::openAll(const std::string& preferred) {
  const std::string hca = param::getString("GDR_IB_HCA");
  std::vector<std::shared_ptr<IbDevice>> out;
  if (!hca.empty() && hca[0] == '^') {
    out.push_back(openNamed("", splitNames(hca.substr(1))));
  } else if (!hca.empty()) {
    for (const std::string& item : splitNames(hca)) out.push_back(openNamed(item));
  } else {
    for (const std::string& item : splitNames(preferred)) {
      try {
        out.push_back(openNamed(item));
      } catch (const NotSupported& e) {
        GDR_INFO(kNet, "topology's NIC %s is not usable (%s)", item.c_str(), e.what());
      }
    }
    if (out.empty()) {
      if (!preferred.empty()) GDR_INFO(kNet, "taking the first active RDMA device");
      out.push_back(openNamed(""));
    }
  }
  if (out.size() > static_cast<size_t>(kMaxIbDevices))
    throw InvalidArgument(strprintf("GDR_IB_HCA=%s names %zu devices; at most %d are used at once",
                                    hca.c_str(), out.size(), kMaxIbDevices));
  return out;
}

std::shared_ptr<IbDevice> IbDevice::openNamed(std::string want,
                                              const std::vector<std::string>& skip) {
  std::string why;
  const IbvApi* api = ibvApi(&why);
  if (!api) throw NotSupported("RDMA unavailable: " + why);
  DeviceList devs(api);
  if (!devs.list || devs.n == 0)
    throw NotSupported("RDMA unavailable: libibverbs lists no devices");

  int wantPort = 0;
  if (auto c = want.find(':'); c != std::string::npos) {
    wantPort = std::atoi(want.c_str() + c + 1);
    want.resize(c);
  }
  std::shared_ptr<IbDevice> d(new IbDevice);
  d->api_ = api;
  for (int i = 0; i < devs.n && !d->ctx_; ++i) {
    std::string name = api->get_device_name(devs.list[i]);
    if (!want.empty() && name != want) continue;
    if (std::find(skip.begin(), skip.end(), name) != skip.end()) continue;
    ibv_context* ctx = api->open_device(devs.list[i]);
    if (!ctx) continue;
    ibv_device_attr da{};
    if (api->query_device(ctx, &da) != 0) {
      api->close_device(ctx);
      continue;
    }
    for (int p = 1; p <= da.phys_port_cnt; ++p) {
      if (wantPort && p != wantPort) continue;
      ibv_port_attr pa{};
      if (api->queryPort(ctx, static_cast<uint8_t>(p), &pa) != 0 || pa.state != IBV_PORT_ACTIVE)
        continue;
      Port port;
      port.num = static_cast<uint8_t>(p);
      port.lid = pa.lid;
      port.mtu = pa.active_mtu;
      const bool roce = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
      int forced = static_cast<int>(param::getInt("GDR_IB_GID_INDEX"));
      if (forced >= 0) {
        port.gidIndex = forced;
      } else if (roce) {
        port.gidIndex = pickRoceGid(
            pa.gid_tbl_len,
            [&](int idx, ibv_gid* g) { return api->query_gid(ctx, port.num, idx, g) == 0; },
            [&](int idx) { return sysfsGidType(name, p, idx); });
      }
      std::string bad;
      if (port.gidIndex < 0)
        bad = strprintf("RDMA device %s port %d has no RoCEv2 IPv4 GID (set GDR_IB_GID_INDEX)",
                        name.c_str(), p);
      else if (api->query_gid(ctx, port.num, port.gidIndex, &port.gid) != 0)
        bad =
            strprintf("RDMA device %s port %d: cannot read GID %d", name.c_str(), p, port.gidIndex);
      if (!bad.empty()) {
        if (d->ports_.empty()) throw NotSupported(bad);
        GDR_INFO(kNet, "%s; the device's other ports carry its QPs", bad.c_str());
        continue;
      }
      if (d->ports_.empty()) {  // the first port: the device's own fields
        d->ctx_ = ctx;
        d->name_ = name;
        d->port_ = port.num;
        d->lid_ = port.lid;
        d->mtu_ = port.mtu;
        d->roce_ = roce;
        d->maxQpWr_ = da.max_qp_wr;
        d->maxCqe_ = da.max_cqe;
        d->gidIndex_ = port.gidIndex;
        d->gid_ = port.gid;
      } else if (roce != d->roce_) {
        continue;  // one link layer per connection
      }
      d->ports_.push_back(port);
    }
    if (!d->ctx_) api->close_device(ctx);
  }
  if (!d->ctx_)
    throw NotSupported(
        want.empty() ? std::string("RDMA unavailable: no device has an active port")
                     : strprintf("RDMA device %s (GDR_IB_HCA) not found or its port is not active",
                                 want.c_str()));
  d->pd_ = api->alloc_pd(d->ctx_);
  if (!d->pd_) throw SystemError(strprintf("ibv_alloc_pd on %s", d->name_.c_str()), errno);
  for (const Port& p : d->ports_) {
    const uint8_t* g = p.gid.raw;
    GDR_INFO(kNet, "RDMA device %s port %u: %s, GID[%d] %u.%u.%u.%u (last 4 bytes), MTU %d, LID %u",
             d->name_.c_str(), p.num, d->roce_ ? "RoCE" : "InfiniBand", p.gidIndex, g[12], g[13],
             g[14], g[15], 128 << p.mtu, p.lid);
  }
  return d;
}

std::string IbDevice::drainAsyncEvents() const {
  std::string out;
  for (int i = 0; i < 16; ++i) {
    pollfd p{ctx_->async_fd, POLLIN, 0};
    if (poll(&p, 1, 0) <= 0) break;
    ibv_async_event ev{};
    if (api_->get_async_event(ctx_, &ev) != 0) break;
    std::string what = api_->event_type_str(ev.event_type);
    switch (ev.event_type) {
      case IBV_EVENT_QP_FATAL:
      case IBV_EVENT_QP_REQ_ERR:
      case IBV_EVENT_QP_ACCESS_ERR:
      case IBV_EVENT_COMM_EST:
      case IBV_EVENT_SQ_DRAINED:
      case IBV_EVENT_PATH_MIG:
      case IBV_EVENT_PATH_MIG_ERR:
      case IBV_EVENT_QP_LAST_WQE_REACHED:
        what += strprintf(" on QP %u", ev.element.qp->qp_num);
        break;
      default:
        break;
    }
    api_->ack_async_event(&ev);
    out += (out.empty() ? "" : "; ") + what;
  }
  return out;
}

IbDevice::~IbDevice() {
  if (pd_) api_->dealloc_pd(pd_);
  if (ctx_) api_->close_device(ctx_);
}

}  // namespace gdr::transport::ib
