// gdr-allreduce-loop: all-reduces in a loop until one fails, for the link
// cut test. The communicator comes from gdrCommInitFromEnv. Each rank writes
// DIR/ready.RANK after its first success and, when a call fails, DIR/result.RANK
// holding the wall-clock time of the failure in milliseconds and the error
// text; then it exits 3. Exits 4 if nothing failed within SECONDS.
//   gdr-allreduce-loop DIR SECONDS
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gdrcoll.h"

namespace {

long long wallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void writeFile(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) return;
  std::fputs(text.c_str(), f);
  std::fclose(f);
  std::rename(tmp.c_str(), path.c_str());  // readers never see half a file
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: gdr-allreduce-loop DIR SECONDS\n");
    return 2;
  }
  const std::string dir = argv[1];
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(std::atoi(argv[2]));
  gdrComm_t comm = nullptr;
  if (gdrCommInitFromEnv(&comm) != gdrSuccess) {
    std::fprintf(stderr, "gdr-allreduce-loop: %s\n", gdrGetLastError(nullptr));
    return 2;
  }
  int rank = 0, n = 1;
  gdrCommRank(comm, &rank);
  gdrCommSize(comm, &n);
  std::vector<float> in(16384, 1.0f), out(16384);
  for (long iter = 0; std::chrono::steady_clock::now() < end; ++iter) {
    gdrResult_t rc =
        gdrAllReduce(in.data(), out.data(), in.size(), gdrFloat32, gdrSum, comm, nullptr);
    if (rc != gdrSuccess) {
      writeFile(dir + "/result." + std::to_string(rank),
                std::to_string(wallMs()) + " after " + std::to_string(iter) +
                    " all-reduces: " + gdrGetErrorString(rc) + ": " + gdrGetLastError(comm) + "\n");
      gdrCommAbort(comm);
      return 3;
    }
    if (out[0] != static_cast<float>(n)) {
      std::fprintf(stderr, "rank %d: wrong sum %g\n", rank, out[0]);
      return 5;
    }
    if (iter == 0) writeFile(dir + "/ready." + std::to_string(rank), "\n");
  }
  gdrCommDestroy(comm);
  return 4;
}
