// Does work on other streams complete while one stream of the process sits
// in a stream wait (cuStreamWaitValue32 on a host-mapped word nobody has
// written yet)? The GPUDirect path's GDR_DIRECT_ORDER=flags hangs on the
// H200 machine, and the hypothesis is that the transport's CUDA copies (on a
// non-blocking stream of its own thread) queue behind such a wait: streams
// share a limited number of hardware queues (CUDA_DEVICE_MAX_CONNECTIONS,
// 8 by default), so a stream mapped onto the waiting one's queue is blocked
// until the wait ends.
//
// One process, every wait bounded: stream W waits for the word; then, one
// new non-blocking stream at a time (16 of them, normal priority, then 8 at
// the greatest priority), a device-to-device copy, a host-to-device copy
// from pinned memory and a small kernel, each polled for 300 ms: "done" or
// "BLOCKED". Then the host writes the word and everything must drain
// within 3 s. Run it with and without CUDA_DEVICE_MAX_CONNECTIONS set.
// --fork: the same question across processes sharing the GPU (time-sliced
// contexts, as the test's ranks are): a child forked before any CUDA call
// makes the copies and the kernel in its own context while the parent's
// stream waits.
// --preload: the kernel is loaded (cudaFuncGetAttributes) before the wait.
// On the H200 (session 10) the plain run blocked the host within its first
// stream, before any line came out, most likely at the kernel's first
// launch: under lazy module loading a kernel's loading can wait for the
// context to synchronize, which a pending stream wait never lets happen.
//   wait_probe [--fork] [--preload]
#include <cuda.h>
#include <cuda_runtime.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#define CK(x)                                             \
  do {                                                    \
    cudaError_t e = (x);                                  \
    if (e != cudaSuccess) {                               \
      std::printf("%s: %s\n", #x, cudaGetErrorString(e)); \
      std::exit(1);                                       \
    }                                                     \
  } while (0)

__global__ void touch(int* p) { p[threadIdx.x] += 1; }

using Clock = std::chrono::steady_clock;

// True when the stream drained within `ms`.
bool drains(cudaStream_t s, int ms) {
  const auto t0 = Clock::now();
  while (std::chrono::duration<double, std::milli>(Clock::now() - t0).count() < ms) {
    cudaError_t rc = cudaStreamQuery(s);
    if (rc == cudaSuccess) return true;
    if (rc != cudaErrorNotReady) {
      std::printf("cudaStreamQuery: %s\n", cudaGetErrorString(rc));
      std::exit(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

// What each probe queues: 1 MiB copies device to device and pinned host to
// device, and a small kernel, on a stream of its own.
struct Work {
  static constexpr size_t kBytes = 1 << 20;
  char *a = nullptr, *b = nullptr, *h = nullptr;
  int* k = nullptr;
};
const char* const kKinds[3] = {"d2d copy", "h2d copy", "kernel"};

Work makeWork() {
  Work w;
  CK(cudaMalloc(&w.a, Work::kBytes));
  CK(cudaMalloc(&w.b, Work::kBytes));
  CK(cudaMalloc(&w.k, 256 * sizeof(int)));
  CK(cudaHostAlloc(reinterpret_cast<void**>(&w.h), Work::kBytes, cudaHostAllocDefault));
  return w;
}

void queue(const Work& w, int kind, cudaStream_t s) {
  if (kind == 0) CK(cudaMemcpyAsync(w.b, w.a, Work::kBytes, cudaMemcpyDeviceToDevice, s));
  if (kind == 1) CK(cudaMemcpyAsync(w.a, w.h, Work::kBytes, cudaMemcpyHostToDevice, s));
  if (kind == 2) touch<<<1, 256, 0, s>>>(w.k);
}

// The child of --fork: its own context, its own buffers and streams.
int child(int ready) {
  char c = 0;
  if (read(ready, &c, 1) != 1) return 4;  // the parent's stream waits from now on
  CK(cudaSetDevice(0));
  const Work work = makeWork();
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int blocked = 0;
  for (int kind = 0; kind < 3; ++kind) {
    queue(work, kind, s);
    const bool ok = drains(s, 2000);
    blocked += !ok;
    std::printf("other process: %s %s\n", kKinds[kind], ok ? "done" : "BLOCKED (2 s)");
    std::fflush(stdout);
    if (!ok) break;
  }
  return blocked ? 3 : 0;
}

int main(int argc, char** argv) {
  // Unbuffered: a call that blocks the host gets the probe killed, and
  // the lines up to it must survive.
  setvbuf(stdout, nullptr, _IONBF, 0);
  bool forked = false, preload = false;
  for (int i = 1; i < argc; ++i) {
    forked |= std::strcmp(argv[i], "--fork") == 0;
    preload |= std::strcmp(argv[i], "--preload") == 0;
  }
  pid_t pid = -1;
  int ready[2] = {-1, -1};
  if (forked) {
    if (pipe(ready) != 0) return 1;
    std::fflush(stdout);
    pid = fork();  // before any CUDA call
    if (pid == 0) _exit(child(ready[0]));
  }
  const char* conn = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  std::printf("CUDA_DEVICE_MAX_CONNECTIONS=%s\n", conn ? conn : "(unset)");
  CK(cudaSetDevice(0));
  int lo = 0, hi = 0;
  CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
  uint32_t* word = nullptr;
  CK(cudaHostAlloc(reinterpret_cast<void**>(&word), 4,
                   cudaHostAllocMapped | cudaHostAllocPortable));
  *word = 0;
  void* wordDev = nullptr;
  CK(cudaHostGetDevicePointer(&wordDev, word, 0));
  const Work work = makeWork();
  CK(cudaDeviceSynchronize());
  if (preload) {  // the kernel loaded now, not at its first launch (lazy module loading)
    cudaFuncAttributes attr;
    CK(cudaFuncGetAttributes(&attr, touch));
    std::printf("touch loaded before the wait (--preload)\n");
  }
  cudaStream_t w;
  CK(cudaStreamCreateWithFlags(&w, cudaStreamNonBlocking));
  CUresult cr =
      cuStreamWaitValue32(reinterpret_cast<CUstream>(w), reinterpret_cast<CUdeviceptr>(wordDev), 1,
                          CU_STREAM_WAIT_VALUE_GEQ);
  if (cr != CUDA_SUCCESS) {
    std::printf("cuStreamWaitValue32: %d\n", static_cast<int>(cr));
    return 1;
  }
  std::printf("stream W waits for the word (drained: %s)\n",
              drains(w, 100) ? "yes?!" : "no, as it should");
  if (forked) {
    if (write(ready[1], "g", 1) != 1) return 1;
    int st = 0;
    bool exited = false;
    for (int i = 0; i < 200 && !exited; ++i) {  // 20 s at most
      exited = waitpid(pid, &st, WNOHANG) == pid;
      if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::printf("the other process %s\n", !exited ? "is still stuck after 20 s (killed)"
                                          : WIFEXITED(st) && WEXITSTATUS(st) == 0
                                              ? "finished its work"
                                              : "was blocked");
    __atomic_store_n(word, 1u, __ATOMIC_RELEASE);
    if (!exited) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
    }
    const bool drained = drains(w, 3000);
    std::printf("after the word was written: %s\n", drained ? "everything drained" : "STILL STUCK");
    return drained ? 0 : 2;
  }
  std::vector<cudaStream_t> all;
  int blocked[3] = {0, 0, 0}, tried = 0;
  for (int pass = 0; pass < 2; ++pass) {
    const int count = pass == 0 ? 16 : 8;
    for (int i = 0; i < count; ++i) {
      std::printf("stream %2d (%s priority):", static_cast<int>(all.size()),
                  pass ? "greatest" : "normal");
      for (int kind = 0; kind < 3; ++kind) {
        cudaStream_t s;
        CK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, pass ? hi : lo));
        all.push_back(s);
        std::printf("  %s:", kKinds[kind]);  // before a call that may block the host
        queue(work, kind, s);
        const bool ok = drains(s, 300);
        if (!ok) ++blocked[kind];
        std::printf(" %s", ok ? "done" : "BLOCKED");
      }
      ++tried;
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  std::printf("blocked behind the wait, of %d streams each: d2d copy %d, h2d copy %d, kernel %d\n",
              tried, blocked[0], blocked[1], blocked[2]);
  __atomic_store_n(word, 1u, __ATOMIC_RELEASE);
  bool drained = drains(w, 3000);
  for (cudaStream_t s : all) drained = drains(s, 3000) && drained;
  std::printf("after the word was written: %s\n", drained ? "everything drained" : "STILL STUCK");
  return drained ? 0 : 2;
}
