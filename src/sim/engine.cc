#include "sim/engine.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <queue>
#include <unordered_map>

#include "core/error.h"
#include "sim/maxmin.h"
#include "sim/message_policy.h"
#include "sim/step_cost.h"
#include "sim/turns.h"

namespace gdr::sim {
namespace {

using coll::StepKind;

struct Msg {
  int src = 0, dst = 0;
  size_t bytes = 0;
  double sendPost = -1, recvPost = -1;
  bool isEager = false, started = false, done = false;
  bool cpu = false;  // a rank's CPU work on its host's cores (Network::cpuPath)
  double remaining = 0, rate = 0, arrival = 0;
  Path path;
};

struct Event {
  double t;
  int type;  // 0 resume rank, 1 start flow, 2 flows may have finished, 3 frozen flow done, 4 turn
  int id;
  uint64_t version;
  bool operator>(const Event& o) const { return t > o.t; }
};

class Sim {
 public:
  Sim(const EngineInput& in, const std::vector<coll::Schedule>& s)
      : in_(in),
        c_(*in.cluster),
        scheds_(s),
        n_(static_cast<int>(s.size())),
        pc_(n_, 0),
        clock_(n_, 0.0),
        waiting_(n_, -1),
        iter_(n_, 0),
        firstFinish_(0),
        cpuShared_(in.sharing == Sharing::MaxMin && c_.oversub() > 1.0),
        flat_(c_),
        cost_(cpuShared_ ? flat_ : c_),
        cpuTask_(n_, -1),
        launchPending_(n_, 1),
        useTurns_(cpuShared_ && c_.yieldUs > 0),
        turns_(c_, n_),
        lat_(useTurns_ ? flat_ : c_),
        window_(in.timedCalls > 0 && !useTurns_),
        finish_(n_, 0.0),
        arrived_(n_, 0),
        passed_(n_, 0) {
    linkFlows_.assign(static_cast<size_t>(in.net->numLinks()), 0.0);
    flat_.coresPerHost = 0;  // the cores are shared through cpuPath, not by a factor
    // A rank waiting for its turn is not polling the header line when the
    // message lands, so an inline message saves it nothing.
    if (useTurns_) flat_.inlineUs = 0;
    for (const coll::Schedule& sc : s) runnerFree_.push_back(coll::runsWithoutRunner(sc) ? 1 : 0);
  }

  EngineResult run() {
    if (useTurns_) {
      for (const Turns::Next& nx : turns_.start()) give(nx);
    } else {
      for (int r = 0; r < n_; ++r) push({0.0, 0, r, 0});
    }
    while (!q_.empty()) {
      Event e = q_.top();
      q_.pop();
      ++events_;
      now_ = e.t;
      switch (e.type) {
        case 0:
          if (useTurns_)
            give(turns_.wake(e.id, now_));
          else
            advance(e.id);
          break;
        case 4:
          if (fresh_[e.id]) {
            mark_[e.id] = progress_[e.id];
            turnStart_[e.id] = now_;
          }
          fresh_[e.id] = 0;
          advance(e.id);
          break;
        case 1:
          startFlow(e.id);
          break;
        case 2:
          if (e.version == version_) settleMaxMin();
          break;
        case 3:
          finishFlow(e.id);
          break;
      }
    }
    EngineResult res;
    double last = 0;
    for (int r = 0; r < n_; ++r) {
      if (pc_[r] < scheds_[r].steps.size() || iter_[r] + 1 < iters())
        throw InternalError(strprintf("simulator: rank %d stalls at step %zu of %zu (deadlock)", r,
                                      pc_[r] + 1, scheds_[r].steps.size()));
      last = std::max(last, clock_[r]);
    }
    if (window_) {
      double sum = 0;
      for (int r = 0; r < n_; ++r) sum += finish_[r] - barrierT_;
      res.timeUs = sum / n_ / in_.timedCalls;
    } else {
      res.timeUs = iters() > 1 ? (last - firstFinish_) / (iters() - 1 - warmup()) : last;
    }
    res.yieldsPerCall = static_cast<double>(yields_) / n_ / iters();
    for (const Msg& m : msgs_)
      if (!m.done)
        throw InternalError(
            strprintf("simulator: a message %d -> %d is never received", m.src, m.dst));
    res.messages = msgs_.size() - cpuTasks_;
    res.events = events_;
    return res;
  }

