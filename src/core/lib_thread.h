// The library's own threads. Each is named "gdr/<what>" (a slash: no program's name has one) (for
// top, gdb and the test that no library thread reads the environment), and reads every GDR_*
// parameter as the thread that started it saw them: it never calls getenv, which a program's setenv
// on another thread may break.
#pragma once

#include <pthread.h>

#include <string>
#include <thread>
#include <utility>

#include "core/params.h"

namespace gdr {

template <class F>
std::thread libThread(const char* what, F&& f) {
  std::string name = std::string("gdr/") + what;
  if (name.size() > 15) name.resize(15);  // the kernel keeps 15 characters
  return std::thread(
      [env = param::snapshot(), name = std::move(name), f = std::forward<F>(f)]() mutable {
        pthread_setname_np(pthread_self(), name.c_str());
        param::UseSnapshot use(std::move(env));
        f();
      });
}

}  // namespace gdr
