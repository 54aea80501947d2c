// gdrCommWindowRegister / gdrCommWindowDeregister on the host side: bad
// arguments are refused with a message naming the argument and leave the
// communicator usable; a window deregistered twice, or through another
// communicator, is refused; host-memory windows (symmetric or not) are
// registrations only and change no result. The device side (peers' buffers
// mapped, the window kernel) is tests/gpu/gpu_window_test.cc.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gdrcoll.h"

namespace {

gdrComm_t oneRank() {
  gdrUniqueId id;
  EXPECT_EQ(gdrGetUniqueId(&id), gdrSuccess);
  gdrComm_t c = nullptr;
  EXPECT_EQ(gdrCommInitRank(&c, 1, id, 0), gdrSuccess);
  return c;
}

bool says(gdrComm_t c, const char* text) {
  return std::strstr(gdrGetLastError(c), text) != nullptr;
}

TEST(WindowApi, BadArgumentsAreRefusedByName) {
  gdrComm_t c = oneRank();
  std::vector<float> buf(64, 1.0f);
  gdrWindow_t w = reinterpret_cast<gdrWindow_t>(&buf);  // must be cleared on failure
  EXPECT_EQ(gdrCommWindowRegister(c, buf.data(), 256, GDR_WIN_SYMMETRIC, nullptr),
            gdrInvalidArgument);
  EXPECT_TRUE(says(c, "win (the output pointer) is NULL")) << gdrGetLastError(c);
  EXPECT_EQ(gdrCommWindowRegister(c, nullptr, 256, GDR_WIN_SYMMETRIC, &w), gdrInvalidArgument);
  EXPECT_EQ(w, nullptr);
  EXPECT_TRUE(says(c, "buffer is NULL")) << gdrGetLastError(c);
  EXPECT_EQ(gdrCommWindowRegister(c, buf.data(), 0, GDR_WIN_DEFAULT, &w), gdrInvalidArgument);
  EXPECT_TRUE(says(c, "size is 0")) << gdrGetLastError(c);
  EXPECT_EQ(gdrCommWindowRegister(c, buf.data(), 256, 0x2, &w), gdrInvalidArgument);
  EXPECT_TRUE(says(c, "flags 0x2")) << gdrGetLastError(c);
  EXPECT_EQ(gdrCommWindowRegister(nullptr, buf.data(), 256, GDR_WIN_DEFAULT, &w),
            gdrInvalidArgument);
  EXPECT_EQ(gdrCommWindowDeregister(c, nullptr), gdrInvalidArgument);
  EXPECT_TRUE(says(c, "win is NULL")) << gdrGetLastError(c);
  // Still usable.
  std::vector<float> out(64, 0.0f);
  EXPECT_EQ(gdrAllReduce(buf.data(), out.data(), 64, gdrFloat32, gdrSum, c, nullptr), gdrSuccess);
  EXPECT_EQ(out[63], 1.0f);
  EXPECT_EQ(gdrCommDestroy(c), gdrSuccess);
}

TEST(WindowApi, DeregisteredTwiceOrThroughAnotherCommunicatorIsRefused) {
  gdrComm_t a = oneRank(), b = oneRank();
  std::vector<char> buf(4096);
  gdrWindow_t w = nullptr;
  ASSERT_EQ(gdrCommWindowRegister(a, buf.data(), buf.size(), GDR_WIN_SYMMETRIC, &w), gdrSuccess)
      << gdrGetLastError(a);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(gdrCommWindowDeregister(b, w), gdrInvalidArgument);
  EXPECT_TRUE(says(b, "belongs to another communicator")) << gdrGetLastError(b);
  EXPECT_EQ(gdrCommWindowDeregister(a, w), gdrSuccess) << gdrGetLastError(a);
  EXPECT_EQ(gdrCommWindowDeregister(a, w), gdrInvalidArgument);
  EXPECT_TRUE(says(a, "already deregistered")) << gdrGetLastError(a);
  EXPECT_EQ(gdrCommDestroy(a), gdrSuccess);
  EXPECT_EQ(gdrCommDestroy(b), gdrSuccess);
}

// Three ranks as threads, each registering its host buffers as symmetric
// windows (collective), an all-reduce in and out of place on them, and
// deregistration: the same results as without windows.
TEST(WindowApi, HostWindowsAreRegistrationsOnly) {
  const int n = 3;
  const size_t count = 1000;
  gdrUniqueId id;
  ASSERT_EQ(gdrGetUniqueId(&id), gdrSuccess);
  std::vector<int> failures(n, 0);
  std::vector<std::thread> t;
  for (int r = 0; r < n; ++r)
    t.emplace_back([&, r] {
      gdrComm_t c = nullptr;
      if (gdrCommInitRank(&c, n, id, r) != gdrSuccess) return void(++failures[r]);
      std::vector<int32_t> in(count), out(count, -1);
      for (size_t i = 0; i < count; ++i) in[i] = static_cast<int32_t>(i * (r + 1));
      gdrWindow_t wi = nullptr, wo = nullptr;
      failures[r] +=
          gdrCommWindowRegister(c, in.data(), count * 4, GDR_WIN_SYMMETRIC, &wi) != gdrSuccess;
      failures[r] +=
          gdrCommWindowRegister(c, out.data(), count * 4, GDR_WIN_DEFAULT, &wo) != gdrSuccess;
      failures[r] +=
          gdrAllReduce(in.data(), out.data(), count, gdrInt32, gdrSum, c, nullptr) != gdrSuccess;
      failures[r] +=
          gdrAllReduce(GDR_IN_PLACE, in.data(), count, gdrInt32, gdrMax, c, nullptr) != gdrSuccess;
      for (size_t i = 0; i < count; ++i) {
        failures[r] += out[i] != static_cast<int32_t>(i * 6);
        failures[r] += in[i] != static_cast<int32_t>(i * 3);
      }
      failures[r] += gdrCommWindowDeregister(c, wi) != gdrSuccess;
      failures[r] += gdrCommWindowDeregister(c, wo) != gdrSuccess;
      failures[r] += gdrCommDestroy(c) != gdrSuccess;
    });
  for (auto& x : t) x.join();
  for (int r = 0; r < n; ++r) EXPECT_EQ(failures[r], 0) << "rank " << r;
}

}  // namespace