 private:
  void push(Event e) { q_.push(e); }

  // The j-th message from src to dst, made on first mention by either side.
  int message(int src, int dst, size_t j, size_t bytes) {
    std::vector<int>& v = pairs_[static_cast<uint64_t>(src) * static_cast<uint64_t>(n_) + dst];
    while (v.size() <= j) {
      v.push_back(static_cast<int>(msgs_.size()));
      msgs_.emplace_back();
      Msg& m = msgs_.back();
      m.src = src;
      m.dst = dst;
      m.bytes = bytes;
      const bool same = c_.hostOf(src) == c_.hostOf(dst);
      m.isEager = eager(c_, in_.kind, bytes, same);
      m.path = in_.net->path(src, dst, !c_.device && same && singleCopy(c_, in_.kind, bytes),
                             sharedCopy(c_, in_.kind));
    }
    return v[j];
  }
  size_t nextIndex(std::unordered_map<uint64_t, size_t>& counts, int a, int b) {
    return counts[key(a, b)]++;
  }

  int iters() const {
    return window_ ? in_.warmCalls + in_.timedCalls : std::max(1, in_.iterations);
  }
  // Calls before the steady period is timed: the first half, since ranks
  // that run ahead (a chain's head) overlap the first calls with later ones.
  int warmup() const { return iters() > 1 ? (iters() - 1) / 2 : 0; }

  static constexpr uint64_t kNone = ~uint64_t{0};
  uint64_t key(int a, int b) const {
    return static_cast<uint64_t>(a) * static_cast<uint64_t>(n_) + b;
  }
  // What a pair's eager messages may hold unread: the transport's slots,
  // or a socket connection's buffers in units of kSocketUnit bytes.
  static constexpr size_t kSocketUnit = 4096;
  bool overSocket(int a, int b) const { return socketPair(c_, c_.hostOf(a) == c_.hostOf(b)); }
  int capacity(int a, int b) const {
    return overSocket(a, b) ? static_cast<int>(c_.socketBufferBytes / kSocketUnit) : c_.slots;
  }
  // Slots (or socket units) an eager message holds.
  int slotsFor(size_t bytes, int a, int b) const {
    const size_t sb = overSocket(a, b) ? kSocketUnit : std::max<size_t>(1, c_.slotBytes);
    return static_cast<int>(std::min<size_t>(static_cast<size_t>(capacity(a, b)),
                                             std::max<size_t>(1, (bytes + sb - 1) / sb)));
  }
  void releaseSlots(const Msg& m, double t) {
    if (!m.isEager) return;
    const uint64_t pair = key(m.src, m.dst);
    slotsUsed_[pair] -= slotsFor(m.bytes, m.src, m.dst);
    if (blockedOn_[m.src] == pair) {
      blockedOn_[m.src] = kNone;
      push({std::max(t, now_), 0, m.src, 0});
    }
  }

  void maybeStart(int id) {
    Msg& m = msgs_[id];
    if (useTurns_ && m.path.cls == LinkClass::ShmCma && !m.cpu) {
      // The receiver copies it (process_vm_readv) in its turn: tell it.
      if (!m.started && m.sendPost >= 0) push({m.sendPost, 0, m.dst, 0});
      return;
    }
    if (m.started || m.sendPost < 0 || (!m.isEager && m.recvPost < 0)) return;
    if (!m.cpu && overSocket(m.src, m.dst)) {
      // One TCP connection per pair delivers its frames in order: a message
      // is on the wire only after the one before it, not sharing with it.
      int& busy = onWire_.try_emplace(key(m.src, m.dst), -1).first->second;
      if (busy >= 0 && busy != id) {
        m.started = true;
        wireQueue_[key(m.src, m.dst)].push_back(id);
        return;
      }
      busy = id;
    }
    m.started = true;
    push({m.isEager ? m.sendPost : std::max(m.sendPost, m.recvPost), 1, id, 0});
  }

  // A socket pair's message is off the wire: the next one queued goes on.
  void nextOnWire(const Msg& m, double t) {
    if (m.cpu || !overSocket(m.src, m.dst)) return;
    const uint64_t pair = key(m.src, m.dst);
    std::deque<int>& q = wireQueue_[pair];
    if (q.empty()) {
      onWire_[pair] = -1;
      return;
    }
    const int next = q.front();
    q.pop_front();
    onWire_[pair] = next;
    const Msg& n = msgs_[next];
    push({std::max(t, n.isEager ? n.sendPost : std::max(n.sendPost, n.recvPost)), 1, next, 0});
  }

