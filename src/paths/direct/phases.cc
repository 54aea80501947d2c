#include "paths/direct/phases.h"

#include <algorithm>

namespace gdr::paths::direct {

namespace {

// Which memory a span touches: in place, Input and Output are one buffer.
int memoryOf(Where w, bool inPlace) {
  if (inPlace && w == Where::Output) return static_cast<int>(Where::Input);
  return static_cast<int>(w);
}

Span spanOf(const coll::Region& r) {
  Where w = Where::Input;
  if (r.buf == coll::BufId::Output) w = Where::Output;
  if (r.buf == coll::BufId::Scratch) w = Where::Scratch;
  return {w, r.offset, r.count};
}

// The current phase's reads and writes, as spans of memory.
class Access {
 public:
  explicit Access(bool inPlace) : inPlace_(inPlace) {}
  void clear() {
    sendReads_.clear();
    reads_.clear();
    writes_.clear();
  }
  void sendRead(const Span& s) { sendReads_.push_back(s); }
  void read(const Span& s) { reads_.push_back(s); }
  void write(const Span& s) { writes_.push_back(s); }
  // A send of `s` in this phase would miss what the phase writes there.
  bool sendConflicts(const Span& s) const { return hits(writes_, s); }
  // A receive into `s` in this phase would race the phase's sends, or be
  // overwritten by (or overwrite the input of) its deferred reductions.
  bool writeConflicts(const Span& s) const {
    return hits(sendReads_, s) || hits(reads_, s) || hits(writes_, s);
  }

 private:
  bool overlaps(const Span& a, const Span& b) const {
    return memoryOf(a.where, inPlace_) == memoryOf(b.where, inPlace_) && a.count && b.count &&
           a.offset < b.offset + b.count && b.offset < a.offset + a.count;
  }
  bool hits(const std::vector<Span>& v, const Span& s) const {
    return std::any_of(v.begin(), v.end(), [&](const Span& x) { return overlaps(x, s); });
  }
  bool inPlace_;
  std::vector<Span> sendReads_, reads_, writes_;
};

}  // namespace

PhasedSchedule toPhases(const coll::Schedule& s, bool inPlace) {
  PhasedSchedule out;
  out.scratchElems = s.scratchElems;
  Access acc(inPlace);
  SchedPhase cur;
  size_t staging = 0;  // elements of staging the current phase uses
  bool localSeen = false;
  auto close = [&] {
    if (!cur.msgs.empty() || !cur.ops.empty()) out.phases.push_back(std::move(cur));
    cur = SchedPhase{};
    acc.clear();
    out.stagingElems = std::max(out.stagingElems, staging);
    staging = 0;
    localSeen = false;
  };
  for (const coll::Step& st : s.steps) {
    const Span src = spanOf(st.src), dst = spanOf(st.dst);
    switch (st.kind) {
      case coll::StepKind::Send:
        if (localSeen || acc.sendConflicts(src)) close();
        cur.msgs.push_back({true, st.peer, src});
        acc.sendRead(src);
        break;
      case coll::StepKind::Recv:
        if (localSeen || acc.writeConflicts(dst)) close();
        cur.msgs.push_back({false, st.peer, dst});
        acc.write(dst);
        break;
      case coll::StepKind::RecvReduce: {
        if (localSeen || acc.writeConflicts(dst)) close();
        const Span stage{Where::Staging, staging, dst.count};
        staging += dst.count;
        cur.msgs.push_back({false, st.peer, stage});
        cur.ops.push_back({false, dst, src, stage});
        acc.read(src);
        acc.write(dst);
        break;
      }
      case coll::StepKind::Copy:
        cur.ops.push_back({true, dst, src, src});
        acc.read(src);
        acc.write(dst);
        localSeen = true;
        break;
      case coll::StepKind::Reduce:
        cur.ops.push_back({false, dst, dst, src});
        acc.read(src);
        acc.read(dst);
        acc.write(dst);
        localSeen = true;
        break;
    }
  }
  close();
  return out;
}

}  // namespace gdr::paths::direct
