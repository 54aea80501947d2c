// Dissemination barrier: in round j = 0..ceil(log2 n)-1 rank r sends an
// empty message to r + 2^j and waits for one from r - 2^j (mod n). After
// round j a rank has heard, directly or through others, from the 2^(j+1)
// ranks before it, so after the last round it knows every rank has arrived.
// Works for any n; ceil(log2 n)·alpha. The messages carry zero elements but
// are real messages.
#include "collectives/algorithms.h"
#include "collectives/schedule_common.h"

namespace gdr::coll::detail {

Schedule disseminationBarrier(const CollArgs& a) {
  Schedule s;
  const int n = a.nranks, r = a.rank;
  int round = 0;
  for (int dist = 1; dist < n; dist *= 2, ++round) {
    addSend(s, (r + dist) % n, in(Span{0, 0}), round);
    addRecv(s, (r - dist + n) % n, out(Span{0, 0}), round);
  }
  return s;
}

}  // namespace gdr::coll::detail