  // `us` of one core's work for rank r from t. Where the host's ranks
  // time-share its cores the work is a flow on them (processor sharing with
  // the other ranks' work and the host's shm copies): false while the rank
  // waits for it (resumed by its end, when this returns true).
  bool cpu(int r, double& t, double us) {
    if (useTurns_ && us > 0) {
      // On the rank's own core, which it holds; preempted when its turn
      // has run a quantum and another rank of the core is queued.
      double& left = workLeft_[r];
      if (left < 0) left = us;
      ++progress_[r];
      const double slice = turnStart_[r] + turns_.quantumUs() - t;
      if (left > slice && turns_.contended(r)) {
        t += std::max(0.0, slice);
        left -= std::max(0.0, slice);
        give(turns_.pass(r, t, true, false));
        return false;
      }
      t += left;
      left = -1;
      return true;
    }
    if (!cpuShared_ || us <= 0) {
      t += us;
      return true;
    }
    if (cpuTask_[r] < 0) {
      const int id = static_cast<int>(msgs_.size());
      msgs_.emplace_back();
      Msg& m = msgs_.back();
      m.src = m.dst = r;
      m.bytes = std::max<size_t>(1, static_cast<size_t>(std::llround(us * 1e3)));
      m.cpu = m.isEager = m.started = true;
      m.sendPost = m.recvPost = t;
      m.path = in_.net->cpuPath(c_.hostOf(r));
      cpuTask_[r] = id;
      ++cpuTasks_;
      push({t, 1, id, 0});
      return false;
    }
    const Msg& m = msgs_[cpuTask_[r]];
    if (!m.done) return false;
    t = std::max(t, m.arrival);
    cpuTask_[r] = -1;
    return true;
  }

  // The executor's rule before a step writes a region: it waits for the
  // rank's in-flight sends that read from it (a single-copy or rendezvous
  // send is in flight until its receiver has the data; an eager one is
  // done once in the slots). A ring reduce-scatter's partial sums alternate
  // between two scratch blocks, so from 5 ranks on a receive waits for the
  // next rank to have read the block sent the step before. True (and the
  // rank resumed by that send's end) while it must wait.
  bool sendsOver(int r, const coll::Region& dst, double t) {
    std::vector<SendRead>& v = reads_[r];
    auto over = [&](const SendRead& s) { return msgs_[s.msg].done && msgs_[s.msg].arrival <= t; };
    v.erase(std::remove_if(v.begin(), v.end(), over), v.end());
    for (const SendRead& s : v)
      if (s.buf == dst.buf && s.begin < dst.offset + dst.count && dst.offset < s.end) {
        const Msg& m = msgs_[s.msg];
        if (m.done)
          push({m.arrival, 0, r, 0});
        else
          readWait_[r] = s.msg;
        return true;
      }
    return false;
  }

  // The benchmark window's barrier after the warm-up calls: false while
  // `r` waits there (the last rank to arrive resumes the others).
  bool atBarrier(int r, double& t) {
    if (iter_[r] + 1 != in_.warmCalls || passed_[r]) return true;
    if (!arrived_[r]) {
      arrived_[r] = 1;
      barrierT_ = std::max(barrierT_, t);
      if (++arrivedCount_ == n_)
        for (int q = 0; q < n_; ++q)
          if (q != r) push({barrierT_, 0, q, 0});
    }
    if (arrivedCount_ < n_) return false;
    passed_[r] = 1;
    t = std::max(t, barrierT_);
    return true;
  }

