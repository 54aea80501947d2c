// What one turn costs where ranks outnumber cores: two processes hand a
// shared word back and forth, each waiting with sched_yield as gdrcoll's
// ranks do when oversubscribed (GDR_SPIN_BEFORE_YIELD 0). Pinned to one
// CPU, every hand-off is a switch to the other process; on two CPUs it is a
// cache-line transfer. Prints the time per hand-off and yields per hand-off.
//
//   cc -O2 -o handoff scripts/sim/handoff.c && ./handoff CPU_A CPU_B HANDOFFS
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double nowUs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s CPU_A CPU_B HANDOFFS\n", argv[0]);
    return 2;
  }
  const int cpuA = atoi(argv[1]), cpuB = atoi(argv[2]);
  const long n = atol(argv[3]);
  if (n <= 0) {
    fprintf(stderr, "handoff: HANDOFFS must be positive\n");
    return 2;
  }
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpuA < 0 || cpuB < 0 || cpuA >= cpus || cpuB >= cpus) {
    fprintf(stderr, "handoff: CPUs must be in [0, %ld)\n", cpus);
    return 2;
  }
  atomic_long* word = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (word == MAP_FAILED) {
    perror("handoff: mmap");
    return 1;
  }
  atomic_store(word, 0);
  const pid_t child = fork();
  if (child < 0) {
    perror("handoff: fork");
    return 1;
  }
  const int me = child == 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(me ? cpuB : cpuA, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    perror("handoff: sched_setaffinity");
    return 1;
  }
  long yields = 0;
  const double t0 = nowUs();
  for (long i = 0; i < n; ++i) {
    const long mine = 2 * i + me;
    while (atomic_load(word) != mine) {
      sched_yield();
      // The other process gone (killed, or failed to pin): stop waiting.
      if (++yields % 65536 == 0 && (me ? getppid() == 1 : waitpid(child, NULL, WNOHANG) == child)) {
        fprintf(stderr, "handoff: the other process exited\n");
        return 1;
      }
    }
    atomic_store(word, mine + 1);
  }
  const double t1 = nowUs();
  if (me) return 0;
  int status = 0;
  waitpid(child, &status, 0);
  printf("cpus %d,%d: %.3f us per hand-off, %.2f yields per hand-off\n", cpuA, cpuB, (t1 - t0) / (2.0 * n),
         (double)yields / n);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
