// PreMulSum ops of the native API (gdrRedOpCreatePreMulSum): each rank's
// input times its own scalar, summed, for all-reduce, reduce and
// reduce-scatter, in place and not, inside a group too, with the scalar
// taken at creation or read at each call; and the op's checks.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "support/multiproc.h"

namespace {

// Element i of rank r's input is (r + 1) * (i % 7 + 1); rank r's scalar is
// r + 2, so element i of the sum is (i % 7 + 1) * sum_r (r + 1)(r + 2).
double expected(size_t i, int n) {
  double k = 0;
  for (int r = 0; r < n; ++r) k += (r + 1.0) * (r + 2.0);
  return k * static_cast<double>(i % 7 + 1);
}

template <typename T>
T input(int rank, size_t i) {
  return static_cast<T>((rank + 1) * static_cast<int>(i % 7 + 1));
}

template <typename T>
int checkType(int rank, int n, gdrComm_t comm, gdrDataType_t type) {
  const T mine = static_cast<T>(rank + 2);
  T later = 0;  // gdrScalarDevice in host memory: read by each call
  gdrRedOp_t imm, dev;
  CHILD_CHECK(gdrRedOpCreatePreMulSum(&imm, const_cast<T*>(&mine), type, gdrScalarHostImmediate,
                                      comm) == gdrSuccess,
              "create (immediate): %s", gdrGetLastError(comm));
  CHILD_CHECK(gdrRedOpCreatePreMulSum(&dev, &later, type, gdrScalarDevice, comm) == gdrSuccess,
              "create (by pointer): %s", gdrGetLastError(comm));
  CHILD_CHECK(static_cast<int>(imm) >= gdrNumOps && imm != dev, "op values %d %d",
              static_cast<int>(imm), static_cast<int>(dev));
  later = mine;
  const size_t count = 1001;
  for (gdrRedOp_t op : {imm, dev}) {
    for (bool inPlace : {false, true}) {
      std::vector<T> in(count), out(count, T(-1));
      for (size_t i = 0; i < count; ++i) in[i] = input<T>(rank, i);
      if (inPlace) out = in;
      CHILD_CHECK(gdrAllReduce(inPlace ? GDR_IN_PLACE : in.data(), out.data(), count, type, op,
                               comm, nullptr) == gdrSuccess,
                  "all-reduce: %s", gdrGetLastError(comm));
      for (size_t i = 0; i < count; ++i)
        if (static_cast<double>(out[i]) != expected(i, n)) {
          CHILD_CHECK(false, "all-reduce%s [%zu] = %g, want %g", inPlace ? " in place" : "", i,
                      static_cast<double>(out[i]), expected(i, n));
          break;
        }

      const int root = 1 % n;
      std::vector<T> red(count, T(-1));
      if (inPlace && rank == root) red = in;
      CHILD_CHECK(gdrReduce(inPlace && rank == root ? GDR_IN_PLACE : in.data(), red.data(), count,
                            type, op, root, comm, nullptr) == gdrSuccess,
                  "reduce: %s", gdrGetLastError(comm));
      if (rank == root)
        for (size_t i = 0; i < count; ++i)
          if (static_cast<double>(red[i]) != expected(i, n)) {
            CHILD_CHECK(false, "reduce [%zu] = %g, want %g", i, static_cast<double>(red[i]),
                        expected(i, n));
            break;
          }

      // Reduce-scatter: rank r gets elements r * per ... of the sum.
      const size_t per = 37;
      std::vector<T> all(per * n), mineOut(per, T(-1));
      for (size_t i = 0; i < all.size(); ++i) all[i] = input<T>(rank, i);
      CHILD_CHECK(gdrReduceScatter(inPlace ? GDR_IN_PLACE : all.data(),
                                   inPlace ? all.data() : mineOut.data(), per, type, op, comm,
                                   nullptr) == gdrSuccess,
                  "reduce-scatter: %s", gdrGetLastError(comm));
      const T* got = inPlace ? all.data() : mineOut.data();
      for (size_t i = 0; i < per; ++i)
        if (static_cast<double>(got[i]) != expected(rank * per + i, n)) {
          CHILD_CHECK(false, "reduce-scatter [%zu] = %g, want %g", i, static_cast<double>(got[i]),
                      expected(rank * per + i, n));
          break;
        }
    }
  }

  // Inside a group: the calls run at gdrGroupEnd, each on its own scaled
  // copy, and a pointer scalar is read then (not when the call is queued).
  std::vector<T> in(count), a(count, T(-1)), b(count, T(-1));
  for (size_t i = 0; i < count; ++i) in[i] = input<T>(rank, i);
  later = static_cast<T>(0);
  CHILD_CHECK(gdrGroupStart() == gdrSuccess, "group start");
  CHILD_CHECK(gdrAllReduce(in.data(), a.data(), count, type, imm, comm, nullptr) == gdrSuccess,
              "queued 1: %s", gdrGetLastError(comm));
  CHILD_CHECK(gdrAllReduce(in.data(), b.data(), count, type, dev, comm, nullptr) == gdrSuccess,
              "queued 2: %s", gdrGetLastError(comm));
  later = mine;
  CHILD_CHECK(gdrGroupEnd() == gdrSuccess, "group end: %s", gdrGetLastError(comm));
  for (size_t i = 0; i < count; ++i)
    if (static_cast<double>(a[i]) != expected(i, n) ||
        static_cast<double>(b[i]) != expected(i, n)) {
      CHILD_CHECK(false, "grouped [%zu] = %g, %g, want %g", i, static_cast<double>(a[i]),
                  static_cast<double>(b[i]), expected(i, n));
      break;
    }

  CHILD_CHECK(gdrRedOpDestroy(imm, comm) == gdrSuccess, "destroy: %s", gdrGetLastError(comm));
  CHILD_CHECK(gdrRedOpDestroy(dev, comm) == gdrSuccess, "destroy: %s", gdrGetLastError(comm));
  return 0;
}

int everyCheck(int rank, int n, gdrComm_t comm) {
  checkType<float>(rank, n, comm, gdrFloat32);
  checkType<int32_t>(rank, n, comm, gdrInt32);
  checkType<double>(rank, n, comm, gdrFloat64);

  // The op's checks: another type, a destroyed op, a built-in op destroyed,
  // a bad residence, no output pointer.
  float s = 2;
  gdrRedOp_t op;
  CHILD_CHECK(
      gdrRedOpCreatePreMulSum(&op, &s, gdrFloat32, gdrScalarHostImmediate, comm) == gdrSuccess,
      "create");
  std::vector<int32_t> i32(4, 1);
  CHILD_CHECK(gdrAllReduce(i32.data(), i32.data() + 2, 2, gdrInt32, op, comm, nullptr) ==
                  gdrInvalidArgument,
              "an op made for float32 used on int32");
  CHILD_CHECK(gdrRedOpDestroy(op, comm) == gdrSuccess, "destroy");
  CHILD_CHECK(gdrRedOpDestroy(op, comm) == gdrInvalidArgument, "destroyed twice");
  std::vector<float> f(4, 1);
  CHILD_CHECK(
      gdrAllReduce(f.data(), f.data() + 2, 2, gdrFloat32, op, comm, nullptr) == gdrInvalidArgument,
      "a destroyed op used");
  CHILD_CHECK(gdrRedOpDestroy(gdrSum, comm) == gdrInvalidArgument, "a built-in op destroyed");
  gdrScalarResidence_t bad;
  const int badValue = 7;
  std::memcpy(&bad, &badValue, sizeof(bad));
  CHILD_CHECK(gdrRedOpCreatePreMulSum(&op, &s, gdrFloat32, bad, comm) == gdrInvalidArgument,
              "bad residence");
  CHILD_CHECK(gdrRedOpCreatePreMulSum(nullptr, &s, gdrFloat32, gdrScalarHostImmediate, comm) ==
                  gdrInvalidArgument,
              "null op pointer");
  // The communicator is still usable after the refusals.
  CHILD_CHECK(gdrBarrier(comm, nullptr) == gdrSuccess, "barrier after the refusals: %s",
              gdrGetLastError(comm));
  return gdrtest::childFailures();
}

TEST(PreMulSum, SocketNp3) {
  auto exits = gdrtest::runRanks(3, everyCheck,
                                 {{"GDR_TRANSPORT", "socket"}, {"GDR_TIMEOUT_MS", "60000"}}, 240);
  std::string why;
  EXPECT_TRUE(gdrtest::allOk(exits, &why)) << why;
}

TEST(PreMulSum, ShmNp2) {
  auto exits = gdrtest::runRanks(2, everyCheck,
                                 {{"GDR_TRANSPORT", "shm"}, {"GDR_TIMEOUT_MS", "60000"}}, 240);
  std::string why;
  EXPECT_TRUE(gdrtest::allOk(exits, &why)) << why;
}

TEST(PreMulSum, OneRank) {
  auto exits = gdrtest::runRanks(1, everyCheck, {{"GDR_TIMEOUT_MS", "60000"}}, 240);
  std::string why;
  EXPECT_TRUE(gdrtest::allOk(exits, &why)) << why;
}

}  // namespace
