#include <mpi.h>

#include <cstring>

#include "bootstrap/bootstrap.h"
#include "core/error.h"
#include "security/crypto.h"

namespace gdr::boot {

namespace {

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw RemoteError(strprintf("%s failed in the MPI bootstrap: %.*s", what, len, text));
}

class MpiBootstrap final : public Bootstrap {
 public:
  explicit MpiBootstrap(MPI_Comm user) {
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) throw InvalidUsage("gdrCommInitMPI called before MPI_Init");
    check(MPI_Comm_dup(user, &comm_), "MPI_Comm_dup");
    // Errors come back as codes so we can report them, not abort the job.
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    spreadSecret();
  }
  ~MpiBootstrap() override {
    security::wipe(&secret_, sizeof(secret_));
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
  }
  const char* name() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void allgather(void* data, size_t bytesPerRank) override {
    if (bytesPerRank > static_cast<size_t>(INT32_MAX)) throw InternalError("bootstrap piece too large");
    check(MPI_Allgather(MPI_IN_PLACE, 0, MPI_BYTE, data, static_cast<int>(bytesPerRank), MPI_BYTE, comm_),
          "MPI_Allgather");
  }
  void barrier() override { check(MPI_Barrier(comm_), "MPI_Barrier"); }
  const security::JobSecret& jobSecret() const override { return secret_; }

 private:
  // Rank 0 draws the job's secret and id and spreads them through MPI (never
  // over a gdrcoll socket). Under GDR_AUTH_KEY_FILE at rank 0 only the id
  // travels and every rank reads the key from its file.
  void spreadSecret() {
    uint8_t fileKey[security::kKeyBytes];
    bool haveFile = security::keyFromFile(fileKey);
    struct {
      security::JobSecret secret;
      uint32_t fromFile;
    } msg{};
    if (rank_ == 0) {
      msg.secret = security::generateJobSecret();
      msg.fromFile = haveFile ? 1 : 0;
      if (haveFile) security::wipe(msg.secret.key, sizeof(msg.secret.key));
    }
    int rc = MPI_Bcast(&msg, sizeof(msg), MPI_BYTE, 0, comm_);
    secret_ = msg.secret;
    bool rootFromFile = msg.fromFile != 0;
    security::wipe(&msg, sizeof(msg));
    if (haveFile) std::memcpy(secret_.key, fileKey, sizeof(fileKey));
    security::wipe(fileKey, sizeof(fileKey));
    check(rc, "MPI_Bcast of the job secret");
    if (rootFromFile && !haveFile)
      throw InvalidArgument("rank 0 reads the job key from GDR_AUTH_KEY_FILE; set it on every rank too");
  }

  security::JobSecret secret_{};
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

std::unique_ptr<Bootstrap> makeMpiBootstrap(const void* mpiComm) {
  return std::make_unique<MpiBootstrap>(*static_cast<const MPI_Comm*>(mpiComm));
}

}  // namespace gdr::boot