  void advance(int r) {
    double& t = clock_[r];
    t = std::max(t, now_);
    const std::vector<coll::Step>& steps = scheds_[r].steps;
    while (true) {
      if (launchPending_[r]) {  // the call's entry, selection and set-up
        if (!cpu(r, t, in_.launchUs)) return;
        launchPending_[r] = 0;
      }
      if (pc_[r] == steps.size()) {
        // A call returns once its messages are out: an eager one once in
        // the slots, a single-copy or rendezvous one once the receiver has
        // taken the data.
        if (unsent_[r] > 0) {
          endWait_[r] = 1;
          yieldWait(r, t);
          return;
        }
        endWait_[r] = 0;
        if (window_ && !atBarrier(r, t)) return;
        if (iter_[r] == warmup()) firstFinish_ = std::max(firstFinish_, t);
        if (iter_[r] + 1 >= iters()) {
          finish_[r] = t;
          if (useTurns_) give(turns_.pass(r, t, false, false));  // its calls are done
          return;
        }
        ++iter_[r];
        ++progress_[r];
        pc_[r] = 0;
        launchPending_[r] = 1;
        continue;
      }
      const coll::Step& st = steps[pc_[r]];
      const size_t bytes =
          (st.kind == StepKind::Send ? st.src.count : st.dst.count) * in_.elemBytes;
      switch (st.kind) {
        case StepKind::Send: {
          const uint64_t pair = key(r, st.peer);
          const bool same = c_.hostOf(r) == c_.hostOf(st.peer);
          if (copied_[r]) {  // its copy into the slots is done (it held its core for it)
            copied_[r] = 0;
            break;
          }
          const int need = eager(c_, in_.kind, bytes, same) ? slotsFor(bytes, r, st.peer) : 0;
          if (need > 0 && slotsUsed_[pair] + need > capacity(r, st.peer)) {
            blockedOn_[r] = pair;  // resumed when the receiver frees slots
            yieldWait(r, t);
            return;
          }
          blockedOn_[r] = kNone;
          if (!cpu(r, t, sendUs(cost_, runnerFree_[r]))) return;
          slotsUsed_[pair] += need;
          const int id = message(r, st.peer, nextIndex(sendCount_, r, st.peer), bytes);
          msgs_[id].sendPost = t;
          if (!msgs_[id].isEager) {
            ++unsent_[r];
            reads_[r].push_back({id, st.src.buf, st.src.offset, st.src.offset + st.src.count});
          }
          maybeStart(id);
          if (useTurns_ && msgs_[id].path.cls == LinkClass::Shm) {
            holding_[r] = id;  // the sender copies it into the slots on its core
            return;
          }
          break;
        }
        case StepKind::Recv:
        case StepKind::RecvReduce: {
          if (waiting_[r] < 0 && sendsOver(r, st.dst, t)) {
            yieldWait(r, t);
            return;
          }
          if (waiting_[r] < 0) {
            const int id = message(st.peer, r, nextIndex(recvCount_, st.peer, r), bytes);
            msgs_[id].recvPost = t;
            waiting_[r] = id;
            maybeStart(id);
            spinning_[r] = cpuShared_ && !useTurns_ && c_.spinUs > 0;
          }
          if (useTurns_) {
            Msg& m = msgs_[waiting_[r]];
            if (m.path.cls == LinkClass::ShmCma && !m.started) {
              if (m.sendPost < 0 || m.sendPost > t) {
                if (m.sendPost > t) push({m.sendPost, 0, r, 0});
                yieldWait(r, t);
                return;
              }
              m.started = true;  // the single copy, on the receiver's core
              push({t, 1, waiting_[r], 0});
              holding_[r] = waiting_[r];
              return;
            }
            if (holding_[r] >= 0) return;
            if (!m.done || m.arrival > t) {
              if (m.done) push({m.arrival, 0, r, 0});
              yieldWait(r, t);
              return;
            }
          }
          if (spinning_[r]) {
            // A receiver whose message is not in yet spins on a core before
            // it yields: core time the ranks it waits for do not get.
            const Msg& in = msgs_[waiting_[r]];
            if (cpuTask_[r] >= 0 || !in.done || in.arrival > t)
              if (!cpu(r, t, c_.spinUs)) return;
            spinning_[r] = 0;
          }
          const Msg& m = msgs_[waiting_[r]];
          if (!m.done) return;  // resumed by the flow's end
          if (cpuShared_) {
            // After the arrival: the eager copy out of the slots, the reduction.
            double work = st.kind == StepKind::RecvReduce ? reduceUs(cost_, bytes) : 0.0;
            if (cpuTask_[r] < 0) t = std::max(t, m.arrival);
            if (m.isEager)
              work += sendUs(cost_, runnerFree_[r]) + copyOutUs(cost_, m.path, bytes) +
                      laneUs(c_, m.path, bytes);
            if (!cpu(r, t, work)) return;
          } else {
            t = receiveDoneUs(c_, st, bytes, t, m.arrival, m.isEager, m.recvPost, m.path, runnerFree_[r]);
          }
          waiting_[r] = -1;
          releaseSlots(m, t);
          break;
        }
        case StepKind::Copy:
        case StepKind::Reduce:
          if (workLeft_[r] < 0 && cpuTask_[r] < 0 && sendsOver(r, st.dst, t)) {
            yieldWait(r, t);
            return;
          }
          if (!cpu(r, t, localStepUs(cost_, st, bytes))) return;
          break;
      }
      ++pc_[r];
      ++progress_[r];
    }
  }

