#include "support/schedule_sim.h"

#include <algorithm>
#include <deque>
#include <sstream>

namespace gdr::coll::sim {
namespace {

const char* bufName(BufId b) {
  switch (b) {
    case BufId::Input:
      return "Input";
    case BufId::Output:
      return "Output";
    case BufId::Scratch:
      return "Scratch";
  }
  return "?";
}

const char* stepName(StepKind k) {
  switch (k) {
    case StepKind::Send:
      return "Send";
    case StepKind::Recv:
      return "Recv";
    case StepKind::RecvReduce:
      return "RecvReduce";
    case StepKind::Copy:
      return "Copy";
    case StepKind::Reduce:
      return "Reduce";
  }
  return "?";
}

std::string regionText(const Region& r) {
  std::ostringstream os;
  os << bufName(r.buf) << "[" << r.offset << "+" << r.count << "]";
  return os.str();
}

std::string stepText(const Step& s) {
  std::ostringstream os;
  os << stepName(s.kind);
  if (s.peer >= 0) os << " peer " << s.peer;
  if (s.kind != StepKind::Recv) os << " src " << regionText(s.src);
  if (s.kind != StepKind::Send) os << " dst " << regionText(s.dst);
  os << " chunk " << s.chunk;
  return os.str();
}

// What each rank's buffers look like for a collective.
struct Shape {
  size_t inElems = 0, outElems = 0;
  bool hasInput = true, hasOutput = true;
  // In place, Input is Output's elements from aliasOffset on (kNoAlias: apart).
  size_t aliasOffset = kNoAlias;
  static constexpr size_t kNoAlias = ~size_t{0};
};

size_t extent(const std::vector<size_t>& counts, const std::vector<size_t>& displs) {
  size_t e = 0;
  for (size_t i = 0; i < counts.size() && i < displs.size(); ++i)
    e = std::max(e, displs[i] + counts[i]);
  return e;
}

Shape shapeOf(const CollArgs& a) {
  Shape s;
  const size_t n = static_cast<size_t>(a.nranks);
  switch (a.kind) {
    case CollKind::AllReduce:
      s.inElems = s.outElems = a.count;
      if (a.inPlace) s.aliasOffset = 0;
      break;
    case CollKind::Broadcast:
      s.inElems = s.outElems = a.count;
      if (a.inPlace) s.aliasOffset = 0;
      s.hasInput = a.rank == a.root || a.inPlace;
      break;
    case CollKind::Reduce:
      s.inElems = a.count;
      s.hasOutput = a.rank == a.root;
      s.outElems = s.hasOutput ? a.count : 0;
      if (a.inPlace && s.hasOutput) s.aliasOffset = 0;
      break;
    case CollKind::AllGather:
      s.inElems = a.count;
      s.outElems = n * a.count;
      // MPI_IN_PLACE: the rank's block already sits in Output (paths/host.cc).
      if (a.inPlace) s.aliasOffset = static_cast<size_t>(a.rank) * a.count;
      break;
    case CollKind::ReduceScatter:
      s.inElems = n * a.count;
      s.outElems = a.count;
      break;
    case CollKind::AllToAll:
      s.inElems = s.outElems = n * a.count;
      break;
    case CollKind::AllToAllv:
      s.inElems = extent(a.sendCounts, a.sendDispls);
      s.outElems = extent(a.recvCounts, a.recvDispls);
      break;
    case CollKind::Barrier:
      break;
  }
  return s;
}

struct Message {
  std::vector<Sym> data;
  size_t step;
  uint32_t heard;  // the sender's heardFrom when it sent
  const Sym* src;  // what the send reads, until it is received
  size_t len;
};

class Simulator {
 public:
  Simulator(const std::vector<CollArgs>& args, const std::vector<Schedule>& scheds, bool rendezvous)
      : scheds_(scheds), n_(static_cast<int>(args.size())), rendezvous_(rendezvous) {
    ranks_.resize(n_);
    queues_.resize(static_cast<size_t>(n_) * n_);
    for (int r = 0; r < n_; ++r) {
      RankState& st = ranks_[r];
      st.shape = shapeOf(args[r]);
      st.input.resize(st.shape.inElems);
      for (size_t i = 0; i < st.input.size(); ++i)
        st.input[i] = contribution(r, static_cast<uint32_t>(i));
      st.output.resize(st.shape.outElems);
      if (st.shape.aliasOffset != Shape::kNoAlias)
        std::copy(st.input.begin(), st.input.end(), st.output.begin() + st.shape.aliasOffset);
      st.scratch.resize(scheds[r].scratchElems);
      st.heard = 1u << r;
    }
  }

