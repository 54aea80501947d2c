// LD_PRELOAD guard: a getenv of a GDR_ or NCCL_ name on one of the
// library's own threads (named "gdr/...", core/lib_thread.h) ends the
// process with status 86 and names the variable and the thread. Such a
// read races with a program's setenv (glibc may free the array getenv
// walks); the library's threads read the snapshot their creator took.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

char* getenv(const char* name) {
  static char* (*real)(const char*);
  if (!real) real = (char* (*)(const char*))dlsym(RTLD_NEXT, "getenv");
  if (name && (!strncmp(name, "GDR_", 4) || !strncmp(name, "NCCL_", 5))) {
    char thread[16] = {0};
    if (pthread_getname_np(pthread_self(), thread, sizeof(thread)) == 0 &&
        !strncmp(thread, "gdr/", 4)) {
      fprintf(stderr, "getenv-guard: the library's thread %s read %s from the environment\n",
              thread, name);
      _exit(86);
    }
  }
  return real(name);
}
