// The verbs endpoint's liveness signal (transport/ib/side_liveness.h): a
// closed side connection is a death only while operations with the peer
// stay pending past the grace period.
#if GDR_HAVE_IB
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include "transport/ib/side_liveness.h"

namespace gdr::transport::ib {
namespace {

using Clock = SideLiveness::Clock;

struct Pair {
  int fd[2] = {-1, -1};
  Pair() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0); }
  ~Pair() {
    for (int f : fd)
      if (f >= 0) close(f);
  }
  void closePeer() {
    close(fd[1]);
    fd[1] = -1;
  }
};

TEST(IbSideLiveness, OpenConnectionIsAlive) {
  Pair p;
  SideLiveness l;
  const auto t = Clock::now();
  EXPECT_FALSE(socketClosedByPeer(p.fd[0]));
  EXPECT_FALSE(l.gone(p.fd[0], true, t));
  EXPECT_FALSE(l.gone(p.fd[0], true, t + 10 * SideLiveness::kGrace));
}

TEST(IbSideLiveness, ClosedWithWorkPendingIsGoneAfterTheGrace) {
  Pair p;
  p.closePeer();
  EXPECT_TRUE(socketClosedByPeer(p.fd[0]));
  SideLiveness l;
  const auto t = Clock::now();
  EXPECT_FALSE(l.gone(p.fd[0], true, t));  // completions may still be in flight
  EXPECT_FALSE(l.gone(p.fd[0], true, t + SideLiveness::kGrace / 2));
  EXPECT_TRUE(l.gone(p.fd[0], true, t + SideLiveness::kGrace));
}

TEST(IbSideLiveness, ClosedWithNothingOwedIsACleanLeave) {
  Pair p;
  p.closePeer();
  SideLiveness l;
  const auto t = Clock::now();
  EXPECT_FALSE(l.gone(p.fd[0], false, t));
  EXPECT_FALSE(l.gone(p.fd[0], false, t + 10 * SideLiveness::kGrace));
  // Work posted later to the peer that left: the grace starts then.
  const auto later = t + 20 * SideLiveness::kGrace;
  EXPECT_FALSE(l.gone(p.fd[0], true, later));
  EXPECT_TRUE(l.gone(p.fd[0], true, later + SideLiveness::kGrace));
}

TEST(IbSideLiveness, WorkThatCompletesResetsTheGrace) {
  Pair p;
  p.closePeer();
  SideLiveness l;
  const auto t = Clock::now();
  EXPECT_FALSE(l.gone(p.fd[0], true, t));
  EXPECT_FALSE(l.gone(p.fd[0], false, t + SideLiveness::kGrace / 2));  // it completed
  EXPECT_FALSE(l.gone(p.fd[0], true, t + SideLiveness::kGrace));
  EXPECT_TRUE(l.gone(p.fd[0], true, t + 2 * SideLiveness::kGrace));
}

}  // namespace
}  // namespace gdr::transport::ib
#endif
