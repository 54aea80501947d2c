// The guard's own check: a thread named "gdr/selftest" reads GDR_SELFTEST;
// with the guard preloaded the process must end with status 86.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>

static void* reader(void* arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "gdr/selftest");
  return getenv("GDR_SELFTEST");
}

int main(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, reader, NULL) != 0) return 2;
  pthread_join(t, NULL);
  return 0;  // reached only without the guard
}