  SimResult run() {
    SimResult res;
    res.error = execute();
    if (res.error.empty()) res.error = leftovers();
    for (int r = 0; r < n_; ++r) {
      res.outputs.push_back(ranks_[r].shape.hasOutput ? ranks_[r].output : std::vector<Sym>{});
      res.heardFrom.push_back(ranks_[r].heard);
    }
    return res;
  }

 private:
  struct RankState {
    Shape shape;
    std::vector<Sym> input, output, scratch;
    size_t pc = 0;
    uint32_t heard = 0;
  };

  std::deque<Message>& queue(int from, int to) {
    return queues_[static_cast<size_t>(from) * n_ + to];
  }

  std::string fail(int r, const std::string& what) {
    std::ostringstream os;
    os << "rank " << r << " step " << ranks_[r].pc << " ("
       << stepText(scheds_[r].steps[ranks_[r].pc]) << "): " << what;
    return os.str();
  }

  // *at = the first element a region names; false with *err set if it may not.
  bool resolve(int r, const Region& reg, bool write, Sym** at, std::string* err) {
    RankState& st = ranks_[r];
    Sym* base = nullptr;
    size_t size = 0;
    switch (reg.buf) {
      case BufId::Input:
        if (write) {
          *err = "writes Input, which is read-only";
          return false;
        }
        if (!st.shape.hasInput) {
          *err = "reads Input, which this rank does not have";
          return false;
        }
        size = st.input.size();
        base = st.shape.aliasOffset == Shape::kNoAlias ? st.input.data()
                                                       : st.output.data() + st.shape.aliasOffset;
        break;
      case BufId::Output:
        if (!st.shape.hasOutput) {
          *err = "touches Output, which this rank does not have (use Scratch)";
          return false;
        }
        base = st.output.data();
        size = st.output.size();
        break;
      case BufId::Scratch:
        base = st.scratch.data();
        size = st.scratch.size();
        break;
    }
    if (reg.offset > size || reg.count > size - reg.offset) {
      std::ostringstream os;
      os << regionText(reg) << " is out of bounds (" << bufName(reg.buf) << " has " << size
         << " elements)";
      *err = os.str();
      return false;
    }
    *at = base + reg.offset;
    return true;
  }

  // Reads a region's elements, all of which must be valid.
  bool read(int r, const Region& reg, std::vector<Sym>* out, std::string* err) {
    Sym* p = nullptr;
    if (!resolve(r, reg, false, &p, err)) return false;
    out->assign(p, p + reg.count);
    for (size_t i = 0; i < out->size(); ++i) {
      if (!(*out)[i].valid) {
        std::ostringstream os;
        os << "reads " << bufName(reg.buf) << "[" << reg.offset + i << "], never written";
        *err = os.str();
        return false;
      }
    }
    return true;
  }

  static bool combine(const Sym& a, const Sym& b, Sym* out, std::string* err) {
    if (a.index != b.index) {
      *err = "reduces " + describe(a) + " with " + describe(b) + " (different elements)";
      return false;
    }
    const uint64_t sum = a.counts + b.counts;
    const uint64_t carries = (sum ^ a.counts ^ b.counts) & 0x1111111111111110ull;
    if (carries != 0 || sum < a.counts) {
      *err = "a rank's contribution is counted 16 times or more";
      return false;
    }
    *out = Sym{true, a.index, sum};
    return true;
  }

  // Combines `incoming` into dst[i] = op(src[i], incoming[i]).
  bool reduceInto(int r, const Region& src, const Region& dst, const std::vector<Sym>& incoming,
                  std::string* err) {
    std::vector<Sym> left;
    if (!read(r, src, &left, err)) return false;
    Sym* d = nullptr;
    if (!resolve(r, dst, true, &d, err)) return false;
    for (size_t i = 0; i < incoming.size(); ++i)
      if (!combine(left[i], incoming[i], &d[i], err)) return false;
    return true;
  }

