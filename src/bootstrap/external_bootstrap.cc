// The adapter for a bootstrap the caller brings (gdrBootstrap_t: its own
// MPI, PMIx or anything that can all-gather bytes). gdrcoll_mpi.h builds its
// gdrCommInitMPI on it, so the library itself never links MPI. The
// callbacks run only while the communicator is created, on that thread.
#include <cstring>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "core/error.h"
#include "security/crypto.h"

namespace gdr::boot {

namespace {

class ExternalBootstrap final : public Bootstrap {
 public:
  explicit ExternalBootstrap(const gdrBootstrap_t& ops) : ops_(ops) {
    name_ = ops.name && *ops.name ? ops.name : "external";
    if (ops.error) throw InvalidUsage(ops.error);
    if (!ops.allgather || !ops.barrier)
      throw InvalidArgument("the bootstrap's allgather or barrier is NULL");
    if (ops.size <= 0 || ops.rank < 0 || ops.rank >= ops.size)
      throw InvalidArgument(strprintf("the bootstrap says rank %d of %d", ops.rank, ops.size));
    spreadSecret();
  }
  ~ExternalBootstrap() override { security::wipe(&secret_, sizeof(secret_)); }
  const char* name() const override { return name_.c_str(); }
  int rank() const override { return ops_.rank; }
  int size() const override { return ops_.size; }
  void allgather(void* data, size_t bytesPerRank) override {
    if (ops_.allgather)
      check(ops_.allgather(ops_.ctx, data, bytesPerRank), "allgather");
    else
      throw InternalError("the caller's bootstrap is used after set-up");
  }
  void barrier() override {
    if (ops_.barrier)
      check(ops_.barrier(ops_.ctx), "barrier");
    else
      throw InternalError("the caller's bootstrap is used after set-up");
  }
  const security::JobSecret& jobSecret() const override { return secret_; }
  // The caller's callbacks are valid only during the init call.
  void setUpDone() override {
    ops_.allgather = nullptr;
    ops_.barrier = nullptr;
  }

 private:
  void check(int rc, const char* what) const {
    if (rc == 0) return;
    char text[256] = "";
    if (ops_.errorString) ops_.errorString(ops_.ctx, rc, text, sizeof(text));
    text[sizeof(text) - 1] = '\0';
    throw RemoteError(strprintf("the %s bootstrap's %s failed (code %d%s%s)", name_.c_str(), what,
                                rc, *text ? ": " : "", text));
  }

  // Rank 0 draws the job's secret and id and spreads them through the
  // caller's channel (never over a gdrcoll socket). Under GDR_AUTH_KEY_FILE
  // at rank 0 only the id travels and every rank reads the key from its file.
  void spreadSecret() {
    uint8_t fileKey[security::kKeyBytes];
    const bool haveFile = security::keyFromFile(fileKey);
    struct Msg {
      security::JobSecret secret;
      uint32_t fromFile;
    };
    std::vector<Msg> all(static_cast<size_t>(ops_.size));
    std::memset(all.data(), 0, all.size() * sizeof(Msg));
    if (ops_.rank == 0) {
      all[0].secret = security::generateJobSecret();
      all[0].fromFile = haveFile ? 1 : 0;
      if (haveFile) security::wipe(all[0].secret.key, sizeof(all[0].secret.key));
    }
    int rc = ops_.allgather(ops_.ctx, all.data(), sizeof(Msg));
    secret_ = all[0].secret;
    const bool rootFromFile = all[0].fromFile != 0;
    security::wipe(all.data(), all.size() * sizeof(Msg));
    if (haveFile) std::memcpy(secret_.key, fileKey, sizeof(fileKey));
    security::wipe(fileKey, sizeof(fileKey));
    check(rc, "allgather of the job secret");
    if (rootFromFile && !haveFile)
      throw InvalidArgument(
          "rank 0 reads the job key from GDR_AUTH_KEY_FILE; set it on every rank too");
  }

  gdrBootstrap_t ops_;
  std::string name_;
  security::JobSecret secret_{};
};

}  // namespace

std::unique_ptr<Bootstrap> makeExternalBootstrap(const gdrBootstrap_t& ops) {
  return std::make_unique<ExternalBootstrap>(ops);
}

}  // namespace gdr::boot
