#include "paths/staged/plan.h"

#include <algorithm>
#include <utility>

#include "core/datatype.h"
#include "core/error.h"

namespace gdr::paths::staged {

namespace {

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

// Row r of `c` sealed by origin + r * originStep, under nonce `first` with
// its dest advanced by r * destStep.
Copy2D sealedRows(Copy2D c, SealId first, int origin, int originStep, int destStep) {
  c.hostPitch = c.width + kSealTagBytes;
  c.seal.on = true;
  c.seal.first = first;
  c.seal.origin = origin;
  c.seal.originStep = originStep;
  c.seal.destStep = destStep;
  return c;
}

class CollPlan final : public Plan {
 public:
  CollPlan(const CollCall& call, int rank, int nranks, size_t segBytes, HostCollFn run,
           SealSpec seal)
      : c_(call), me_(rank), n_(nranks), eb_(gdr::typeSize(call.type)), run_(std::move(run)) {
    sealed_ = seal.on && sealable(call.kind) && call.count > 0;
    sealSeq_ = seal.seq;
    tag_ = sealed_ ? kSealTagBytes : 0;
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
    const bool blocks = traitsOf(c_.kind).layout != Layout::Whole;
    const size_t rowBytes = eb_ * (blocks ? static_cast<size_t>(n_) : 1);
    segElems_ = std::max<size_t>(1, segBytes / rowBytes);
    nseg_ = c_.count == 0 ? 1 : (c_.count + segElems_ - 1) / segElems_;
  }

  size_t segments() const override { return nseg_; }

  size_t slotBytes() const override {
    if (c_.kind == CollKind::AllToAllv) return std::max(inElems_, outElems_) * eb_;
    const bool blocks = traitsOf(c_.kind).layout != Layout::Whole;
    return (std::min(segElems_, c_.count) * eb_ + tag_) * (blocks ? n_ : 1);
  }

  std::string what() const override {
    return strprintf("%s of %zu x %zu B (staged%s)", collName(c_.kind), c_.count, eb_,
                     sealed_ ? ", sealed on the GPU" : "");
  }
  bool sealed() const override { return sealed_; }

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
    if (sealed_) return sealedSegment(k, std::move(s), h, off, bytes, block, recv, input);
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
  // Broadcast, all-gather, all-to-all with every row sealed (see the header):
  // the host collective moves rows of `bytes` + tag as bytes.
  Segment sealedSegment(size_t k, Segment s, CollCall h, size_t off, size_t bytes, size_t block, char* recv,
                        char* input) const {
    // This segment's nonce for rows to `dest` (all-to-all's rows: 0 + r).
    auto to = [&](int dest) {
      return SealId{kSealCollective, dest, sealSeq_, static_cast<uint32_t>(k)};
    };
    const SealId all = to(kSealAllRanks);
    h.type = gdrUint8;
    h.count = bytes + tag_;
    h.preSealed = true;
    switch (c_.kind) {
      case CollKind::Broadcast: {
        Copy2D c = sealedRows(linear(recv + off, true, 0, bytes), all, c_.root, 0, 0);
        (me_ == c_.root ? s.toHost : s.toDevice).push_back(c);
        s.host = [this, h](char* in, char*) mutable {
          h.sendbuf = h.recvbuf = in;
          run_(h);
        };
        return s;
      }
      case CollKind::AllGather: {
        char* mine = c_.inPlace ? recv + me_ * block : input;
        s.toHost.push_back(sealedRows(linear(mine + off, true, 0, bytes), all, me_, 0, 0));
        s.toDevice.push_back(sealedRows(strided(recv + off, block, false, bytes, n_), all, 0, 1, 0));
        break;
      }
      case CollKind::AllToAll:
        s.toHost.push_back(sealedRows(strided(input + off, block, true, bytes, n_), to(0), me_, 0, 1));
        s.toDevice.push_back(sealedRows(strided(recv + off, block, false, bytes, n_), to(me_), 0, 1, 0));
        break;
      default:
        throw Error(gdrInternalError, strprintf("%s cannot be sealed", collName(c_.kind)));
    }
    s.host = [this, h](char* in, char* out) mutable {
      h.sendbuf = in;
      h.recvbuf = out;
      run_(h);
    };
    return s;
  }

  CollCall c_;
  int me_, n_;
  size_t eb_;
  HostCollFn run_;
  bool sealed_ = false;
  uint32_t sealSeq_ = 0;
  size_t tag_ = 0;
  size_t segElems_ = 0, nseg_ = 1;
  std::vector<size_t> sc_, sd_, rc_, rd_;
  size_t inElems_ = 0, outElems_ = 0;
};

class P2PPlan final : public Plan {
 public:
  P2PPlan(std::vector<P2PItem> items, size_t chunk, HostGroupFn run, int rank, bool seal)
      : items_(std::move(items)), chunk_(std::max<size_t>(1, chunk)), run_(std::move(run)), me_(rank), seal_(seal) {
    const size_t tag = seal_ ? kSealTagBytes : 0;
    size_t sends = 0, recvs = 0, maxBytes = 0;
    for (const auto& it : items_) {
      (it.isSend ? sends : recvs)++;
      maxBytes = std::max(maxBytes, it.bytes);
    }
    rounds_ = std::max<size_t>(1, (maxBytes + chunk_ - 1) / chunk_);
    slot_ = std::max(sends, recvs) * (std::min(chunk_, maxBytes) + tag);
  }
  size_t segments() const override { return rounds_; }
  size_t slotBytes() const override { return slot_; }
  std::string what() const override {
    return strprintf("%zu device send/recv (staged%s)", items_.size(), seal_ ? ", sealed on the GPU" : "");
  }
  bool sealed() const override { return seal_; }

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
      const size_t tag = seal_ && len ? kSealTagBytes : 0;
      if (len) {
        Copy2D c = linear(it.buf + a, it.isSend, off, len);
        if (tag)
          c = sealedRows(
              c, {kSealP2P, it.isSend ? it.peer : me_, it.sealSeq, static_cast<uint32_t>(k)},
              it.isSend ? me_ : it.peer, 0, 0);
        (it.isSend ? s.toHost : s.toDevice).push_back(c);
      }
      // The host pointer is an offset here; host() adds the slot's base.
      msgs.push_back({it.isSend, reinterpret_cast<char*>(off), len + tag, it.peer, seal_});
      off += len + tag;
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
  int me_;
  bool seal_;
  size_t rounds_ = 1, slot_ = 0;
};

}  // namespace

bool sealable(CollKind kind) {
  return kind == CollKind::Broadcast || kind == CollKind::AllGather || kind == CollKind::AllToAll;
}

std::unique_ptr<Plan> planCollective(const CollCall& call, int rank, int nranks, size_t segBytes, HostCollFn run,
                                     SealSpec seal) {
  if (segBytes == 0) throw InvalidArgument("the staged segment size must be positive");
  return std::make_unique<CollPlan>(call, rank, nranks, segBytes, std::move(run), seal);
}

std::unique_ptr<Plan> planP2P(std::vector<P2PItem> items, size_t chunkBytes, HostGroupFn run, int rank, bool seal) {
  return std::make_unique<P2PPlan>(std::move(items), chunkBytes, std::move(run), rank, seal);
}

}  // namespace gdr::paths::staged