  // Both regions' storage, for overlap checks.
  const Sym* base(int r, const Region& reg) {
    std::string ignored;
    Sym* b = nullptr;
    if (resolve(r, reg, false, &b, &ignored) || resolve(r, reg, true, &b, &ignored)) return b;
    return nullptr;
  }

  bool disjointOrSame(int r, const Region& x, const Region& y) {
    const Sym* a = base(r, x);
    const Sym* b = base(r, y);
    if (a == nullptr || b == nullptr || a == b) return true;  // bad regions fail elsewhere
    return !(a < b + y.count && b < a + x.count);
  }

  // Whether step s (which writes s.dst) would overwrite memory that one of
  // rank r's sends still reads, i.e. that its receiver has not taken yet. A
  // self-copy writes nothing.
  bool writesUnderOwnSend(int r, const Step& s) {
    const Sym* d = base(r, s.dst);
    if (d == nullptr || s.dst.count == 0) return false;
    if (s.kind == StepKind::Copy && base(r, s.src) == d) return false;
    for (int to = 0; to < n_; ++to)
      for (const Message& m : queue(r, to))
        if (m.len != 0 && m.src < d + s.dst.count && d < m.src + m.len) return true;
    return false;
  }

  // Runs one step; false when it blocks (*err empty) or fails (*err set).
  bool step(int r, std::string* err) {
    const Step& s = scheds_[r].steps[ranks_[r].pc];
    const bool remote =
        s.kind == StepKind::Send || s.kind == StepKind::Recv || s.kind == StepKind::RecvReduce;
    if (remote && (s.peer < 0 || s.peer >= n_ || s.peer == r)) {
      *err = "peer is not another rank";
      return false;
    }
    if (s.kind == StepKind::RecvReduce || s.kind == StepKind::Copy || s.kind == StepKind::Reduce) {
      if (s.src.count != s.dst.count) {
        *err = "src and dst counts differ";
        return false;
      }
    }
    if (rendezvous_ && s.kind != StepKind::Send && writesUnderOwnSend(r, s)) return false;
    switch (s.kind) {
      case StepKind::Send: {
        Message m{{}, ranks_[r].pc, ranks_[r].heard, base(r, s.src), s.src.count};
        if (!read(r, s.src, &m.data, err)) return false;
        queue(r, s.peer).push_back(std::move(m));
        return true;
      }
      case StepKind::Recv:
      case StepKind::RecvReduce: {
        std::deque<Message>& q = queue(s.peer, r);
        if (q.empty()) return false;
        const Message& m = q.front();
        if (m.data.size() != s.dst.count) {
          std::ostringstream os;
          os << "receives " << s.dst.count << " elements but rank " << s.peer << " sent "
             << m.data.size() << " (its step " << m.step << ": "
             << stepText(scheds_[s.peer].steps[m.step]) << ")";
          *err = os.str();
          return false;
        }
        if (s.kind == StepKind::Recv) {
          Sym* d = nullptr;
          if (!resolve(r, s.dst, true, &d, err)) return false;
          std::copy(m.data.begin(), m.data.end(), d);
        } else {
          if (!disjointOrSame(r, s.src, s.dst)) {
            *err = "src and dst partially overlap";
            return false;
          }
          if (!reduceInto(r, s.src, s.dst, m.data, err)) return false;
        }
        ranks_[r].heard |= m.heard;
        q.pop_front();
        return true;
      }
      case StepKind::Copy:
      case StepKind::Reduce: {
        std::vector<Sym> src;
        if (!read(r, s.src, &src, err)) return false;
        Sym* d = nullptr;
        if (!resolve(r, s.dst, true, &d, err)) return false;
        const Sym* a = base(r, s.src);
        const Sym* b = d;
        const bool same = a == b;
        const bool overlap = a < b + s.dst.count && b < a + s.src.count;
        if (s.kind == StepKind::Copy && same) return true;  // the executor skips it
        if (overlap) {
          *err = "src and dst overlap";
          return false;
        }
        if (s.kind == StepKind::Copy) {
          std::copy(src.begin(), src.end(), d);
          return true;
        }
        return reduceInto(r, s.dst, s.dst, src, err);
      }
    }
    *err = "unknown step kind";
    return false;
  }

