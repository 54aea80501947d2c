// Window entry points of the C API: gdrCommWindowRegister /
// gdrCommWindowDeregister. A window is a registration (mem_api.cc) plus,
// on the device path, every rank's buffer mapped here
// (paths/device_windows.h).
#include <memory>
#include <mutex>
#include <unordered_set>

#include "api/guard.h"
#include "paths/device_windows.h"

struct gdrWindow {
  gdrComm_t comm;
  gdrRegHandle_t reg;
  uint64_t deviceId;  // 0: not mapped
};

namespace {

std::mutex gMu;
std::unordered_set<gdrWindow*>& windows() {
  static std::unordered_set<gdrWindow*> s;
  return s;
}

// A failed gdr* call inside another entry point: its text is the comm's last error.
void okOr(gdrResult_t rc, gdrComm_t comm) {
  if (rc != gdrSuccess) throw gdr::Error(rc, gdrGetLastError(comm));
}

}  // namespace

using gdr::api::checkComm;
using gdr::api::guarded;

extern "C" {

gdrResult_t gdrCommWindowRegister(gdrComm_t comm, void* buffer, size_t size, int flags,
                                  gdrWindow_t* win) {
  return guarded("gdrCommWindowRegister", comm, [&] {
    GDR_CHECK_ARG(win, "win (the output pointer) is NULL");
    *win = nullptr;
    gdr::Communicator& c = checkComm(comm);
    GDR_CHECK_ARG(buffer, "buffer is NULL");
    GDR_CHECK_ARG(size > 0, "size is 0");
    GDR_CHECK_ARG((flags & ~GDR_WIN_SYMMETRIC) == 0,
                  "flags 0x%x has bits other than GDR_WIN_SYMMETRIC (0x1)", flags);
    gdrRegHandle_t reg = nullptr;
    okOr(gdrCommRegister(comm, buffer, size, &reg), comm);
    uint64_t id = 0;
    if (flags & GDR_WIN_SYMMETRIC) {
      try {
        id = gdr::paths::registerDeviceWindow(c, buffer, size);  // collective
      } catch (...) {
        gdrCommDeregister(comm, reg);
        throw;
      }
    }
    auto w = new gdrWindow{comm, reg, id};
    std::lock_guard<std::mutex> g(gMu);
    windows().insert(w);
    *win = w;
  });
}

gdrResult_t gdrCommWindowDeregister(gdrComm_t comm, gdrWindow_t win) {
  return guarded("gdrCommWindowDeregister", comm, [&] {
    gdr::Communicator& c = checkComm(comm);
    GDR_CHECK_ARG(win, "win is NULL");
    {
      std::lock_guard<std::mutex> g(gMu);
      GDR_CHECK_ARG(windows().count(win),
                    "win %p was already deregistered or never returned by gdrCommWindowRegister",
                    static_cast<void*>(win));
      GDR_CHECK_ARG(win->comm == comm, "win %p belongs to another communicator",
                    static_cast<void*>(win));
      windows().erase(win);
    }
    std::unique_ptr<gdrWindow> w(win);
    gdr::paths::deregisterDeviceWindow(c, w->deviceId);
    okOr(gdrCommDeregister(comm, w->reg), comm);
  });
}

}  // extern "C"
