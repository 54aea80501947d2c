// Status reports of a stuck job (comm/status_report.h) and the gdr-status
// tool that merges them: a rank stalled by GDR_FAULT at np 3; SIGUSR1, the
// socket and the timeout each produce reports; gdr-status names the rank
// everyone ends up waiting for; a rank stuck in a receive from a peer that
// never sends. And the tool's answer on hand-made reports; device
// operations on the board (comm/device_ops.h) and in the tool's answer.
#include "comm/status_report.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/exit_checks.h"
#include "support/multiproc.h"

namespace {

std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<std::string> filesEnding(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > suffix.size() &&
          n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
        out.push_back(n);
    }
    closedir(d);
  }
  return out;
}

std::string tempDir() {
  char t[] = "/tmp/gdr-status-test-XXXXXX";
  return mkdtemp(t) ? t : "";
}

const std::string kTool = std::string(GDR_BIN_DIR) + "/gdr-status";

// Rank 1 stalls (2.5 x GDR_TIMEOUT_MS) at a middle step of its third
// all-reduce; ranks 0 and 2 wait for it. While they wait, SIGUSR1 to every
// rank writes each one's report, and gdr-status (through the sockets) says
// that the chain of waits ends at rank 1, which is in all-reduce #3 and not
// waiting; then the others time out and their reports say so.
TEST(StatusReport, StalledRankIsNamedBySignalSocketAndTimeout) {
  const std::string dir = tempDir();
  ASSERT_FALSE(dir.empty());
  std::string toolNow, signalled;
  std::thread probe([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    for (const auto& s : filesEnding(dir, ".sock")) {
      int pid = std::atoi(s.c_str() + std::strlen("gdr-status-"));
      if (pid > 0) kill(pid, SIGUSR1);
      signalled += std::to_string(pid) + " ";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    toolNow = run(kTool + " --dir " + dir + " 2>&1");
  });
  auto exits = gdrtest::runRanks(
      3,
      [](int, int, gdrComm_t comm) {
        std::vector<float> buf(3000, 1.0f);
        for (int i = 0; i < 3; ++i)
          if (gdrAllReduce(buf.data(), buf.data(), buf.size(), gdrFloat32, gdrSum, comm, nullptr) !=
              gdrSuccess)
            break;
        usleep(100 * 1000);
        return 0;
      },
      {{"GDR_TIMEOUT_MS", "3000"}, {"GDR_FAULT", "1:3:middle:stall"}, {"GDR_STATUS_DIR", dir}}, 60);
  probe.join();
  gdrtest::expectAllOk(exits);

  // SIGUSR1: every rank wrote a report while it was in all-reduce #3.
  EXPECT_EQ(std::count(signalled.begin(), signalled.end(), ' '), 3) << "sockets: " << signalled;
  // The tool, through the sockets, while the job was stuck.
  EXPECT_NE(toolNow.find("3 of 3 ranks reported"), std::string::npos) << toolNow;
  EXPECT_NE(toolNow.find("likely culprit: rank 1, which is at step"), std::string::npos) << toolNow;
  EXPECT_NE(toolNow.find("of allreduce #3, not waiting for a peer"), std::string::npos) << toolNow;
  EXPECT_NE(toolNow.find("waits at step"), std::string::npos) << toolNow;
  EXPECT_NE(toolNow.find("for rank 1; rank 1 is at step"), std::string::npos) << toolNow;

  // The files: the first of ranks 0 and 2 to time out rewrote its report
  // then, in the call (the other may fail from its abort notice first).
  auto txt = filesEnding(dir, ".txt");
  auto json = filesEnding(dir, ".json");
  EXPECT_EQ(txt.size(), 3u);
  EXPECT_EQ(json.size(), 3u);
  int timeouts = 0, inflight = 0;
  for (const auto& f : txt) {
    std::string t = slurp(dir + "/" + f);
    timeouts += t.find("reason=timeout") != std::string::npos;
    inflight += t.find("inflight seq=3 coll=allreduce dtype=float32 op=sum count=3000") !=
                std::string::npos;
    EXPECT_NE(t.find("done seq=2 coll=allreduce"), std::string::npos) << t;
  }
  EXPECT_GE(timeouts, 1);
  EXPECT_EQ(inflight, 3);
  for (const auto& f : json) {
    std::string j = slurp(dir + "/" + f);
    EXPECT_NE(j.find("\"in_flight\":{\"seq\":3,\"coll\":\"allreduce\""), std::string::npos) << j;
  }
  // The tool from the files alone, after the job: still rank 1.
  std::string fromFiles = run(kTool + " --files-only --dir " + dir + " 2>&1");
  EXPECT_NE(fromFiles.find("likely culprit: rank 1"), std::string::npos) << fromFiles;
  // The sockets went with the communicators.
  EXPECT_TRUE(filesEnding(dir, ".sock").empty());
  run("rm -rf " + dir);
}

// The program's thread changes the environment while the library's writer
// thread answers SIGUSR1s: the writer must not read it (glibc's setenv may
// free the array a concurrent getenv walks; a CI soak run crashed there).
// The reports stay in the directory the first communicator saw, and the
// process survives a storm of signals beside setenvs that grow environ.
TEST(StatusReport, WriterThreadNeverReadsTheEnvironment) {
  const std::string dir = tempDir(), later = tempDir();
  ASSERT_FALSE(dir.empty());
  ASSERT_FALSE(later.empty());
  auto exits = gdrtest::runRanks(
      2,
      [&](int rank, int, gdrComm_t comm) {
        setenv("GDR_STATUS_DIR", later.c_str(), 1);
        for (int i = 0; i < 200; ++i) {
          if (i % 10 == 0) raise(SIGUSR1);
          for (int j = 0; j < 8; ++j)
            setenv(("GDR_SOAK_ENV_" + std::to_string(rank) + "_" + std::to_string(i * 8 + j)).c_str(),
                   "grown", 1);
        }
        std::vector<float> buf(16, 1.0f);
        CHILD_CHECK(gdrAllReduce(buf.data(), buf.data(), buf.size(), gdrFloat32, gdrSum, comm,
                                 nullptr) == gdrSuccess,
                    "all-reduce after the storm: %s", gdrGetLastError(comm));
        for (int i = 0; i < 200 && filesEnding(dir, ".txt").size() < 2; ++i)
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        return gdrtest::childFailures() ? 1 : 0;
      },
      {{"GDR_STATUS_DIR", dir}}, 60);
  gdrtest::expectAllOk(exits);
  EXPECT_EQ(filesEnding(dir, ".txt").size(), 2u);
  EXPECT_TRUE(filesEnding(later, ".txt").empty()) << "a report followed a later setenv";
  run("rm -rf " + dir + " " + later);
}

// Hand-made reports: the answer names who waits where for whom.
TEST(StatusReport, ToolMergesReportsIntoOneAnswer) {
  const std::string dir = tempDir();
  ASSERT_FALSE(dir.empty());
  auto write = [&](int pid, const std::string& body) {
    std::ofstream(dir + "/gdr-status-h-" + std::to_string(pid) + ".txt")
        << "gdr-status 1 host=h pid=" << pid << " reason=SIGUSR1 time_ms=1\n"
        << body << "end\n";
  };
  const std::string done16 =
      "done seq=16 coll=allreduce dtype=float32 op=sum count=8 ms=0.1 result=ok\n";
  write(10,
        "comm id=ab rank=0 size=4\ninflight seq=17 coll=allreduce dtype=float32 op=sum count=8 "
        "step=5 "
        "steps=8 kind=recv peer=2 elapsed_ms=900 waiting_ms=800\n" +
            done16);
  write(12,
        "comm id=ab rank=2 size=4\ninflight seq=17 coll=allreduce dtype=float32 op=sum count=8 "
        "step=3 "
        "steps=8 kind=recv peer=1 elapsed_ms=1000 waiting_ms=990\n" +
            done16);
  write(11, "comm id=ab rank=1 size=4\nidle\n" + done16);
  std::string out = run(kTool + " --files-only --dir " + dir + " 2>&1");
  EXPECT_NE(out.find("communicator ab: 3 of 4 ranks reported"), std::string::npos) << out;
  EXPECT_NE(
      out.find(
          "rank 2 waits at step 3 of 8 (recv) of allreduce #17 for rank 1; rank 1 is idle after "
          "allreduce #16"),
      std::string::npos)
      << out;
  EXPECT_NE(
      out.find(
          "rank 0 waits at step 5 of 8 (recv) of allreduce #17 for rank 2; rank 2 is at step 3"),
      std::string::npos)
      << out;
  EXPECT_NE(out.find("rank 3 has no report"), std::string::npos) << out;
  EXPECT_NE(out.find("chain of waits: rank 2 -> rank 1\nlikely culprit: rank 1, which is idle "
                     "after allreduce #16"),
            std::string::npos)
      << out;
  run("rm -rf " + dir);
}

// Rank 0 exchanges with rank 1 in a group, sends to it, then receives from
// it; rank 1 never sends. While rank 0 waits, SIGUSR1 and the tool show the
// receive and its peer; then rank 0 times out and its report says so too.
TEST(StatusReport, ReceiveFromAPeerThatNeverSendsIsNamed) {
  const std::string dir = tempDir();
  ASSERT_FALSE(dir.empty());
  std::string toolNow;
  std::thread probe([&] {
    // Once both ranks are up (their sockets exist), rank 0 soon waits.
    for (int i = 0; i < 100 && filesEnding(dir, ".sock").size() < 2; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    for (const auto& s : filesEnding(dir, ".sock")) {
      int pid = std::atoi(s.c_str() + std::strlen("gdr-status-"));
      if (pid > 0) kill(pid, SIGUSR1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    toolNow = run(kTool + " --dir " + dir + " 2>&1");
  });
  auto exits = gdrtest::runRanks(
      2,
      [](int rank, int, gdrComm_t comm) {
        std::vector<float> out(4, 1.0f), in(4, 0.0f);
        const int peer = 1 - rank;
        gdrGroupStart();
        gdrSend(out.data(), out.size(), gdrFloat32, peer, comm, nullptr);
        gdrRecv(in.data(), in.size(), gdrFloat32, peer, comm, nullptr);
        CHILD_CHECK(gdrGroupEnd() == gdrSuccess, "group exchange");
        if (rank == 0) {
          CHILD_CHECK(gdrSend(out.data(), 3, gdrFloat32, 1, comm, nullptr) == gdrSuccess, "send");
          gdrResult_t r = gdrRecv(in.data(), 5, gdrFloat32, 1, comm, nullptr);
          CHILD_CHECK(r == gdrTimeout, "the receive from a silent peer times out (got %d)", (int)r);
        } else {
          CHILD_CHECK(gdrRecv(in.data(), 3, gdrFloat32, 0, comm, nullptr) == gdrSuccess, "recv");
          // Never sending, alive until rank 0's timeout has written its report
          // (a rank that exits would be a death, not a timeout).
          const std::string dir = std::getenv("GDR_STATUS_DIR");
          bool timedOut = false;
          for (int i = 0; i < 1000 && !timedOut; ++i) {
            for (const auto& f : filesEnding(dir, ".txt"))
              timedOut |= slurp(dir + "/" + f).find("reason=timeout") != std::string::npos;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
          }
          CHILD_CHECK(timedOut, "rank 0's timeout report");
        }
        return gdrtest::childFailures() ? 1 : 0;
      },
      {{"GDR_TIMEOUT_MS", "1800"}, {"GDR_STATUS_DIR", dir}}, 60);
  probe.join();
  gdrtest::expectAllOk(exits);

  EXPECT_NE(toolNow.find("2 of 2 ranks reported"), std::string::npos) << toolNow;
  EXPECT_NE(toolNow.find("rank 0 waits in recv #3 for rank 1; rank 1 is idle after recv #2"),
            std::string::npos)
      << toolNow;
  EXPECT_NE(toolNow.find("likely culprit: rank 1, which is idle after recv #2"), std::string::npos)
      << toolNow;

  auto txt = filesEnding(dir, ".txt");
  auto json = filesEnding(dir, ".json");
  ASSERT_EQ(txt.size(), 2u);
  ASSERT_EQ(json.size(), 2u);
  int stuck = 0;
  for (const auto& f : txt) {
    std::string t = slurp(dir + "/" + f);
    EXPECT_NE(t.find("done seq=1 coll=p2p-batch dtype=float32 op=- count=8 ms="), std::string::npos)
        << t;
    if (t.find("rank=0 ") == std::string::npos) continue;
    ++stuck;
    EXPECT_NE(t.find("reason=timeout"), std::string::npos) << t;
    EXPECT_NE(t.find("inflight seq=3 coll=recv dtype=float32 op=- count=5 step=1 steps=1 kind=recv "
                     "peer=1 "),
              std::string::npos)
        << t;
    EXPECT_NE(t.find("done seq=2 coll=send dtype=float32 op=- count=3 peer=1 ms="),
              std::string::npos)
        << t;
  }
  EXPECT_EQ(stuck, 1);
  int stuckJson = 0;
  for (const auto& f : json) {
    std::string j = slurp(dir + "/" + f);
    if (j.find("\"rank\":0,") == std::string::npos) continue;
    ++stuckJson;
    EXPECT_NE(
        j.find("\"in_flight\":{\"seq\":3,\"coll\":\"recv\",\"dtype\":\"float32\",\"op\":\"-\","
               "\"count\":5,\"step\":1,\"steps\":1,\"kind\":\"recv\",\"peer\":1,"),
        std::string::npos)
        << j;
  }
  EXPECT_EQ(stuckJson, 1);
  std::string fromFiles = run(kTool + " --files-only --dir " + dir + " 2>&1");
  EXPECT_NE(fromFiles.find("rank 0 waits in recv #3 for rank 1"), std::string::npos) << fromFiles;
  run("rm -rf " + dir);
}

// A group batch in flight shows as one operation whose step is the wait in
// progress (its peer and kind); when it ends it is history.
TEST(StatusReport, BoardShowsAP2PBatchAtItsWait) {
  gdr::status::StatusBoard b;
  b.identify(0, 4, "cd");
  if (!gdr::status::enabled()) GTEST_SKIP() << "GDR_STATUS=0";
  gdr::transport::OpSig sig;
  sig.kind = gdr::transport::kP2PKind;
  sig.dtype = gdrInt32;
  sig.count = 12;
  b.begin(sig, 3, gdr::status::P2P::Batch, -1);
  b.step(1, 2, 1 /* recv */);
  const std::string t = b.text(gdr::status::nowNs());
  EXPECT_NE(t.find("inflight seq=1 coll=p2p-batch dtype=int32 op=- count=12 step=2 steps=3 "
                   "kind=recv peer=2 "),
            std::string::npos)
      << t;
  b.end(true);
  b.begin(sig, 1, gdr::status::P2P::Send, 3);
  b.end(false);
  const std::string after = b.text(gdr::status::nowNs());
  EXPECT_NE(after.find("idle\ndone seq=2 coll=send dtype=int32 op=- count=12 peer=3 ms="),
            std::string::npos)
      << after;
  EXPECT_NE(after.find("result=failed\ndone seq=1 coll=p2p-batch"), std::string::npos) << after;
  EXPECT_NE(b.json(gdr::status::nowNs())
                .find("{\"seq\":2,\"coll\":\"send\",\"dtype\":\"int32\","
                      "\"op\":\"-\",\"count\":12,\"peer\":3,"),
            std::string::npos);
}

// Device operations: in flight from launch until the path's completion
// count passes them; the oldest shows the peer its kernel waits for (or the
// staged path's wait for its stream), completed ones show newest first.
TEST(StatusReport, BoardShowsDeviceOperationsUntilTheirCompletionIsSeen) {
  gdr::status::StatusBoard b;
  b.identify(0, 2, "dv");
  if (!gdr::status::enabled()) GTEST_SKIP() << "GDR_STATUS=0";
  gdr::DeviceWords w{};
  w.done = 7;  // counted before the attach: not this board's
  gdr::status::DeviceOps& d = b.device();
  EXPECT_EQ(b.text(gdr::status::nowNs()).find("device-"), std::string::npos);
  d.attach(&w, "cuda_ipc");
  ASSERT_TRUE(d.on());
  d.launched(gdr::status::deviceSig(0 /* allreduce */, gdrFloat32, gdrSum, 999, 0),
             gdr::status::P2P::None, -1);
  d.launched(gdr::status::deviceSig(gdr::transport::kP2PKind, gdrUint8, 0, 64, 0),
             gdr::status::P2P::Send, 1);
  w.waiting[1] = 3;  // three blocks of the first kernel wait for rank 1
  std::string t = b.text(gdr::status::nowNs());
  EXPECT_NE(t.find("idle\ndevice-inflight seq=1 coll=allreduce dtype=float32 op=sum count=999 "
                   "path=cuda_ipc peer=1 waits=1 elapsed_ms="),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("device-inflight seq=2 coll=send dtype=uint8 op=- count=64 path=cuda_ipc peer=1 "
                   "waits=- elapsed_ms="),
            std::string::npos)
      << t;
  EXPECT_EQ(t.find("device-done"), std::string::npos) << t;
  w.waiting[1] = 0;
  w.done = 8;
  t = b.text(gdr::status::nowNs());
  EXPECT_NE(t.find("device-inflight seq=2 coll=send"), std::string::npos) << t;
  EXPECT_NE(t.find("device-done seq=1 coll=allreduce"), std::string::npos) << t;
  w.stage = 3;  // the staged path's thread waits for segment 2's copy
  t = b.text(gdr::status::nowNs());
  EXPECT_NE(t.find("waits=stream:2"), std::string::npos) << t;
  w.stage = 0;
  w.done = 9;
  t = b.text(gdr::status::nowNs());
  EXPECT_EQ(t.find("device-inflight"), std::string::npos) << t;
  EXPECT_NE(t.find("device-done seq=2 coll=send dtype=uint8 op=- count=64 path=cuda_ipc peer=1\n"
                   "device-done seq=1 coll=allreduce"),
            std::string::npos)
      << t;
  const std::string j = b.json(gdr::status::nowNs());
  EXPECT_NE(j.find(",\"device\":{\"path\":\"cuda_ipc\",\"launched\":2,\"completed\":2,"
                   "\"in_flight\":[],\"done\":[{\"seq\":2,"),
            std::string::npos)
      << j;
  d.detach();
  EXPECT_EQ(b.text(gdr::status::nowNs()).find("device-"), std::string::npos);
}

// The tool on hand-made reports: rank 0's host side is idle, its fused
// kernel waits for rank 1, which is idle after the previous device
// all-reduce: the culprit is rank 1. A staged operation waiting for its
// stream is named as such.
TEST(StatusReport, ToolNamesTheRankADeviceKernelWaitsFor) {
  const std::string dir = tempDir();
  ASSERT_FALSE(dir.empty());
  auto write = [&](int pid, const std::string& body) {
    std::ofstream(dir + "/gdr-status-h-" + std::to_string(pid) + ".txt")
        << "gdr-status 1 host=h pid=" << pid << " reason=request time_ms=1\n"
        << body << "end\n";
  };
  write(20,
        "comm id=k rank=0 size=2\nidle\ndevice-inflight seq=2 coll=allreduce dtype=float32 op=sum "
        "count=8 path=cuda_ipc peer=1 waits=1 elapsed_ms=700 waiting_ms=700\n"
        "device-done seq=1 coll=allreduce dtype=float32 op=sum count=8 path=cuda_ipc\n");
  write(21,
        "comm id=k rank=1 size=2\nidle\ndevice-done seq=1 coll=allreduce dtype=float32 op=sum "
        "count=8 path=cuda_ipc\n");
  write(22,
        "comm id=s rank=0 size=2\nidle\ndevice-inflight seq=4 coll=bcast dtype=int32 op=- count=8 "
        "path=staged peer=-1 waits=stream:0 elapsed_ms=50 waiting_ms=-1.0\n");
  std::string out = run(kTool + " --files-only --dir " + dir + " 2>&1");
  EXPECT_NE(out.find("rank 0 waits in device allreduce #2 (cuda_ipc) for rank 1; rank 1 is idle "
                     "after device allreduce #1"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("likely culprit: rank 1"), std::string::npos) << out;
  EXPECT_NE(out.find("rank 0 is in device bcast #4 (staged: its progress thread waits for the "
                     "caller's stream to copy segment 0 to the host), not waiting for a peer"),
            std::string::npos)
      << out;
  run("rm -rf " + dir);
}

}  // namespace