  std::string execute() {
    for (;;) {
      bool progress = false, done = true;
      for (int r = 0; r < n_; ++r) {
        RankState& st = ranks_[r];
        while (st.pc < scheds_[r].steps.size()) {
          std::string err;
          if (!step(r, &err)) {
            if (!err.empty()) return fail(r, err);
            break;
          }
          ++st.pc;
          progress = true;
        }
        if (st.pc < scheds_[r].steps.size()) done = false;
      }
      if (done) return "";
      if (!progress) return deadlock();
    }
  }

  std::string deadlock() {
    std::ostringstream os;
    os << "deadlock:";
    for (int r = 0; r < n_; ++r) {
      if (ranks_[r].pc >= scheds_[r].steps.size()) continue;
      os << " [rank " << r << " waits at step " << ranks_[r].pc << ": "
         << stepText(scheds_[r].steps[ranks_[r].pc]) << "]";
    }
    return os.str();
  }

  std::string leftovers() {
    for (int from = 0; from < n_; ++from) {
      for (int to = 0; to < n_; ++to) {
        const std::deque<Message>& q = queue(from, to);
        if (q.empty()) continue;
        std::ostringstream os;
        os << q.size() << " message(s) from rank " << from << " to rank " << to
           << " never received (first: its step " << q.front().step << ": "
           << stepText(scheds_[from].steps[q.front().step]) << ")";
        return os.str();
      }
    }
    return "";
  }