  // Rank r cannot go on: where ranks take turns it first runs to its own
  // clock (it holds the core till then), then yields its core.
  void yieldWait(int r, double& t) {
    if (!useTurns_) return;
    if (t > now_ + 1e-9) {
      push({t, 4, r, 0});
      return;
    }
    const bool dry = progress_[r] == mark_[r];
    ++yields_;
    t += turns_.yieldUs();
    give(turns_.pass(r, t, true, dry));
  }
  void give(const Turns::Next& nx) {
    if (nx.rank < 0) return;
    fresh_[nx.rank] = 1;
    push({nx.t, 4, nx.rank, 0});
  }

  void startFlow(int id) {
    Msg& m = msgs_[id];
    m.remaining = static_cast<double>(m.bytes);
    if (m.bytes == 0 || (m.path.nlinks == 0 && m.path.flowCapGBps <= 0)) {
      m.rate = 0;
      finishAt(id, now_);
      return;
    }
    if (in_.sharing == Sharing::Frozen) {
      double rate = m.path.flowCapGBps > 0 ? m.path.flowCapGBps : 1e30;
      for (int i = 0; i < m.path.nlinks; ++i) {
        const int l = m.path.links[i];
        linkFlows_[l] += m.path.weight[i];
        rate = std::min(rate, in_.net->capacity(l) / linkFlows_[l]);
      }
      m.rate = rate;
      push({now_ + m.remaining / (rate * 1e3), 3, id, 0});
      return;
    }
    settleMaxMin(id);
  }

  void finishFlow(int id) {
    Msg& m = msgs_[id];
    for (int i = 0; i < m.path.nlinks; ++i) linkFlows_[m.path.links[i]] -= m.path.weight[i];
    finishAt(id, now_);
  }

  void finishAt(int id, double t) {
    Msg& m = msgs_[id];
    m.done = true;
    m.arrival = m.cpu ? t : t + latencyUs(lat_, m.path, m.bytes);
    nextOnWire(m, t);
    if (useTurns_ && !m.cpu) {
      // The rank that held its core for the copy goes on: the sender once
      // the data is in the slots, the receiver once it has it.
      if (holding_[m.src] == id) {
        holding_[m.src] = -1;
        copied_[m.src] = 1;
        push({t, 4, m.src, 0});
      }
      if (holding_[m.dst] == id) {
        holding_[m.dst] = -1;
        push({std::max(m.arrival, now_), 4, m.dst, 0});
      }
    }
    if (!m.cpu && !m.isEager && --unsent_[m.src] == 0 && endWait_[m.src])
      push({std::max(m.arrival, now_), 0, m.src, 0});
    if (!m.cpu && readWait_[m.src] == id) {
      readWait_[m.src] = -1;
      push({std::max(m.arrival, now_), 0, m.src, 0});
    }
    if (waiting_[m.dst] == id || cpuTask_[m.dst] == id)
      push({std::max(m.arrival, now_), 0, m.dst, 0});
  }

  // Max-min: bring every active flow to now, drop the finished ones, add
  // `added`, recompute the rates and schedule the next finish.
  void settleMaxMin(int added = -1) {
    const double dt = now_ - lastSettle_;
    lastSettle_ = now_;
    std::vector<int> still;
    for (int id : active_) {
      Msg& m = msgs_[id];
      m.remaining -= m.rate * 1e3 * dt;
      if (m.remaining <= 1e-6 * static_cast<double>(m.bytes) + 1e-9)
        finishAt(id, now_);
      else
        still.push_back(id);
    }
    if (added >= 0) still.push_back(added);
    active_.swap(still);
    std::vector<FlowDemand> d;
    d.reserve(active_.size());
    for (int id : active_) d.push_back({&msgs_[id].path, msgs_[id].path.flowCapGBps});
    const std::vector<double> rates = maxMinRates(*in_.net, d);
    double next = -1;
    for (size_t i = 0; i < active_.size(); ++i) {
      Msg& m = msgs_[active_[i]];
      m.rate = rates[i];
      if (m.rate <= 0)
        throw InternalError("simulator: a flow gets no bandwidth (a link of capacity 0)");
      const double fin = now_ + m.remaining / (m.rate * 1e3);
      if (next < 0 || fin < next) next = fin;
    }
    ++version_;
    if (next >= 0) push({next, 2, 0, version_});
  }

