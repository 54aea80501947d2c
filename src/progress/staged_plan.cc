#include "progress/staged_plan.h"

#include <algorithm>
#include <utility>

#include "collectives/reduce_host.h"
#include "core/error.h"

namespace gdr::staged {

namespace {

using coll::CollKind;

// The same range of each of `rows` blocks `blockBytes` apart, packed.
Copy2D strided(char* dev, size_t blockBytes, bool hostIn, size_t width, size_t rows) {
  Copy2D c;
  c.dev = dev;
  c.devPitch = blockBytes;
  c.hostIn = hostIn;
  c.hostPitch = width;
  c.width = width;
  c.rows = rows;
  return c;
}

Copy2D linear(char* dev, bool hostIn, size_t hostOff, size_t bytes) {
  Copy2D c = strided(dev, bytes, hostIn, bytes, 1);
  c.hostOff = hostOff;
  return c;
}

class CollPlan final : public Plan {
 public:
  CollPlan(const CollCall& call, int rank, int nranks, size_t segBytes, HostCollFn run)
      : c_(call), me_(rank), n_(nranks), eb_(coll::typeSize(call.type)), run_(std::move(run)) {
    if (c_.kind == CollKind::AllToAllv) {
      const size_t* sc = c_.inPlace ? c_.recvCounts : c_.sendCounts;
      const size_t* sd = c_.inPlace ? c_.recvDispls : c_.sendDispls;
      sc_.assign(sc, sc + n_);
      sd_.assign(sd, sd + n_);
      rc_.assign(c_.recvCounts, c_.recvCounts + n_);
      rd_.assign(c_.recvDispls, c_.recvDispls + n_);
      for (int r = 0; r < n_; ++r) {
        inElems_ = std::max(inElems_, sd_[r] + sc_[r]);
        outElems_ = std::max(outElems_, rd_[r] + rc_[r]);
      }
      c_.sendCounts = c_.sendDispls = c_.recvCounts = c_.recvDispls = nullptr;
      segElems_ = 0;
      nseg_ = 1;
      return;
    }
    if (c_.kind == CollKind::Barrier) {
      nseg_ = 1;
      return;
    }
    const bool blocks = c_.kind == CollKind::AllGather || c_.kind == CollKind::ReduceScatter ||
                        c_.kind == CollKind::AllToAll;
    const size_t rowBytes = eb_ * (blocks ? static_cast<size_t>(n_) : 1);
    segElems_ = std::max<size_t>(1, segBytes / rowBytes);
    nseg_ = c_.count == 0 ? 1 : (c_.count + segElems_ - 1) / segElems_;
  }

  size_t segments() const override { return nseg_; }

  size_t slotBytes() const override {
    if (c_.kind == CollKind::AllToAllv) return std::max(inElems_, outElems_) * eb_;
    const bool blocks = c_.kind == CollKind::AllGather || c_.kind == CollKind::ReduceScatter ||
                        c_.kind == CollKind::AllToAll;
    return std::min(segElems_, c_.count) * eb_ * (blocks ? n_ : 1);
  }

  std::string what() const override {
    return strprintf("%s of %zu x %zu B (staged)", coll::collName(c_.kind), c_.count, eb_);
  }

