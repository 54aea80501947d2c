#include "sim/symmetric.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "sim/message_policy.h"
#include "sim/step_cost.h"

namespace gdr::sim {
namespace {

using coll::StepKind;

// A relation: shift by d, or xor with m (encoded as -1 - m).
using Rel = long;
int apply(Rel rel, int rank, int n) {
  return rel >= 0 ? static_cast<int>((rank + rel) % n) : rank ^ static_cast<int>(-1 - rel);
}

// The relation rank 0's step follows on every sample rank, or 0 (a shift
// by 0 is no relation) when none does.
Rel relationOf(size_t i, const std::vector<coll::Schedule>& samples, const std::vector<int>& ranks,
               int n) {
  const int p0 = samples[0].steps[i].peer;
  const Rel shift = p0, xr = -1 - static_cast<Rel>(p0);
  bool okShift = true, okXor = (p0 & (p0 - 1)) == 0 && (n & (n - 1)) == 0;
  for (size_t k = 1; k < samples.size(); ++k) {
    const int p = samples[k].steps[i].peer, r = ranks[k];
    okShift = okShift && p == apply(shift, r, n);
    okXor = okXor && p == apply(xr, r, n);
  }
  return okShift ? shift : okXor ? xr : 0;
}

bool sameShape(const coll::Step& a, const coll::Step& b) {
  return a.kind == b.kind && a.src.count == b.src.count && a.dst.count == b.dst.count &&
         (a.peer < 0) == (b.peer < 0);
}

struct SendRec {
  double post = -1, recvPost = -1, arrival = -1;
  size_t bytes = 0;
  bool isEager = false, done = false;
};

class Walker {
 public:
  Walker(const EngineInput& in, int n) : in_(in), c_(*in.cluster), n_(n) {}

  struct Round {
    double rate = 0;     // GB/s per flow
    double latency = 0;  // the flows' mean, us
  };

  // Relation `rel` with every rank sending at once: the per-flow rate at
  // the most loaded link (its data must all cross it), and the mean latency
  // of the flows (a chain of dependent steps crosses each rank once along
  // a diagonal, so it meets each link class as often as the round has it:
  // a ring of 8-GPU hosts pays a NIC's latency one step in eight).
  const Round& round(Rel rel, size_t bytes) {
    const bool cma = !c_.device && singleCopy(c_, in_.kind, bytes);
    const bool inl = bytes <= c_.inlineBytes;
    const auto key = std::make_tuple(rel, cma, inl);
    auto it = rounds_.find(key);
    if (it != rounds_.end()) return it->second;
    Round rd;
    // One load vector for all rounds; only the links a round touched are
    // read and cleared (all-to-all has n - 1 rounds).
    load_.resize(static_cast<size_t>(in_.net->numLinks()), 0.0);
    touched_.clear();
    double cap = 1e30;
    for (int r = 0; r < n_; ++r) {
      const int peer = apply(rel, r, n_);
      const Path p = in_.net->path(r, peer, cma && c_.hostOf(r) == c_.hostOf(peer), sharedCopy(c_, in_.kind));
      if (p.flowCapGBps > 0) cap = std::min(cap, p.flowCapGBps);
      rd.latency += (p.latencyUs - inlineSavedUs(c_, p, bytes)) / n_;
      for (int i = 0; i < p.nlinks; ++i) {
        if (load_[p.links[i]] == 0) touched_.push_back(p.links[i]);
        load_[p.links[i]] += p.weight[i];
      }
    }
    for (int l : touched_) {
      cap = std::min(cap, in_.net->capacity(l) / load_[l]);
      load_[l] = 0;
    }
    rd.latency += c_.schedUs * (c_.oversub() - 1.0);  // as latencyUs() adds
    rd.rate = cap;
    return rounds_[key] = rd;
  }

  Path pathOf(Rel rel, size_t bytes) const {
    const int peer = apply(rel, 0, n_);
    return in_.net->path(
        0, peer, !c_.device && c_.hostOf(0) == c_.hostOf(peer) && singleCopy(c_, in_.kind, bytes),
        sharedCopy(c_, in_.kind));
  }

