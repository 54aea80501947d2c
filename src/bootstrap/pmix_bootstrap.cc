// PMIx bootstrap: rank, size and local rank from the PMIx server that
// launched the process (Open MPI's mpirun, Slurm's srun --mpi=pmix), and the
// exchange through PMIx's key-value store: each rank puts its piece under a
// key unique to this communicator and step, commits, and a fence that
// collects data makes every piece readable everywhere. Rank 0's job secret
// travels the same way (the PMIx server is the out-of-band channel, as MPI is
// for the MPI bootstrap); under GDR_AUTH_KEY_FILE only the job id does.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bootstrap/bootstrap.h"
#include "bootstrap/pmix_api.h"
#include "core/error.h"
#include "core/log.h"
#include "core/params.h"
#include "security/crypto.h"

namespace gdr::boot {

namespace {

std::atomic<int> gInstances{
    0};  // communicators made in this process, in the same order on every rank

void setKey(char* dst, size_t cap, const char* key) { std::snprintf(dst, cap, "%s", key); }

class PmixBootstrap final : public Bootstrap {
 public:
  PmixBootstrap() : api_(pmixApi()), instance_(gInstances.fetch_add(1)) {
    check(api_.init(&me_, nullptr, 0), "PMIx_Init");
    inited_ = true;
    try {
      pmix_proc_t job = wildcard();
      size_ = static_cast<int>(getUint(&job, PMIX_JOB_SIZE, PMIX_UINT32));
      rank_ = static_cast<int>(me_.rank);
      localRank_ = static_cast<int>(getUint(&me_, PMIX_LOCAL_RANK, PMIX_UINT16));
      if (size_ < 1 || rank_ >= size_)
        throw RemoteError(strprintf("PMIx says rank %d of %d", rank_, size_));
      spreadSecret();
    } catch (...) {
      api_.finalize(nullptr, 0);
      throw;
    }
    GDR_INFO(kBoot, "PMIx namespace %s: rank %d of %d, local rank %d", me_.nspace, rank_, size_,
             localRank_);
  }
  ~PmixBootstrap() override {
    security::wipe(&secret_, sizeof(secret_));
    if (inited_) api_.finalize(nullptr, 0);
  }
  const char* name() const override { return "pmix"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int localRank() const override { return localRank_; }
  const security::JobSecret& jobSecret() const override { return secret_; }

  void allgather(void* data, size_t bytesPerRank) override {
    char* base = static_cast<char*>(data);
    const std::string key = nextKey();
    put(key, base + rank_ * bytesPerRank, bytesPerRank);
    fence(true);
    for (int r = 0; r < size_; ++r)
      if (r != rank_) getBytes(r, key, base + r * bytesPerRank, bytesPerRank);
  }
  void barrier() override { fence(false); }

 private:
  void check(pmix_status_t rc, const char* what) const {
    if (rc == PMIX_SUCCESS) return;
    std::string text = strprintf("%s failed in the PMIx bootstrap: %s", what, api_.errorString(rc));
    if (rc == PMIX_ERR_TIMEOUT)
      throw TimeoutError(text + " (GDR_TIMEOUT_MS; did every rank start?)");
    throw RemoteError(text);
  }
  pmix_proc_t wildcard() const {
    pmix_proc_t p;
    std::memset(&p, 0, sizeof(p));
    std::memcpy(p.nspace, me_.nspace, sizeof(p.nspace));
    p.rank = PMIX_RANK_WILDCARD;
    return p;
  }
  std::string nextKey() { return strprintf("gdrcoll.%d.%d", instance_, step_++); }

  // PMIX_TIMEOUT is whole seconds; at least one.
  void setTimeout(pmix_info_t* info) const {
    setKey(info->key, sizeof(info->key), PMIX_TIMEOUT);
    info->value.type = PMIX_INT;
    info->value.data.integer = static_cast<int>((param::getInt("GDR_TIMEOUT_MS") + 999) / 1000);
  }

  uint32_t getUint(const pmix_proc_t* proc, const char* key, pmix_data_type_t type) {
    pmix_value_t* v = nullptr;
    check(api_.get(proc, key, nullptr, 0, &v), key);
    uint32_t out = 0;
    bool ok = v && v->type == type;
    if (ok) out = type == PMIX_UINT16 ? v->data.uint16 : v->data.uint32;
    release(v);
    if (!ok) throw RemoteError(strprintf("PMIx returned %s of an unexpected type", key));
    return out;
  }
  void release(pmix_value_t* v) const {
    if (!v) return;
    api_.valueDestruct(v);
    std::free(v);
  }

  void put(const std::string& key, const void* bytes, size_t n) {
    pmix_value_t v;
    std::memset(&v, 0, sizeof(v));
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = static_cast<char*>(const_cast<void*>(bytes));
    v.data.bo.size = n;
    check(api_.put(PMIX_GLOBAL, key.c_str(), &v), "PMIx_Put");
    check(api_.commit(), "PMIx_Commit");
  }
  void fence(bool collect) {
    pmix_info_t info[2];
    std::memset(info, 0, sizeof(info));
    setTimeout(&info[0]);
    setKey(info[1].key, sizeof(info[1].key), PMIX_COLLECT_DATA);
    info[1].value.type = PMIX_BOOL;
    info[1].value.data.flag = collect;
    pmix_proc_t job = wildcard();
    check(api_.fence(&job, 1, info, 2), collect ? "PMIx_Fence (collecting data)" : "PMIx_Fence");
  }
  void getBytes(int from, const std::string& key, void* out, size_t n) {
    pmix_proc_t p = wildcard();
    p.rank = static_cast<pmix_rank_t>(from);
    pmix_info_t info;
    std::memset(&info, 0, sizeof(info));
    setTimeout(&info);
    pmix_value_t* v = nullptr;
    check(api_.get(&p, key.c_str(), &info, 1, &v),
          strprintf("PMIx_Get of rank %d's %s", from, key.c_str()).c_str());
    bool ok = v && v->type == PMIX_BYTE_OBJECT && v->data.bo.size == n;
    if (ok) std::memcpy(out, v->data.bo.bytes, n);
    if (v && v->type == PMIX_BYTE_OBJECT && v->data.bo.bytes)
      security::wipe(v->data.bo.bytes, v->data.bo.size);
    release(v);
    if (!ok)
      throw RemoteError(
          strprintf("rank %d's %s through PMIx has the wrong size", from, key.c_str()));
  }

  // Rank 0 draws the job's secret and id; every rank reads them from rank 0's
  // key. Under GDR_AUTH_KEY_FILE at rank 0 the key stays out of PMIx and every
  // rank must read it from its own file.
  void spreadSecret() {
    struct {
      security::JobSecret secret;
      uint32_t fromFile;
    } msg{};
    uint8_t fileKey[security::kKeyBytes];
    const bool haveFile = security::keyFromFile(fileKey);
    const std::string key = nextKey();
    if (rank_ == 0) {
      msg.secret = security::generateJobSecret();
      msg.fromFile = haveFile ? 1 : 0;
      if (haveFile) security::wipe(msg.secret.key, sizeof(msg.secret.key));
      put(key, &msg, sizeof(msg));
    }
    fence(true);
    try {
      if (rank_ != 0) getBytes(0, key, &msg, sizeof(msg));
    } catch (...) {
      security::wipe(fileKey, sizeof(fileKey));
      throw;
    }
    secret_ = msg.secret;
    const bool rootFromFile = msg.fromFile != 0;
    security::wipe(&msg, sizeof(msg));
    if (haveFile) std::memcpy(secret_.key, fileKey, sizeof(fileKey));
    security::wipe(fileKey, sizeof(fileKey));
    if (rootFromFile && !haveFile)
      throw InvalidArgument(
          "rank 0 reads the job key from GDR_AUTH_KEY_FILE; set it on every rank too");
  }

  const PmixApi& api_;
  const int instance_;
  int step_ = 0;
  bool inited_ = false;
  pmix_proc_t me_{};
  int rank_ = 0, size_ = 1, localRank_ = -1;
  security::JobSecret secret_{};
};

}  // namespace

std::unique_ptr<Bootstrap> makePmixBootstrap() { return std::make_unique<PmixBootstrap>(); }

}  // namespace gdr::boot