  const EngineInput& in_;
  const Cluster& c_;
  const std::vector<coll::Schedule>& scheds_;
  int n_;
  std::vector<size_t> pc_;
  std::vector<double> clock_;
  std::vector<int> waiting_;
  std::vector<int> iter_;
  std::vector<uint64_t> blockedOn_ = std::vector<uint64_t>(static_cast<size_t>(n_), kNone);
  std::unordered_map<uint64_t, int> slotsUsed_;
  std::unordered_map<uint64_t, int> onWire_;  // socket pair: the message on the wire, or -1
  std::unordered_map<uint64_t, std::deque<int>> wireQueue_;  // socket pair: ready, next in order
  double firstFinish_;
  bool cpuShared_;  // ranks time-share their host's cores (more ranks than cores)
  std::vector<char> runnerFree_;  // per rank: its schedule runs without the runner (send costs)
  Cluster flat_;    // c_ without the cores-per-rank factor (the costs of one core)
  const Cluster& cost_;
  std::vector<int> cpuTask_;         // per rank: the CPU work it waits for, or -1
  std::vector<char> launchPending_;  // per rank: its call's launch is still to pay
  std::vector<char> spinning_ = std::vector<char>(static_cast<size_t>(n_), 0);  // spin to pay
  std::vector<int> unsent_ = std::vector<int>(static_cast<size_t>(n_), 0);      // sends not arrived
  std::vector<char> endWait_ = std::vector<char>(static_cast<size_t>(n_), 0);   // waits on unsent_
  size_t cpuTasks_ = 0;
  bool useTurns_;  // ranks take turns on their cores (sim/turns.h)
  Turns turns_;
  size_t yields_ = 0;  // every rank's, all calls
  const Cluster& lat_;  // latencies: without sched_us where ranks take turns
  bool window_;         // a benchmark's window (EngineInput::timedCalls), not the steady period
  std::vector<double> finish_;          // per rank: when its last call ended
  std::vector<char> arrived_, passed_;  // per rank: at the window's barrier, through it
  int arrivedCount_ = 0;
  double barrierT_ = 0;  // when the last rank reached the barrier
  std::vector<double> workLeft_ = std::vector<double>(static_cast<size_t>(n_), -1.0);
  std::vector<int> holding_ = std::vector<int>(static_cast<size_t>(n_), -1);  // copy it drives
  std::vector<char> copied_ = std::vector<char>(static_cast<size_t>(n_), 0);  // its send copied
  std::vector<char> fresh_ = std::vector<char>(static_cast<size_t>(n_), 0);   // a new turn
  std::vector<uint64_t> progress_ = std::vector<uint64_t>(static_cast<size_t>(n_), 0);
  std::vector<uint64_t> mark_ = std::vector<uint64_t>(static_cast<size_t>(n_), 0);
  std::vector<double> turnStart_ = std::vector<double>(static_cast<size_t>(n_), 0.0);
  struct SendRead {  // an in-flight non-eager send and the region it reads
    int msg;
    coll::BufId buf;
    size_t begin, end;
  };
  std::vector<std::vector<SendRead>> reads_ =
      std::vector<std::vector<SendRead>>(static_cast<size_t>(n_));
  std::vector<int> readWait_ =
      std::vector<int>(static_cast<size_t>(n_), -1);  // the send it waits on
  std::unordered_map<uint64_t, size_t> sendCount_, recvCount_;
  std::unordered_map<uint64_t, std::vector<int>> pairs_;
  std::vector<Msg> msgs_;
  std::vector<int> active_;
  std::vector<double> linkFlows_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> q_;
  double now_ = 0, lastSettle_ = 0;
  uint64_t version_ = 0;
  size_t events_ = 0;
};

}  // namespace

EngineResult runEngine(const EngineInput& in, const std::vector<coll::Schedule>& scheds) {
  return Sim(in, scheds).run();
}

}  // namespace gdr::sim