  // Starts a send's flow once it may start; rank 0's overlapping flows split the rate.
  void maybeStart(Rel rel, SendRec& s) {
    if (s.done || s.post < 0 || (!s.isEager && s.recvPost < 0)) return;
    const double start = s.isEager ? s.post : std::max(s.post, s.recvPost);
    own_.erase(std::remove_if(own_.begin(), own_.end(), [&](double e) { return e <= start; }),
               own_.end());
    const Round& rd = round(rel, s.bytes);
    const double r = rd.rate / static_cast<double>(own_.size() + 1);
    const double end = start + static_cast<double>(s.bytes) / (r * 1e3);
    own_.push_back(end);
    s.arrival = end + rd.latency;
    s.done = true;
    ++messages_;
  }

  bool walk(const coll::Schedule& s0, const std::vector<Rel>& rels, EngineResult* out) {
    double t = 0;
    for (size_t i = 0; i < s0.steps.size(); ++i) {
      const coll::Step& st = s0.steps[i];
      const size_t bytes =
          (st.kind == StepKind::Send ? st.src.count : st.dst.count) * in_.elemBytes;
      const bool same = st.peer >= 0 && c_.hostOf(0) == c_.hostOf(st.peer);
      switch (st.kind) {
        case StepKind::Send: {
          SendRec& s = slot(rels[i], sendCount_[rels[i]]++);
          t += sendUs(c_);
          s.post = t;
          s.bytes = bytes;
          s.isEager = eager(c_, in_.kind, bytes, same);
          maybeStart(rels[i], s);
          break;
        }
        case StepKind::Recv:
        case StepKind::RecvReduce: {
          const Rel mirror = rels[i] >= 0 ? (n_ - rels[i]) % n_ : rels[i];
          SendRec& s = slot(mirror, recvCount_[mirror]++);
          s.recvPost = t;
          if (s.post < 0) return false;  // its mirror send comes later in the list: not lockstep
          maybeStart(mirror, s);
          if (!s.done) return false;
          t = receiveDoneUs(c_, st, bytes, t, s.arrival, s.isEager, s.recvPost,
                            pathOf(mirror, bytes));
          break;
        }
        case StepKind::Copy:
        case StepKind::Reduce:
          t += localStepUs(c_, st, bytes);
          break;
      }
    }
    for (const auto& kv : sends_)
      for (const SendRec& s : kv.second)
        if (s.post >= 0) t = std::max(t, s.arrival);
    out->timeUs = in_.launchUs + t;
    out->messages = messages_ * static_cast<size_t>(n_);
    out->events = s0.steps.size();
    return true;
  }

 private:
  SendRec& slot(Rel rel, size_t j) {
    std::vector<SendRec>& v = sends_[rel];
    if (v.size() <= j) v.resize(j + 1);
    return v[j];
  }

  const EngineInput& in_;
  const Cluster& c_;
  int n_;
  std::map<std::tuple<Rel, bool, bool>, Round> rounds_;
  std::map<Rel, std::vector<SendRec>> sends_;
  std::map<Rel, size_t> sendCount_, recvCount_;
  std::vector<double> own_;
  std::vector<double> load_;
  std::vector<int> touched_;
  size_t messages_ = 0;
};

}  // namespace

bool runSymmetric(const EngineInput& in, coll::Algo algo, const coll::CollArgs& base,
                  EngineResult* out) {
  const int n = base.nranks;
  if (n < 2) return false;
  std::vector<int> ranks = {0, 1, n / 2 + 1, n - 1};
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  ranks.erase(std::remove_if(ranks.begin(), ranks.end(), [&](int r) { return r >= n; }),
              ranks.end());
  std::vector<coll::Schedule> samples;
  for (int r : ranks) {
    coll::CollArgs a = base;
    a.rank = r;
    samples.push_back(coll::build(algo, a));
    if (samples.back().steps.size() != samples[0].steps.size()) return false;
  }
  std::vector<Rel> rels(samples[0].steps.size(), 0);
  for (size_t i = 0; i < rels.size(); ++i) {
    for (size_t k = 1; k < samples.size(); ++k)
      if (!sameShape(samples[0].steps[i], samples[k].steps[i])) return false;
    if (samples[0].steps[i].peer < 0) continue;
    rels[i] = relationOf(i, samples, ranks, n);
    if (rels[i] == 0) return false;
  }
  return Walker(in, n).walk(samples[0], rels, out);
}

}  // namespace gdr::sim
