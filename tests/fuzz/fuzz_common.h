// Shared bits of the libFuzzer targets (each is one translation unit that
// includes this once): quiet logging and crypto on the calling thread
// (deterministic runs) set up in LLVMFuzzerInitialize, fixed key material,
// and a socketpair whose far end has already written the input and hung up,
// so every read ends in data or EOF, never a wait.
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace gdr::fuzz {

// Key bytes i * mul + add: fixed, distinct per use.
inline void pattern(uint8_t* p, size_t n, unsigned mul, unsigned add) {
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(i * mul + add);
}

// fd[0]: ours, holding `n` bytes to read, then EOF. fd[1]: closed for
// writing, still open so what we send back has somewhere to go.
struct FedSocket {
  int fd[2] = {-1, -1};
  FedSocket(const uint8_t* data, size_t n) {
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, fd) != 0) abort();
    int big = 1 << 20;
    setsockopt(fd[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
    setsockopt(fd[0], SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
    size_t off = 0;
    while (off < n) {
      ssize_t w = write(fd[1], data + off, n - off);
      if (w <= 0) abort();  // the harness keeps inputs below the socket buffer
      off += static_cast<size_t>(w);
    }
    shutdown(fd[1], SHUT_WR);
  }
  ~FedSocket() {
    if (fd[0] >= 0) close(fd[0]);
    if (fd[1] >= 0) close(fd[1]);
  }
  // Hands our end to an owner that closes it.
  int release() {
    int f = fd[0];
    fd[0] = -1;
    return f;
  }
};

constexpr size_t kMaxInput = 256 * 1024;

}  // namespace gdr::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("GDR_DEBUG", "NONE", 1);
  setenv("GDR_ENCRYPT_THREADS", "0", 1);
  setenv("GDR_AUTH_TIMEOUT_MS", "200", 1);
  return 0;
}