  Segment segment(size_t k) const override {
    Segment s;
    const size_t a = k * segElems_;
    const size_t m = c_.kind == CollKind::AllToAllv || c_.kind == CollKind::Barrier
                         ? 0
                         : std::min(segElems_, c_.count - std::min(a, c_.count));
    const size_t off = a * eb_, bytes = m * eb_, block = c_.count * eb_;
    char* recv = static_cast<char*>(c_.recvbuf);
    char* input = const_cast<char*>(static_cast<const char*>(c_.inPlace ? c_.recvbuf : c_.sendbuf));
    const bool root = me_ == c_.root;
    CollCall h = c_;
    h.count = m;
    h.inPlace = false;
    switch (c_.kind) {
      case CollKind::AllReduce:
      case CollKind::Reduce:
        if (bytes) s.toHost.push_back(linear(input + off, true, 0, bytes));
        if (bytes && (c_.kind == CollKind::AllReduce || root)) s.toDevice.push_back(linear(recv + off, false, 0, bytes));
        s.host = [this, h](char* in, char* out) mutable {
          h.sendbuf = in;
          h.recvbuf = c_.kind == CollKind::Reduce && me_ != c_.root ? nullptr : out;
          run_(h);
        };
        break;
      case CollKind::Broadcast:
        // One buffer: the root fills it, the others receive into it.
        if (bytes && root) s.toHost.push_back(linear(recv + off, true, 0, bytes));
        if (bytes && !root) s.toDevice.push_back(linear(recv + off, true, 0, bytes));
        s.host = [this, h](char* in, char*) mutable {
          h.sendbuf = h.recvbuf = in;
          run_(h);
        };
        break;
      case CollKind::AllGather: {
        char* mine = c_.inPlace ? recv + me_ * block : input;
        if (bytes) s.toHost.push_back(linear(mine + off, true, 0, bytes));
        if (bytes) s.toDevice.push_back(strided(recv + off, block, false, bytes, n_));
        s.host = [this, h](char* in, char* out) mutable {
          h.sendbuf = in;
          h.recvbuf = out;
          run_(h);
        };
        break;
      }
      case CollKind::ReduceScatter:
      case CollKind::AllToAll: {
        if (bytes) s.toHost.push_back(strided(input + off, block, true, bytes, n_));
        if (bytes) {
          if (c_.kind == CollKind::ReduceScatter) s.toDevice.push_back(linear(recv + off, false, 0, bytes));
          else s.toDevice.push_back(strided(recv + off, block, false, bytes, n_));
        }
        s.host = [this, h](char* in, char* out) mutable {
          h.sendbuf = in;
          h.recvbuf = out;
          run_(h);
        };
        break;
      }
      case CollKind::AllToAllv: {
        if (inElems_) s.toHost.push_back(linear(input, true, 0, inElems_ * eb_));
        if (outElems_) s.toDevice.push_back(linear(recv, false, 0, outElems_ * eb_));
        s.host = [this, h](char* in, char* out) mutable {
          h.sendbuf = in;
          h.recvbuf = out;
          h.sendCounts = sc_.data();
          h.sendDispls = sd_.data();
          h.recvCounts = rc_.data();
          h.recvDispls = rd_.data();
          run_(h);
        };
        break;
      }
      case CollKind::Barrier:
        s.host = [this, h](char*, char*) { run_(h); };
        break;
    }
    return s;
  }

 private:
  CollCall c_;
  int me_, n_;
  size_t eb_;
  HostCollFn run_;
  size_t segElems_ = 0, nseg_ = 1;
  std::vector<size_t> sc_, sd_, rc_, rd_;
  size_t inElems_ = 0, outElems_ = 0;
};

class P2PPlan final : public Plan {
 public:
  P2PPlan(std::vector<P2PItem> items, size_t chunk, HostGroupFn run)
      : items_(std::move(items)), chunk_(std::max<size_t>(1, chunk)), run_(std::move(run)) {
    size_t sends = 0, recvs = 0, maxBytes = 0;
    for (const auto& it : items_) {
      (it.isSend ? sends : recvs)++;
      maxBytes = std::max(maxBytes, it.bytes);
    }
    rounds_ = std::max<size_t>(1, (maxBytes + chunk_ - 1) / chunk_);
    slot_ = std::max(sends, recvs) * std::min(chunk_, maxBytes);
  }
  size_t segments() const override { return rounds_; }
  size_t slotBytes() const override { return slot_; }
  std::string what() const override { return strprintf("%zu device send/recv (staged)", items_.size()); }

  Segment segment(size_t k) const override {
    Segment s;
    std::vector<HostMsg> msgs;
    size_t inOff = 0, outOff = 0;
    for (const auto& it : items_) {
      const size_t a = k * chunk_;
      // A zero-byte message still goes, once, in round 0.
      if (a >= it.bytes && !(k == 0 && it.bytes == 0)) continue;
      const size_t len = std::min(chunk_, it.bytes - std::min(a, it.bytes));
      size_t& off = it.isSend ? inOff : outOff;
      if (len) (it.isSend ? s.toHost : s.toDevice).push_back(linear(it.buf + a, it.isSend, off, len));
      // The host pointer is an offset here; host() adds the slot's base.
      msgs.push_back({it.isSend, reinterpret_cast<char*>(off), len, it.peer});
      off += len;
    }
    s.host = [this, msgs](char* in, char* out) {
      std::vector<HostMsg> m = msgs;
      for (auto& x : m) x.host = (x.isSend ? in : out) + reinterpret_cast<size_t>(x.host);
      run_(m);
    };
    return s;
  }

 private:
  std::vector<P2PItem> items_;
  size_t chunk_;
  HostGroupFn run_;
  size_t rounds_ = 1, slot_ = 0;
};

}  // namespace

std::unique_ptr<Plan> planCollective(const CollCall& call, int rank, int nranks, size_t segBytes, HostCollFn run) {
  if (segBytes == 0) throw InvalidArgument("the staged segment size must be positive");
  return std::make_unique<CollPlan>(call, rank, nranks, segBytes, std::move(run));
}

std::unique_ptr<Plan> planP2P(std::vector<P2PItem> items, size_t chunkBytes, HostGroupFn run) {
  return std::make_unique<P2PPlan>(std::move(items), chunkBytes, std::move(run));
}

}  // namespace gdr::staged