  const std::vector<Schedule>& scheds_;
  int n_;
  bool rendezvous_;
  std::vector<RankState> ranks_;
  std::vector<std::deque<Message>> queues_;
};

// What rank r's Output element i must be, or poison where nothing may land.
Sym expected(const std::vector<CollArgs>& args, int r, size_t i) {
  const CollArgs& a = args[r];
  const int n = a.nranks;
  const uint64_t all = allRanks(n);
  const auto idx = [](size_t v) { return static_cast<uint32_t>(v); };
  switch (a.kind) {
    case CollKind::AllReduce:
    case CollKind::Reduce:
      return Sym{true, idx(i), all};
    case CollKind::Broadcast:
      return contribution(a.root, idx(i));
    case CollKind::AllGather:
      return contribution(static_cast<int>(i / a.count), idx(i % a.count));
    case CollKind::ReduceScatter:
      return Sym{true, idx(r * a.count + i), all};
    case CollKind::AllToAll: {
      const size_t src = i / a.count, off = i % a.count;
      return contribution(static_cast<int>(src), idx(r * a.count + off));
    }
    case CollKind::AllToAllv:
      for (int src = 0; src < n; ++src) {
        if (i >= a.recvDispls[src] && i < a.recvDispls[src] + a.recvCounts[src])
          return contribution(src, idx(args[src].sendDispls[r] + (i - a.recvDispls[src])));
      }
      return Sym{};
    case CollKind::Barrier:
      break;
  }
  return Sym{};
}

bool sameSym(const Sym& a, const Sym& b) {
  if (!a.valid || !b.valid) return a.valid == b.valid;
  return a.index == b.index && a.counts == b.counts;
}

}  // namespace

Sym contribution(int rank, uint32_t index) { return Sym{true, index, 1ull << (4 * rank)}; }

uint64_t allRanks(int nranks) {
  uint64_t c = 0;
  for (int r = 0; r < nranks; ++r) c |= 1ull << (4 * r);
  return c;
}

std::string describe(const Sym& s) {
  if (!s.valid) return "poison";
  std::ostringstream os;
  os << "elem " << s.index << " {";
  bool first = true;
  for (int r = 0; r < kMaxRanks; ++r) {
    const unsigned c = (s.counts >> (4 * r)) & 0xf;
    if (c == 0) continue;
    os << (first ? "" : ",") << "r" << r;
    if (c != 1) os << "x" << c;
    first = false;
  }
  os << "}";
  return os.str();
}

SimResult simulate(const std::vector<CollArgs>& args, const std::vector<Schedule>& schedules,
                   bool rendezvous) {
  if (args.size() > kMaxRanks || args.size() != schedules.size()) {
    SimResult bad;
    bad.error = "simulate: needs one schedule per rank and at most 16 ranks";
    return bad;
  }
  Simulator sim(args, schedules, rendezvous);
  return sim.run();
}

std::string verify(const std::vector<CollArgs>& args, const SimResult& result) {
  if (!result.error.empty()) return result.error;
  const uint32_t everyone = args.size() >= 32 ? ~0u : (1u << args.size()) - 1;
  for (size_t r = 0; r < args.size(); ++r) {
    if (args[r].kind == CollKind::Barrier && result.heardFrom[r] != everyone) {
      std::ostringstream os;
      os << "barrier: rank " << r << " can leave before hearing from every rank (heard mask 0x"
         << std::hex << result.heardFrom[r] << ")";
      return os.str();
    }
  }
  for (size_t r = 0; r < args.size(); ++r) {
    const std::vector<Sym>& out = result.outputs[r];
    for (size_t i = 0; i < out.size(); ++i) {
      const Sym want = expected(args, static_cast<int>(r), i);
      if (!sameSym(out[i], want)) {
        std::ostringstream os;
        os << "rank " << r << " Output[" << i << "] is " << describe(out[i]) << ", want "
           << describe(want);
        return os.str();
      }
    }
  }
  return "";
}

std::string checkShape(const std::vector<CollArgs>& args, const std::vector<Schedule>& schedules) {
  for (size_t r = 0; r < schedules.size(); ++r) {
    const size_t limit = args[r].chunkElems;
    for (size_t i = 0; i < schedules[r].steps.size(); ++i) {
      const Step& s = schedules[r].steps[i];
      const bool remote =
          s.kind == StepKind::Send || s.kind == StepKind::Recv || s.kind == StepKind::RecvReduce;
      std::string what;
      if (!remote && s.peer != -1) what = "a local step names a peer";
      const size_t count = s.kind == StepKind::Send ? s.src.count : s.dst.count;
      if (remote && limit > 0 && count > limit) what = "a message is longer than chunkElems";
      if (what.empty()) continue;
      std::ostringstream os;
      os << "rank " << r << " step " << i << " (" << stepText(s) << "): " << what;
      return os.str();
    }
  }
  return "";
}

std::string check(Algo algo, const std::vector<CollArgs>& args) {
  std::vector<Schedule> schedules;
  schedules.reserve(args.size());
  for (const CollArgs& a : args) schedules.push_back(build(algo, a));
  std::string err = checkShape(args, schedules);
  if (!err.empty()) return err;
  return verify(args, simulate(args, schedules));
}

std::vector<CollArgs> forAllRanks(const CollArgs& base) {
  std::vector<CollArgs> v(static_cast<size_t>(base.nranks), base);
  for (int r = 0; r < base.nranks; ++r) v[r].rank = r;
  return v;
}

std::string caseName(Algo algo, const CollArgs& a) {
  std::ostringstream os;
  os << algoName(algo) << " " << collName(a.kind) << " nranks " << a.nranks << " count " << a.count
     << " chunk " << a.chunkElems << " root " << a.root << (a.inPlace ? " in-place" : "");
  return os.str();
}

std::vector<size_t> sweepCounts(int nranks) {
  const size_t n = static_cast<size_t>(nranks);
  std::vector<size_t> c = {0, 1, n - 1, n, 37, 300};
  std::sort(c.begin(), c.end());
  c.erase(std::unique(c.begin(), c.end()), c.end());
  return c;
}

std::vector<size_t> sweepChunks() { return {0, 1, 3, size_t{1} << 20}; }

std::vector<std::string> sweep(Algo algo, CollKind kind, int maxRanks, size_t maxFailures) {
  std::vector<std::string> failures;
  const bool rooted = kind == CollKind::Broadcast || kind == CollKind::Reduce;
  const bool aliasable = rooted || kind == CollKind::AllReduce || kind == CollKind::AllGather;
  for (int n = 1; n <= maxRanks; ++n) {
    for (int root = 0; root < (rooted ? n : 1); ++root) {
      for (size_t count : sweepCounts(n)) {
        for (size_t chunk : sweepChunks()) {
          for (int inPlace = 0; inPlace < (aliasable ? 2 : 1); ++inPlace) {
            CollArgs a;
            a.kind = kind;
            a.nranks = n;
            a.root = root;
            a.count = count;
            a.chunkElems = chunk;
            a.inPlace = inPlace != 0;
            const std::string err = check(algo, forAllRanks(a));
            if (err.empty()) continue;
            failures.push_back(caseName(algo, a) + ": " + err);
            if (failures.size() >= maxFailures) return failures;
          }
        }
      }
    }
  }
  return failures;
}

}  // namespace gdr::coll::sim
