// The NCCL-API test's group cases: the order of a group's calls (NCCL runs
// them concurrently; gdrcoll runs each communicator's collectives and steps
// first, in call order, then its send/recv in one batch) and the copies a
// translated call makes at its place in that order.
#include <cstring>
#include <vector>

#include "nccl_api_check.h"

namespace nccltest {

namespace {

// A group that sends, runs a collective and then receives the matching
// message completes. The message is larger than any eager threshold, so a
// send that waited for its receive before the collective ran would hang.
void testSendCollRecv(ncclComm_t comm, int rank, int n) {
  const size_t count = 100000, small = 64;
  const int next = (rank + 1) % n, prev = (rank + n - 1) % n;
  std::vector<double> out(count), in(count, -1), mine(small), total(small, -1);
  for (size_t i = 0; i < count; ++i) out[i] = input(rank, i, ncclSum);
  for (size_t i = 0; i < small; ++i) mine[i] = input(rank, i + 3, ncclSum);
  NCCLOK(ncclGroupStart());
  NCCLOK(ncclSend(out.data(), count, ncclFloat64, next, comm, nullptr));
  NCCLOK(ncclAllReduce(mine.data(), total.data(), small, ncclFloat64, ncclSum, comm, nullptr));
  NCCLOK(ncclRecv(in.data(), count, ncclFloat64, prev, comm, nullptr));
  NCCLOK(ncclGroupEnd());
  for (size_t i = 0; i < count; ++i)
    if (in[i] != input(prev, i, ncclSum)) {
      CHECK(false, "send/coll/recv: recv [%zu] = %g", i, in[i]);
      break;
    }
  for (size_t i = 0; i < small; ++i) {
    double want = 0;
    for (int r = 0; r < n; ++r) want += input(r, i + 3, ncclSum);
    if (total[i] != want) {
      CHECK(false, "send/coll/recv: allreduce [%zu] = %g, want %g", i, total[i], want);
      break;
    }
  }
}

// An out-of-place broadcast copies its source when the group runs (after
// the all-reduce before it wrote it); an in-place reduce-scatter's block
// reaches the place NCCL puts it before the all-reduce after it reads it.
void testGroupCopies(ncclComm_t comm, int rank, int n) {
  const size_t count = 1000;
  std::vector<double> a(count), b(count, -1), c(count, -1);
  for (size_t i = 0; i < count; ++i) a[i] = input(rank, i, ncclSum);
  NCCLOK(ncclGroupStart());
  NCCLOK(ncclAllReduce(a.data(), b.data(), count, ncclFloat64, ncclSum, comm, nullptr));
  NCCLOK(ncclBroadcast(b.data(), c.data(), count, ncclFloat64, n - 1, comm, nullptr));
  NCCLOK(ncclGroupEnd());
  for (size_t i = 0; i < count; ++i)
    if (c[i] != reduced(n, i, ncclSum)) {
      CHECK(false, "group broadcast [%zu] = %g", i, c[i]);
      break;
    }

  std::vector<double> rs(count * n), d(count, -1);
  for (size_t i = 0; i < rs.size(); ++i) rs[i] = input(rank, i, ncclSum);
  double* block = rs.data() + rank * count;
  NCCLOK(ncclGroupStart());
  NCCLOK(ncclReduceScatter(rs.data(), block, count, ncclFloat64, ncclSum, comm, nullptr));
  NCCLOK(ncclAllReduce(block, d.data(), count, ncclFloat64, ncclSum, comm, nullptr));
  NCCLOK(ncclGroupEnd());
  for (size_t i = 0; i < count; ++i) {
    if (block[i] != reduced(n, rank * count + i, ncclSum)) {
      CHECK(false, "group reduce-scatter [%zu] = %g", i, block[i]);
      break;
    }
    double want = 0;
    for (int q = 0; q < n; ++q) want += reduced(n, q * count + i, ncclSum);
    if (d[i] != want) {
      CHECK(false, "all-reduce of the reduce-scatter [%zu] = %g, want %g", i, d[i], want);
      break;
    }
  }
}

}  // namespace

void testGroupOrder(ncclComm_t comm, int rank, int n) {
  testSendCollRecv(comm, rank, n);
  testGroupCopies(comm, rank, n);
}

}  // namespace nccltest
